"""The `trajscope` command: a click group whose subcommands live one per module and load lazily."""
from __future__ import annotations

import importlib

import click

# name -> module defining `command` (a click.Command). Lazy, so `trajscope --help` stays fast
# and a heavy import (torch, streamlit) happens only for the command that needs it.
COMMANDS: dict[str, tuple[str, str]] = {
    "schema": ("trajscope.cli.schema_cmd", "Print the JSON Schema of the canonical trajectory format."),
    "ingest": ("trajscope.cli.ingest_cmd", "Load trajectory logs (canonical or external) into the warehouse."),
    "sql": ("trajscope.cli.sql_cmd", "Run a read-only SQL query against the warehouse."),
    "export": ("trajscope.cli.export_cmd", "Export a view or query to CSV, Parquet, LaTeX or Markdown."),
    "export-traces": ("trajscope.cli.export_traces_cmd",
                      "Export a run's trajectories as OpenInference / OTel GenAI spans, ATIF or an Inspect log."),
    "bundle": ("trajscope.cli.bundle_cmd",
               "Write one finding (a query or runs compared) as a static, self-contained HTML file."),
    "lake": ("trajscope.cli.lake_cmd", "Export the warehouse as partitioned Parquet that many machines share."),
    "views": ("trajscope.cli.views_cmd", "List the warehouse's named views with their one-line descriptions."),
    "data": ("trajscope.cli.data_cmd", "Fetch, import and sample datasets."),
    "run": ("trajscope.cli.run_cmd", "Run an agent controller over a dataset and log every trajectory."),
    "fork": ("trajscope.cli.fork_cmd", "Fork a logged trajectory at a step, change one thing, run the rest."),
    "judge": ("trajscope.cli.judge_cmd", "Judge the answers of a run (EM, F1, Contain-Acc, LLM judge)."),
    "compare": ("trajscope.cli.compare_cmd", "Paired statistics between two runs on the same question ids."),
    "agreement": ("trajscope.cli.agreement_cmd", "Cohen's kappa between extractors and judges; pooled co-occurrence."),
    "audit": ("trajscope.cli.audit_cmd", "Run the answer-presence intervention audit."),
    "audit-report": ("trajscope.cli.audit_report_cmd", "Print the answer-presence audit tables."),
    "report": ("trajscope.cli.report_cmd", "Print a paper's tables (read-gate, execution-rag, audit) from logs."),
    "scan": ("trajscope.cli.scan_cmd", "Ask a model whether each trajectory of a slice matches a rubric."),
    "attribute": ("trajscope.cli.attribute_cmd", "Ask a model for the decisive error step (Who&When protocols)."),
    "cluster": ("trajscope.cli.cluster_cmd", "Cluster a slice into failure modes (model themes or embeddings)."),
    "app": ("trajscope.cli.app_cmd", "Serve the dashboard on 127.0.0.1."),
    "demo": ("trajscope.cli.demo_cmd", "Build the demo warehouse with the embedded model and open the dashboard."),
}


class WarehouseUnusable(click.ClickException):
    """One line for a --db that is not a usable warehouse, with its own exit status (docs/security.md)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code  # type: ignore[misc]  # the stub's ClassVar; click reads the instance's


def _printable(message: str) -> str:
    """An error message as printed: keys redacted, control characters shown as escapes."""
    from trajscope.format import redact, terminal_text

    return terminal_text(redact(message))


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    return text.splitlines()[0] if text else type(exc).__name__


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when that subcommand runs."""

    def invoke(self, ctx: click.Context):
        # Every command opens the warehouse through warehouse.open_warehouse / open_read, whose file
        # errors carry an exit_code: any a command does not handle itself becomes one line here.
        try:
            return self._invoke(ctx)
        except click.ClickException as exc:  # every error message is printed redacted and neutralised
            exc.message = _printable(exc.message)  # type: ignore[misc]  # the stub's Final; click prints it
            raise

    def _invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            cause = exc.__cause__ or exc.__context__
            code = getattr(cause, "exit_code", None)
            if isinstance(code, int) and not isinstance(cause, click.ClickException) and exc.exit_code == 1:
                exc.exit_code = code  # type: ignore[misc]  # the stub's ClassVar; click reads the instance's
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            code = getattr(exc, "exit_code", None)
            if isinstance(code, int) and not isinstance(exc, click.exceptions.Exit):
                raise WarehouseUnusable(_one_line(exc), code) from None
            if type(exc).__module__.startswith(("duckdb", "_duckdb")) and _corrupt(exc):
                raise WarehouseUnusable(f"the warehouse file is corrupt ({_one_line(exc)}); a warehouse holds "
                                        "nothing its logs lack: rebuild it by ingesting them into a new "
                                        "file (trajscope ingest LOG... --db NEW.duckdb)", 3) from None
            raise

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        return importlib.import_module(COMMANDS[name][0]).command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, help_text) in COMMANDS.items()])


def _corrupt(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "checksum" in text or "corrupt" in text


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="trajscope")
def main() -> None:
    """trajscope: a forensic workbench for agentic RAG trajectories.

    Typical flow: `trajscope run` (or `trajscope ingest` an external log) -> `trajscope judge`
    -> `trajscope compare` / `trajscope app`. The warehouse defaults to ./trajscope.duckdb
    (or $TRAJSCOPE_DB).
    """


__all__ = ["main", "COMMANDS"]
