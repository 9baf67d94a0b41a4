"""`trajscope ingest`: any supported log into the warehouse, all or nothing, with an import report per file."""
from __future__ import annotations

import os

import click

from trajscope.api import INGEST_TMP_PREFIX  # noqa: F401 - the dashboard's uploads sweep the same folders
from trajscope.format import RecordError
from trajscope.ingest.importers import DATASET_HELP

from ._options import LakeLocation, db_option


@click.command("ingest")
@click.argument("files", nargs=-1, type=click.Path(exists=True))
@db_option
@click.option("--format", "fmt", default=None,
              help="Force a format (canonical, or an importer: see docs/importers.md); default: detected.")
@click.option("--mapping", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Declarative mapping file (YAML/JSON) for the generic JSONL importer.")
@click.option("--questions", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Companion question file joined to logs that lack questions (e.g. ReAct logs).")
@click.option("--tool-map", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML/JSON mapping of tool names to canonical actions, overriding the defaults.")
@click.option("--patterns", type=click.Path(exists=True, dir_okay=False), default=None,
              help="YAML file of regular expressions for text logs (episode start, trial banner, gold, verdict).")
@click.option("--declare", "declares", multiple=True, metavar="NAME=true|false",
              help="State a capability of the log, overriding what the importer inferred "
                   "(e.g. --declare read_action=false); repeatable.")
@click.option("--run-id", default=None, help="Run id for imported logs (default: derived from the file).")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on for large files).")
@click.option("--on-duplicate", type=click.Choice(["last", "first"]), default=None,
              help="A file that holds one trajectory id twice with different content is refused; "
                   "keep its last or first copy instead. Identical repeats are always loaded once.")
@click.option("--per-run-questions", is_flag=True,
              help="Key every question by its run, so runs that disagree about a question's gold are "
                   "stored apart instead of refused (they then do not pair in compare).")
@click.option("--dataset", default=None, metavar="NAME", help=DATASET_HELP)
@click.option("--corpus", default=None, metavar="NAME|FILE",
              help="Match passages the log names by title (gold titles of a --questions file, title candidates, "
                   "ReAct page reads) to this corpus's chunks (unique titles), e.g. --corpus hotpotqa_dev.json; "
                   "default: the corpus the --db warehouse holds, if it holds one.")
@click.option("--split-by", default=None, metavar="FIELD",
              help="Split the import into one run per value of a field of each trajectory: metadata.NAME, "
                   "question.NAME or run.NAME (run id RUN:NAME=VALUE), e.g. --split-by metadata.level.")
@click.option("--labels", "label_files", multiple=True, type=click.Path(exists=True), metavar="FILE|DIR",
              help="Human step labels to load after the logs (TRAIL annotations, Who&When records, per-step "
                   "+1/0/-1 maps, or one label per line; see docs/importers.md); repeatable.")
@click.option("--lake", "lake", type=LakeLocation(exists=False), default=None,
              help="Add the runs to this lake (trajscope lake: a folder or an object storage URL) instead of --db: "
                   "validated as for a warehouse, then written as this writer's own Parquet partitions, without a "
                   "global lock.")
@click.option("--method", "label_method", default=None, metavar="NAME",
              help="Load the --labels files as this attribution method's predicted labels (e.g. a judge's released "
                   "annotations), never as people's; trajscope agreement --human compares it with the others.")
@click.option("--labels-run", default=None, metavar="RUN",
              help="Resolve --labels against this run's trajectories only (when a question is in several runs).")
def command(files, db_path, fmt, mapping, questions, tool_map, patterns, declares, run_id, progress, on_duplicate,
            per_run_questions, dataset, split_by, label_files, labels_run, corpus, lake, label_method) -> None:
    """Load trajectory logs (files, or directories read as one run each) and human labels into the warehouse.

    Every file, canonical or not, is read once by its importer (format detected unless --format) into
    a canonical log with a capability profile per run, and an import report is printed for it. A
    directory's files (one trajectory per file, as Who&When and TRAIL store them) become one run;
    --split-by makes one run per value of a field. Then all files load in one transaction, with the
    --labels files resolved against the stored steps: one bad record or label anywhere and nothing is
    written, and the error names the file, line and field. Re-ingesting the same records adds nothing;
    a changed record replaces the old one entirely (with its labels).

    Example: trajscope ingest ../shared/data/external_logs/trail_swe/traces
    --labels ../shared/data/external_logs/trail_swe/annotations
    """
    import duckdb

    from trajscope.api import import_options, ingest_files
    from trajscope.ingest.importers import parse_declarations
    from trajscope.warehouse import NoRoomForIngest, WarehouseBusy, check_warehouse_file

    if not files and not label_files:
        raise click.UsageError("give log files or directories to load, or --labels for stored trajectories")
    if label_method is not None and (not label_files or lake):
        raise click.UsageError("--method names the predictions of --labels files loaded into a --db warehouse")
    # The warehouse file first: a --db that is not one is refused before any log is converted.
    lake_errors: tuple[type[Exception], ...] = ()
    if lake:
        from trajscope.warehouse.lake import LakeError, lake_location

        try:
            lake_location(lake)
        except LakeError as exc:
            raise click.ClickException(str(exc)) from None
        lake_errors = (LakeError,)
    else:
        check_warehouse_file(db_path, create=True)
    try:
        declared = parse_declarations(declares)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--declare") from None
    try:
        options = import_options(db_path, fmt=fmt, mapping=mapping, questions=questions, tool_map=tool_map,
                                 patterns=patterns, declare=declared, run_id=run_id, on_duplicate=on_duplicate,
                                 split_by=split_by, corpus=corpus, lake=lake, dataset=dataset)
        result = ingest_files(files, db_path, options, label_files=label_files, labels_run=labels_run,
                              progress=progress, on_duplicate=on_duplicate, per_run_questions=per_run_questions,
                              lake=lake, label_method=label_method, echo=click.echo)
    except lake_errors as exc:
        raise click.ClickException(f"{exc}\nnothing was committed to {lake}") from None
    except RecordError as exc:
        raise click.ClickException(f"{exc}\nnothing was written to {lake or db_path}") from None
    except WarehouseBusy as exc:
        raise click.ClickException(str(exc)) from None
    except NoRoomForIngest as exc:  # refused before writing: its message names the room needed and left
        raise click.ClickException(str(exc)) from None
    except OSError as exc:  # a full disk or a file-size limit met by a converted log or a batch file
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise click.ClickException(f"ingest stopped: {reason}{f' ({exc.filename})' if exc.filename else ''}; "
                                   f"nothing was committed to {lake or db_path}") from None
    except (duckdb.IOException, duckdb.FatalException, duckdb.TransactionException) as exc:  # met by DuckDB
        # writing the file or, at the commit, its WAL ("Failed to commit: Could not write file")
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise click.ClickException(f"ingest stopped: {first}; {lake or db_path} holds what its last commit "
                                   "wrote") from None
    if lake:
        from trajscope.warehouse.lake import LakeWrite

        assert isinstance(result, LakeWrite)  # a lake target is written as partitions
        click.echo(f"{result.ingest.summary() if result.ingest else ''}\n{result.summary()}")
        return
    click.echo(f"{db_path}: {result.summary()}")
