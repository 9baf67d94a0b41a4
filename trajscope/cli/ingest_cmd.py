"""`trajscope ingest`: canonical logs and external logs into the warehouse, all or nothing."""
from __future__ import annotations

import tempfile
from pathlib import Path

import click

from trajscope.format import RecordError, encode, looks_canonical

from ._options import db_option


def _convert_external(path: Path, fmt: str | None, mapping: str | None, questions: str | None,
                      tool_map: str | None, run_id: str | None, out_dir: str) -> Path:
    # Importers stream canonical records; they land in a temporary canonical log, so an external
    # file goes through exactly the same validation and atomic load as the engine's own logs.
    from ingest.importers import import_file, load_tool_map

    tool_table = load_tool_map(Path(tool_map)) if tool_map else None
    out = Path(out_dir) / (path.name + ".canonical.jsonl")
    with open(out, "wb") as fh:
        for trajectory in import_file(
            path, format=fmt, mapping=Path(mapping) if mapping else None,
            questions=Path(questions) if questions else None, tool_map=tool_table, run_id=run_id,
        ):
            fh.write(encode(trajectory) + b"\n")
    return out


@click.command("ingest")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@db_option
@click.option("--format", "fmt", default=None,
              help="Force a format (canonical, or an importer: see docs/importers.md); default: detected.")
@click.option("--mapping", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Declarative mapping file (YAML/JSON) for the generic JSONL importer.")
@click.option("--questions", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Companion question file joined to logs that lack questions (e.g. ReAct logs).")
@click.option("--tool-map", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML/JSON mapping of tool names to canonical actions, overriding the defaults.")
@click.option("--run-id", default=None, help="Run id for imported logs (default: derived from the file).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on for large files).")
@click.option("--on-duplicate", type=click.Choice(["last", "first"]), default=None,
              help="A file that holds one trajectory id twice with different content is refused; "
                   "keep its last or first copy instead. Identical repeats are always loaded once.")
@click.option("--per-run-questions", is_flag=True,
              help="Key every question by its run, so runs that disagree about a question's gold are "
                   "stored apart instead of refused (they then do not pair in compare).")
def command(files, db_path, fmt, mapping, questions, tool_map, run_id, progress, on_duplicate,
            per_run_questions) -> None:
    """Load trajectory logs into the warehouse.

    Canonical logs (one trajectory per line, see `trajscope schema`) load directly; other formats
    are detected and converted by the importers. Every file is validated first: one bad record
    anywhere and nothing is written, and the error names the file, line and field. Re-ingesting
    the same records adds nothing; a changed record replaces the old one entirely.
    """
    from warehouse import WarehouseBusy, ingest_paths

    with tempfile.TemporaryDirectory(prefix="trajscope-ingest-") as tmp:
        canonical: list[Path] = []
        try:
            for name in files:
                path = Path(name)
                if (fmt in (None, "canonical") and not mapping) and (fmt == "canonical" or looks_canonical(path)):
                    canonical.append(path)
                else:
                    canonical.append(_convert_external(path, fmt, mapping, questions, tool_map, run_id, tmp))
            report = ingest_paths(db_path, canonical, progress=progress, on_duplicate=on_duplicate,
                                  per_run_questions=per_run_questions)
        except RecordError as exc:
            raise click.ClickException(f"{exc}\nnothing was written to {db_path}") from None
        except WarehouseBusy as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"{db_path}: {report.summary()}")
