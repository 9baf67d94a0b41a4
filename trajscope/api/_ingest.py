"""Logs into the warehouse, all or nothing: what `trajscope ingest` runs and `trajscope.ingest(...)` calls."""
from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trajscope.format import LabelledTrajectory
    from trajscope.ingest.importers import ImportOptions
    from trajscope.warehouse.lake import LakeWrite

    from ._ingest_result import IngestResult

# The folder of an ingest's converted logs (a full copy of each input), `<prefix><pid>-...` in the temp dir.
INGEST_TMP_PREFIX = "trajscope-ingest-"

Echo = Callable[[str], None]


def import_options(db_path: str | Path, *, fmt: str | None = None, mapping: str | Path | None = None,
                   questions: str | Path | None = None, tool_map: str | Path | None = None,
                   patterns: str | Path | None = None, declare: Mapping[str, bool] | None = None,
                   run_id: str | None = None, on_duplicate: str | None = None, split_by: str | None = None,
                   corpus: str | None = None, lake: str | None = None, dataset: str | None = None) -> ImportOptions:
    """How every file of one ingest is read (format detected unless fmt names one); dataset: the benchmark
    questions are keyed under where neither question nor run names one."""
    from trajscope.analysis.queries import corpus_titles
    from trajscope.ingest.importers import ImportOptions, load_tool_map

    return ImportOptions(
        format=fmt, mapping=Path(mapping) if mapping else None, questions=Path(questions) if questions else None,
        tool_map=load_tool_map(Path(tool_map)) if tool_map else None, run_id=run_id,
        patterns=Path(patterns) if patterns else None, declare=dict(declare or {}), on_duplicate=on_duplicate,
        split_by=split_by, corpus=corpus, dataset=dataset,
        # No corpus named: titles are matched to the corpus the warehouse holds, if it holds one.
        warehouse_corpus=None if corpus or lake else functools.partial(corpus_titles, db_path))


def ingest_files(files: Sequence[str | Path], db_path: str | Path, options: ImportOptions, *,
                 label_files: Sequence[str | Path] = (), labels_run: str | None = None, progress: bool | None = None,
                 on_duplicate: str | None = None, per_run_questions: bool = False, lake: str | None = None,
                 label_method: str | None = None, echo: Echo | None = None) -> IngestResult | LakeWrite:
    """Convert every file with its importer (echoing each import report), then load them and the label files in
    one transaction into db_path (or as this writer's partitions of lake). label_method: the label files are that
    attribution method's predictions, not people's. Raises RecordError naming file, line and field; nothing is
    written then. A warehouse's report names the files of directory inputs that were skipped as not logs."""
    from trajscope.format import terminal_text
    from trajscope.ingest.importers import convert_file, read_label_file, read_prediction_file
    from trajscope.runtime import sweep_dead_process_dirs
    from trajscope.warehouse import ingest_paths

    from ._ingest_result import IngestResult

    say = echo or (lambda _line: None)
    # Named after this process, so an ingest killed midway leaves a folder the next one removes.
    sweep_dead_process_dirs(Path(tempfile.gettempdir()), INGEST_TMP_PREFIX)
    with tempfile.TemporaryDirectory(prefix=f"{INGEST_TMP_PREFIX}{os.getpid()}-") as tmp:
        converted: list[Path] = []
        sources: list[str] = []
        not_logs: list[Path] = []
        for k, name in enumerate(files):
            out = Path(tmp) / f"{k}-{Path(name).name}.canonical.jsonl"
            report = convert_file(Path(name), out, options)
            say(terminal_text("\n".join(report.lines())))  # run ids and notes come from the log
            converted.append(report.output or out)  # set by every conversion that returns
            sources.append(str(Path(name)))
            not_logs.extend(Path(name) / skipped for skipped in report.not_logs)
        notes: list[str] = []
        labels: list[tuple[str, list[LabelledTrajectory]] | tuple[str, list[LabelledTrajectory], str]]
        if label_method is None:
            labels = [(str(Path(name)), read_label_file(Path(name), notes)) for name in label_files]
        else:
            labels = [(str(Path(name)), read_prediction_file(Path(name), notes), label_method) for name in label_files]
        for note in notes:
            say(terminal_text(f"labels: {note}"))
        if lake:
            from trajscope.warehouse.lake import ingest_into_lake

            return ingest_into_lake(lake, converted, progress=progress, on_duplicate=on_duplicate,
                                    per_run_questions=per_run_questions, source_names=sources, labels=labels,
                                    labels_run=labels_run)
        loaded = ingest_paths(db_path, converted, progress=progress, on_duplicate=on_duplicate,  # type: ignore[arg-type]
                              per_run_questions=per_run_questions, source_names=sources, labels=labels,
                              labels_run=labels_run)
        return IngestResult.of(loaded, not_logs)


def ingest(paths: str | Path | Sequence[str | Path], db: str | Path | None = None, *, fmt: str | None = None,
           run_id: str | None = None, questions: str | Path | None = None, mapping: str | Path | None = None,
           tool_map: str | Path | None = None, declare: Mapping[str, bool] | None = None,
           split_by: str | None = None, corpus: str | None = None, labels: Sequence[str | Path] = (),
           labels_run: str | None = None, on_duplicate: str | None = None, per_run_questions: bool = False,
           dataset: str | None = None, echo: Echo | None = print) -> IngestResult:
    """Load logs (files, or directories read as one run each) into the warehouse db, as `trajscope ingest`:
    format detected unless fmt names one, all or nothing, one import report per file passed to echo.
    dataset: as --dataset, the benchmark of questions whose record names none. The result's not_logs are the
    directory inputs' files skipped as documentation and code."""
    from trajscope.warehouse import check_warehouse_file, default_db_path

    files = [paths] if isinstance(paths, (str, Path)) else list(paths)
    db_path = Path(db) if db else default_db_path()
    # The warehouse file first: a db that is not one is refused before any log is converted.
    check_warehouse_file(db_path, create=True)
    options = import_options(db_path, fmt=fmt, mapping=mapping, questions=questions, tool_map=tool_map,
                             declare=declare, run_id=run_id, on_duplicate=on_duplicate, split_by=split_by,
                             corpus=corpus, dataset=dataset)
    report = ingest_files(files, db_path, options, label_files=labels, labels_run=labels_run, progress=False,
                          on_duplicate=on_duplicate, per_run_questions=per_run_questions, echo=echo)
    return report  # type: ignore[return-value]  # a warehouse file, not a lake: an IngestResult


__all__ = ["INGEST_TMP_PREFIX", "ingest", "ingest_files", "import_options"]
