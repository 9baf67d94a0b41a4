"""`trajscope report`: a paper's tables from the warehouse, as LaTeX, Markdown or CSV."""

from __future__ import annotations

import csv
from pathlib import Path

import click

from ._options import read_failure, statistics_limits, timeout_option

PAPER_CHOICES = ("read-gate", "execution-rag", "audit")
FORMAT_CHOICES = ("latex", "markdown", "csv")
_TRUE, _FALSE = {"1", "true", "yes", "right"}, {"0", "false", "no", "wrong"}


def _run_ids(runs: tuple[str, ...], extra: tuple[str, ...], matrix: str | None) -> list[str]:
    ids = [part.strip() for value in (*runs, *extra) for part in value.split(",") if part.strip()]
    if matrix:
        from trajscope.engine.controllers import CONTROLLERS
        from trajscope.engine.runs import MatrixError, load_matrix

        try:
            specs = load_matrix(matrix)
        except MatrixError as exc:
            raise click.ClickException(str(exc)) from None
        for spec in specs:
            if spec.condition is None and spec.controller in CONTROLLERS:
                spec.condition = CONTROLLERS[spec.controller].default_condition
            ids.append(spec.resolved_run_id())
    return list(dict.fromkeys(ids))


def _human_labels(path: str | None) -> dict[tuple[str, str], bool]:
    if not path:
        return {}
    labels: dict[tuple[str, str], bool] = {}
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"run_id", "question_id", "human_right"} - set(reader.fieldnames or ())
        if missing:
            raise click.ClickException(f"{path}: line 1: missing column(s) {', '.join(sorted(missing))}")
        for line, row in enumerate(reader, start=2):
            value = (row["human_right"] or "").strip().lower()
            if value not in _TRUE | _FALSE:
                raise click.ClickException(
                    f"{path}: line {line}: field human_right: expected 1/0 or true/false, got {row['human_right']!r}"
                )
            labels[(row["run_id"], row["question_id"])] = value in _TRUE
    return labels


@click.command("report")
@click.argument("paper", type=click.Choice(PAPER_CHOICES))
@click.argument("more_runs", nargs=-1, metavar="[RUN]...")
@click.option(
    "--runs",
    multiple=True,
    metavar="RUN",
    help="Run id (repeatable, or comma-separated); for audit, audit ids (default: every audit record).",
)
@click.option("--matrix", type=click.Path(exists=True, dir_okay=False), help="Take the run ids of a run-matrix YAML.")
@click.option(
    "--by",
    type=click.Choice(["dataset", "none"]),
    default="dataset",
    show_default=True,
    help="Rows per dataset, as the papers print them, or pooled over datasets.",
)
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="markdown", show_default=True)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default=None,
    help="Write one file per table (and <paper>.tex, a compilable document, for LaTeX) into DIR.",
)
@click.option("--table", "tables", multiple=True, metavar="NAME", help="Only these tables (repeatable), e.g. rg_t4.")
@click.option(
    "--sweep", metavar="PARAM", help="Read-Gate Table 5: the run parameter swept (a runs column or config key)."
)
@click.option(
    "--human-labels",
    type=click.Path(exists=True, dir_okay=False),
    help="CSV run_id,question_id,human_right: human verdicts for the judge-error correction.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False),
    default=None,
    help="Warehouse (default $TRAJSCOPE_DB or ./trajscope.duckdb).",
)
@timeout_option
def command(
    paper: str,
    more_runs: tuple[str, ...],
    runs: tuple[str, ...],
    matrix: str | None,
    by: str,
    fmt: str,
    out: str | None,
    tables: tuple[str, ...],
    sweep: str | None,
    human_labels: str | None,
    db: str | None,
    timeout_s: float,
) -> None:
    """Print a paper's tables, filled from the warehouse, with the papers' rows, columns and captions.

    \b
    read-gate      T1 zero-read rescue, T2 gate vs context injection, T3 population delta,
                   T4 marginal and Mantel-Haenszel OR, T5 parameter sweep, §5.1 co-occurrence
                   with kappa, T17 strict prompt, T18 judge robustness, judge-error correction
    execution-rag  T1 main results, T2 ablations, T3-8 per category, T9-11 efficiency,
                   T12-15 failure analysis overall and by hop, the Pareto frontier
    audit          T1 causal delta, T2 sentinel panel, T3 pipeline F1 per suite, length-controlled
                   OLS, oracle headroom, question-blind containment, operator-by-reader

    A table whose input the runs lack says "does not apply" and why. Every table ends with a
    footnote: n, seeds, trajscope version and the warehouse file's sha256.

    \b
    Examples:
      trajscope report read-gate --runs base-hotpot --runs gate-hotpot --format latex --out tables/
      trajscope report execution-rag --matrix matrix.yaml --format markdown
      trajscope report audit --format csv
    """
    from trajscope.analysis.report import (
        EXTENSIONS,
        ReportError,
        latex_document,
        render,
        render_all,
        report_figures,
    )
    from trajscope.api import report_tables
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing, default_db_path
    from trajscope.warehouse.export import OutputRefused, write_output

    path = Path(db) if db else default_db_path()
    reading = [path, matrix, human_labels]
    run_ids = _run_ids(runs, more_runs, matrix)
    labels = _human_labels(human_labels)
    try:
        built = report_tables(path, paper, run_ids, limits=statistics_limits(timeout_s), by=by, sweep=sweep,
                              human_labels=labels, only=tables)
    except ReportError as exc:
        raise click.ClickException(str(exc)) from None
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
    if out is None:
        click.echo(render_all(built, fmt), nl=False)
        return
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputRefused(f"{folder}: cannot create this folder ({exc.strerror or exc})") from None
    # Each file through write_output: a table file that is a link to the warehouse is refused.
    for table in built:
        write_output(folder / f"{table.name}.{EXTENSIONS[fmt]}", render(table, fmt), db=path, reading=reading)
    if fmt == "latex":
        write_output(folder / f"{paper}.tex", latex_document(built, f"trajscope report: {paper}"), db=path,
                     reading=reading)
    figures = report_figures(built)
    if figures:
        import vl_convert

        for figure in figures:
            write_output(folder / f"{figure.name}.svg", vl_convert.vegalite_to_svg(figure.spec), db=path,
                         reading=reading)
            write_output(folder / f"{figure.name}.png", vl_convert.vegalite_to_png(figure.spec, scale=2), db=path,
                         reading=reading)
    click.echo(f"wrote {len(built)} table(s){f' and {len(figures)} figure(s)' if figures else ''} to {folder}")
