"""One import, shared by `trajscope ingest` and the Upload page: a file becomes one canonical log, once.

The source is parsed once; its records go to a spool while each run is tallied; identical duplicates
are dropped and reported; then every record is written with its run's capability profile.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from trajscope.format import Capabilities, Chunk, RecordError, Trajectory, encode, make_trajectory_id

from ._capabilities import RunTally, carried_capabilities, declare, infer_capabilities
from ._corpus_titles import CorpusTitles, title_gold
from ._dataset_key import DatasetKeying, check_dataset_name
from ._import_scores import with_import_scores
from ._registry import open_import
from ._report import FileReport, RunReport

_decoder = msgspec.json.Decoder(Trajectory)


@dataclass(frozen=True)
class ImportOptions:
    """How to read a file; `declare` overrides inferred capabilities (e.g. {"read_action": False})."""

    format: str | None = None
    mapping: Path | None = None
    questions: Path | None = None
    tool_map: dict[str, str] | None = None
    run_id: str | None = None
    patterns: Path | None = None
    declare: Mapping[str, bool] = field(default_factory=dict)
    declare_source: str = "--declare"
    source_name: str | None = None  # how the report names the file (an upload's original name)
    on_duplicate: str | None = None  # 'last' / 'first': differing duplicates go to the warehouse to pick one
    # A field of each trajectory (`metadata.level`, `question.question_type`, `run.model`) whose value
    # splits the import into one run per value: run id `<run id>:<field>=<value>`.
    split_by: str | None = None
    corpus: str | None = None  # a dataset name or file: `title:` passages matched to its chunks
    # Else the chunks of the warehouse the import goes to (read only when a `title:` id is met).
    warehouse_corpus: Callable[[], Iterable[Chunk]] | None = None
    # The benchmark questions are keyed under where neither question nor run names a dataset; a record's own wins.
    dataset: str | None = None


def _profiles(fmt: str, tallies: dict[str, RunTally], notes: Mapping[str, str], mapping_declared: Mapping[str, bool],
              mapping_name: str | None, options: ImportOptions) -> dict[str, Capabilities | None]:
    out: dict[str, Capabilities | None] = {}
    for run_id, tally in tallies.items():
        if fmt == "canonical":  # keep what the records carry; a declaration starts from it (or from inference)
            carried = carried_capabilities(tally)
            if not options.declare:
                out[run_id] = carried
                continue
            profile = carried or infer_capabilities(tally)
        else:
            profile = declare(infer_capabilities(tally, notes), mapping_declared, f"mapping file {mapping_name}")
        out[run_id] = declare(profile, options.declare, options.declare_source)
    return out


def convert_file(path: Path, out: Path, options: ImportOptions | None = None) -> FileReport:
    """Import `path` into the canonical log `out`; returns the import report. Nothing is written on error.

    `report.output` is the log to load: `out`, or `path` itself for a canonical log that passes unchanged.
    """
    options = options or ImportOptions()
    path, out = Path(path), Path(out)
    ctx, importer, records = open_import(path, format=options.format, mapping=options.mapping,
                                         questions=options.questions, tool_map=options.tool_map,
                                         run_id=options.run_id, patterns=options.patterns)
    keying = DatasetKeying(check_dataset_name(options.dataset, options.source_name or str(path))) \
        if options.dataset is not None else None
    if keying is not None:
        records = keying.apply(records)
    if options.split_by:
        records = split_runs(records, options.split_by, options.source_name or str(path))
    corpus = (CorpusTitles.named(options.corpus) if options.corpus else
              CorpusTitles("the warehouse's corpus", options.warehouse_corpus) if options.warehouse_corpus else None)
    if corpus is not None:
        records = (corpus.apply(t) for t in records)
    report = FileReport(source=options.source_name or str(path), format=ctx.format,
                        questions_file=options.questions.name if options.questions else None)
    tallies: dict[str, RunTally] = {}
    seen: dict[str, tuple[bytes, int]] = {}
    by_title: set[str] = set()  # questions whose gold passages stay title ids
    # A canonical log nobody declares anything about loads as it is: no copy is written.
    as_is = ctx.format == "canonical" and not options.declare and keying is None
    spool = out.with_name(out.name + ".spool")
    try:
        with open(os.devnull if as_is else spool, "wb") as fh:
            for ordinal, trajectory in enumerate(records, start=1):
                if ctx.format != "canonical":  # a canonical log's verdicts are its writer's to give
                    trajectory = with_import_scores(trajectory)
                data = encode(trajectory)
                digest = hashlib.blake2b(data, digest_size=16).digest()
                first = seen.get(trajectory.trajectory_id)
                if first is not None:
                    if first[0] == digest:
                        report.duplicates.append(f"record {ordinal}: identical to record {first[1]} "
                                                 f"(trajectory {trajectory.trajectory_id}); counted once")
                        continue
                    # canonical logs, and any log under --on-duplicate, leave the ruling to the warehouse
                    if ctx.format != "canonical" and options.on_duplicate is None:
                        raise RecordError(report.source, 0, "trajectory_id",
                                          f"records {first[1]} and {ordinal} are both trajectory "
                                          f"{trajectory.trajectory_id!r} with different content")
                    report.warnings.append(f"record {ordinal}: trajectory {trajectory.trajectory_id} again with "
                                           f"other content than record {first[1]}; the warehouse keeps one")
                else:
                    seen[trajectory.trajectory_id] = (digest, ordinal)
                    if title_gold(trajectory):
                        by_title.add(trajectory.question.question_id)
                    tallies.setdefault(trajectory.run.run_id, RunTally()).add(trajectory)
                    if keying is not None:
                        keying.count(trajectory)
                fh.write(data + b"\n")
        mapping_name = options.mapping.name if options.mapping else None
        profiles = _profiles(ctx.format, tallies, importer.capability_notes, ctx.declared, mapping_name, options)
        if as_is:
            report.output = path
        else:
            _stamp(spool, out, profiles, tallies)
            report.output = out
    finally:
        spool.unlink(missing_ok=True)
    report.runs = [RunReport(run_id, tally, profiles[run_id]) for run_id, tally in tallies.items()]
    report.duplicates = ctx.notes.duplicates + report.duplicates
    report.warnings = list(ctx.notes.warnings) + report.warnings
    report.skipped = list(ctx.notes.skipped)
    report.not_logs = list(ctx.notes.not_logs)
    report.questions_joined = ctx.notes.questions_joined
    report.dataset_lines = keying.lines() if keying is not None else []
    if corpus is not None and corpus.size and corpus.unmatched:
        report.warnings.append(f"{len(corpus.unmatched)} title(s) not in {corpus.name} (no unique chunk "
                               "with that title; kept as title ids), e.g. " + ", ".join(sorted(corpus.unmatched)[:3]))
    elif by_title and not (corpus is not None and corpus.size):
        report.warnings.append(f"{len(by_title)} question(s) name gold passages by title only, matched to no corpus "
                               "chunk: kept as title:<title> ids (--corpus NAME|FILE, or ingesting into a warehouse "
                               "that holds the corpus, matches them)")
    return report


_SPLIT_ROOTS = ("metadata", "question", "run")


def split_runs(records: Iterator[Trajectory], dotted: str, source: str) -> Iterator[Trajectory]:
    """Each trajectory moved to the run `<run id>:<field>=<value>` of its value of `dotted`."""
    root, _, rest = dotted.partition(".")
    if root not in _SPLIT_ROOTS or not rest:
        raise RecordError(source, 0, "split_by", f"{dotted!r}: expected metadata.NAME, question.NAME or run.NAME")
    for ordinal, t in enumerate(records, start=1):
        value: object = msgspec.to_builtins(getattr(t, root))
        for part in rest.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None or isinstance(value, (dict, list)):
            raise RecordError(source, ordinal, dotted, f"trajectory {t.trajectory_id!r} has no scalar value here "
                              "to split the run by")
        run_id = f"{t.run.run_id}:{rest.split('.')[-1]}={value}"
        follows = t.trajectory_id == make_trajectory_id(t.run.run_id, t.question.question_id)
        tid = make_trajectory_id(run_id, t.question.question_id) if follows else f"{run_id}::{t.trajectory_id}"
        yield msgspec.structs.replace(t, trajectory_id=tid, run=msgspec.structs.replace(t.run, run_id=run_id))


def _stamp(spool: Path, out: Path, profiles: dict[str, Capabilities | None], tallies: dict[str, RunTally]) -> None:
    """Write the spooled records with each run's profile (a plain rename when every record has it already)."""
    if all(profiles[r] == carried_capabilities(t) and t.carried_alike for r, t in tallies.items()):
        os.replace(spool, out)
        return
    with open(spool, "rb") as src, open(out, "wb") as dst:
        for raw in src:
            t = _decoder.decode(raw)
            profile = profiles[t.run.run_id]
            if t.run.capabilities != profile:
                t = msgspec.structs.replace(t, run=msgspec.structs.replace(t.run, capabilities=profile))
            dst.write(encode(t) + b"\n")
