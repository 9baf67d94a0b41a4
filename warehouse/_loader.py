"""Bulk, idempotent, atomic loading of canonical trajectory logs into the warehouse."""
from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import itertools
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

import duckdb
import msgspec
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from trajscope.format import (
    MAX_LINE_BYTES,
    Chunk,
    LabelledTrajectory,
    Question,
    RecordError,
    Trajectory,
    bounded_lines,
    decode_trajectory,
    encode,
    redact_json_line,
    redaction_prefilter,
    skip_bom,
)
from trajscope.runtime import check_room, prefetched, sweep_dead_process_dirs

from ._conflict_remedy import conflicting_question, gold_conflict_remedy
from ._connection import default_db_path, open_warehouse, transaction
from ._derived import UPSERT_KEYS, refresh_on
from ._duckdb_types import read_json_columns
from ._file_check import WarehouseFileError, check_path_length
from ._labels import LabelLoad, load_label_records

_PROGRESS_MIN_BYTES = 8 * 1024 * 1024

OnDuplicate = Literal["last", "first"]
ON_DUPLICATE_CHOICES = ("last", "first")


@dataclass
class IngestReport:
    """What an ingest did: counts of new, replaced and unchanged records, and duplicates met."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    new: int = 0
    replaced: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    noun: str = "trajectories"
    identical_duplicates: int = 0  # lines repeating an earlier line of the same file byte for byte
    differing_duplicates: int = 0  # lines reusing an id with other content, resolved by on_duplicate
    on_duplicate: str | None = None
    label_loads: list[LabelLoad] = field(default_factory=list)  # one per --labels file, loaded after the logs

    def summary(self) -> str:
        where = f" from {len(self.files)} file(s)" if self.files else ""
        text = (
            f"{self.records} {self.noun}{where}: {self.new} new, {self.replaced} replaced, "
            f"{self.unchanged} unchanged ({self.seconds:.1f}s)"
        )
        if self.identical_duplicates:
            text += f"; {self.identical_duplicates} identical duplicate line(s) counted once"
        if self.differing_duplicates:
            text += (f"; {self.differing_duplicates} duplicate id(s) with different content, "
                     f"kept the {self.on_duplicate} copy")
        return "\n".join([text, *(load.summary() for load in self.label_loads)])


class GoldConflict(RecordError):
    """Two sources state different facts (gold answer, aliases, type, gold chunks) for one question key."""

    def __init__(self, path: str | Path, dataset: str, question_id: str, field_name: str, message: str):
        self.path, self.line, self.field, self.message = str(path), 0, field_name, message
        self.dataset, self.question_id = dataset, question_id
        ValueError.__init__(self, message)


# Bigger batches pay each statement's fixed cost and each scan of the stored tables fewer times: a 100k ingest
# took 34-38 s in 48 MB batches and 23 s in 256 MB ones, at the same peak RSS (DuckDB spills under its limit).
_BATCH_BYTES = 256 * 1024 * 1024
# Reading and writing log lines (about 10 KB each) through 1 MB buffers, not 8 KB ones: half the system time of
# the validation pass (BENCHMARKS.md).
_IO_BUFFER_BYTES = 1 << 20
_BATCH_DIR_PREFIX = "trajscope-batches-"
_NEW_FILE_PREFIX = ".trajscope-ingest-"  # beside the warehouse it becomes: .trajscope-ingest-<pid>-<token>.duckdb
# An existing warehouse is copied for a log larger than this fraction of its file (and than one batch):
# measured crossover, _loads_into_copy.
_COPY_ABOVE_FILE_FRACTION = 1.0
_RECORDS_FILE_PREFIX = "trajscope-records-"  # ingest_trajectories' log of in-memory records


@dataclass
class _Batch:
    """A slice of a log copied to a temporary file (none when every line in it is stored already); ids and
    hashes are of the last copy of each id in it, unchanged_* of the lines counted unchanged since the last batch."""

    path: Path | None
    ids: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    line_ids: list[str] = field(default_factory=list)
    unchanged_ids: list[str] = field(default_factory=list)
    unchanged_hashes: list[str] = field(default_factory=list)
    # Some id in it has another copy earlier in this ingest (a file's earlier line, or another file's), which an
    # earlier batch may have stored: only then can a warehouse that held no trajectory before this ingest hold it.
    rewrites: bool = False


@dataclass
class _Manifest:
    """A validated log: record count and its batches (empty when validated without a workdir)."""

    path: Path
    records: int = 0
    batches: list[_Batch] = field(default_factory=list)


@dataclass
class _Slice:
    """Which bytes of a log to read: from `start` (a line boundary) to the last newline;
    the first line read is numbered `first_line`."""

    path: Path
    start: int = 0
    first_line: int = 1
    complete_lines_only: bool = False  # a live log: stop before a last line still being written
    end: int | None = None  # set by the reader: the offset after the last line read
    lines: int = 0  # lines read (blank ones included)
    name: str | None = None  # what source_file records when the log stands in for another file


# Lines validated per round trip to the split state and the stored hashes (a few MB of lines held at once).
_LOOKUP_LINES = 4096


class _SplitState:
    """What validation remembers across batches and files, in an in-memory DuckDB (spilling to disk) so that
    Python holds one chunk of lines at a time: per file the kept copy of each id (its line and hash), per
    ingest whether some batch holds the id, and the warehouse's stored hashes through `stored`."""

    def __init__(self, spill_dir: str | Path | None = None, stored: duckdb.DuckDBPyConnection | None = None):
        # No extension may load here either (docs/security.md): the state only holds ids and hashes.
        config: dict[str, str | bool | int | float | list[str]] = {
            "memory_limit": "256MB", "preserve_insertion_order": False,
            "autoinstall_known_extensions": False, "autoload_known_extensions": False}
        if spill_dir is not None:
            config["temp_directory"] = str(spill_dir)
        self.db = duckdb.connect(":memory:", config=config)
        self.db.execute(_named_sql("split_state.sql"))
        self.stored = stored  # a cursor on the warehouse: its committed rows, the state before this ingest
        self.file_no = -1
        self.paths: list[Path] = []  # by file number: what a conflict across files names

    def next_file(self, path: Path) -> None:
        self.file_no += 1
        self.paths.append(path)

    def earlier(self, ids: Iterable[str]) -> dict[str, tuple[Path, int, str]]:
        """id -> (file, line, hash) of the copy the latest earlier file of this ingest kept."""
        if self.file_no <= 0:
            return {}
        self.db.register("chunk_ids", pa.table({"trajectory_id": list(ids)}, schema=_ID_SCHEMA))
        try:
            rows = self.db.execute(_named_sql("split_earlier.sql"), {"file_no": self.file_no}).fetchall()
        finally:
            self.db.unregister("chunk_ids")
        return {tid: (self.paths[file_no], line, digest) for tid, file_no, line, digest in rows}

    def known(self, digests: list[str]) -> dict[str, str]:
        """Stored line hash -> trajectory id, for those of digests the warehouse holds."""
        if self.stored is None or not digests:
            return {}
        self.stored.register("chunk_hashes", pa.table({"record_hash": digests}))
        try:
            return dict(self.stored.execute(_named_sql("stored_hashes.sql")).fetchall())
        finally:
            self.stored.unregister("chunk_hashes")

    def prior(self, ids: Iterable[str]) -> dict[str, tuple[int | None, str | None, bool, bool]]:
        """id -> (line and hash of its kept copy in this file or None, written in this file, written at all)."""
        self.db.register("chunk_ids", pa.table({"trajectory_id": list(ids)}, schema=_ID_SCHEMA))
        try:
            rows = self.db.execute(_named_sql("split_prior.sql"), {"file_no": self.file_no}).fetchall()
        finally:
            self.db.unregister("chunk_ids")
        return {tid: (line, digest, bool(here), bool(anywhere)) for tid, line, digest, here, anywhere in rows}

    def save(self, seen: dict[str, tuple[int, str]], written: set[str],
             prior: dict[str, tuple[int | None, str | None, bool, bool]]) -> None:
        """Record the chunk's kept copies (replacing this file's earlier ones) and which ids a batch holds."""
        if not seen:
            return
        replaced = [tid for tid in seen if prior.get(tid, (None,))[0] is not None]
        if replaced:
            self.db.register("replaced_ids", pa.table({"trajectory_id": replaced}, schema=_ID_SCHEMA))
            self.db.execute("DELETE FROM split_ids WHERE file_no = $file_no AND trajectory_id IN "
                            "(SELECT trajectory_id FROM replaced_ids)", {"file_no": self.file_no})
            self.db.unregister("replaced_ids")
        tids = list(seen)
        rows = pa.table({
            "file_no": pa.array([self.file_no] * len(tids), pa.int32()),
            "trajectory_id": tids,
            "line": pa.array([seen[t][0] for t in tids], pa.int64()),
            "record_hash": [seen[t][1] for t in tids],
            "written": [t in written or prior.get(t, (None, None, False))[2] for t in tids],
        })
        self.db.register("chunk_rows", rows)
        self.db.execute(_named_sql("split_save.sql"))
        self.db.unregister("chunk_rows")

    def close(self) -> None:
        self.db.close()


_ID_SCHEMA = pa.schema([("trajectory_id", pa.string())])


_REDACT_CHUNK_LINES = 512


def _redacted_lines(fh, prefilter: str | None, path: Path, first_line: int) -> Iterator[tuple[bytes, bytes]]:
    """(line as read, line with secrets redacted) for every line of fh; a line past MAX_LINE_BYTES is a
    RecordError naming it.

    RE2 (Arrow's regex kernel) finds the few lines a redaction could change in one pass over a
    chunk; only those go through redact_json_line, so a clean log pays one scan, not one per marker.
    """
    lines = bounded_lines(fh, path, first_line)
    while chunk := list(itertools.islice(lines, _REDACT_CHUNK_LINES)):
        if prefilter is None:
            flagged = [True] * len(chunk)
        else:
            flagged = pc.match_substring_regex(pa.array(chunk, pa.binary()), prefilter).to_pylist()
        for raw, hit in zip(chunk, flagged, strict=True):
            yield raw, redact_json_line(raw) if hit else raw


_ASCII_SPACE = frozenset(b" \t\n\r\x0b\x0c")  # what bytes.strip() removes


def _line_hash(raw: bytes) -> str:
    # Hash of the line as written: identical records hash alike, so a re-ingest is detected as
    # unchanged without re-encoding every record.
    # A view of the stripped bytes, not a copy of a 10 KB line per line.
    start, end = 0, len(raw)
    while end > start and raw[end - 1] in _ASCII_SPACE:
        end -= 1
    while start < end and raw[start] in _ASCII_SPACE:
        start += 1
    return hashlib.blake2b(memoryview(raw)[start:end], digest_size=16).hexdigest()


def validate_log(
    path: str | Path, *, progress: bool | None = None, workdir: str | Path | None = None,
    batch_bytes: int | None = None, on_duplicate: OnDuplicate | None = None,
) -> _Manifest:
    """Stream-validate a canonical JSONL log (RecordError at the first bad line).

    With a workdir, the lines are also split into batch files of about batch_bytes, so loading
    needs memory for one batch, never for the whole file.
    """
    manifest = _Manifest(Path(path))
    report = IngestReport()
    state = _SplitState(workdir)
    try:
        for batch, records in _split_log(_Slice(Path(path)), progress=progress, workdir=workdir,
                                         batch_bytes=batch_bytes, on_duplicate=on_duplicate, report=report,
                                         state=state):
            manifest.records += records
            if batch is not None:
                manifest.batches.append(batch)
    finally:
        state.close()
    return manifest


def _split_log(
    source: _Slice, *, progress: bool | None, workdir: str | Path | None, batch_bytes: int | None,
    on_duplicate: OnDuplicate | None, report: IngestReport, state: _SplitState,
) -> Iterator[tuple[_Batch | None, int]]:
    """Validate a log line by line, yielding (batch, records in it) as each batch file is complete.

    An id seen twice in the file is an error unless both lines are identical (counted, loaded
    once) or on_duplicate says which copy to keep. A batch keeps the last copy of an id it holds
    twice; a copy in a later batch replaces it at load time. Without a workdir the batch is None,
    and a final (None, records) carries the count of records no batch holds. A line the warehouse
    already holds byte for byte (state.stored) is the first copy of its id: it was validated when it
    was loaded, so it is counted unchanged without decoding it again.

    Lines go in chunks of _LOOKUP_LINES: which ids earlier chunks kept lives in `state` (DuckDB), so
    what Python holds is one chunk and one batch, whatever the size of the log.
    """
    path = source.path
    batch_bytes = batch_bytes or _BATCH_BYTES
    if not path.exists():
        raise RecordError(path, 0, None, "file not found")
    state.next_file(path)
    size = path.stat().st_size
    show = progress if progress is not None else size - source.start >= _PROGRESS_MIN_BYTES
    batch: _Batch | None = None
    latest: dict[str, tuple[int, str]] = {}  # id -> (line within the batch, hash)
    unchanged: tuple[list[str], list[str]] = ([], [])  # stored lines met since the last batch: ids, hashes
    out = None
    written = records = n_batches = 0
    offset = source.start
    lineno = source.first_line - 1
    try:
        with open(path, "rb", buffering=_IO_BUFFER_BYTES) as fh, tqdm(
            total=size - source.start, unit="B", unit_scale=True, desc=f"validate {path.name}",
            disable=not show, leave=False,
        ) as bar:
            if source.start == 0:
                offset = skip_bom(fh)  # a log a Windows editor saved starts with a byte-order mark
            else:
                fh.seek(source.start)
            prefilter = redaction_prefilter()
            lines = _redacted_lines(fh, prefilter, path, source.first_line)
            complete = False
            while not complete and (chunk := list(itertools.islice(lines, _LOOKUP_LINES))):
                entries: list[tuple[int, bytes, str]] = []  # (line number, redacted line, its hash)
                for as_read, raw in chunk:
                    if source.complete_lines_only and not as_read.endswith(b"\n"):
                        complete = True  # a slice stops at the last complete line; the rest is still being written
                        break
                    lineno += 1
                    bar.update(len(as_read))
                    offset += len(as_read)
                    source.lines += 1
                    if raw and not raw.isspace():  # not blank (isspace: no copy of the line)
                        entries.append((lineno, raw, _line_hash(raw)))  # of the redacted line, as stored
                known = state.known([digest for _, _, digest in entries])
                ids, failure = _decoded_ids(entries, known, path)
                if failure is not None:
                    entries = entries[:len(ids)]
                prior = state.prior({*known.values(), *(tid for tid in ids if tid is not None)})
                earlier = state.earlier({tid for tid in ids if tid is not None})
                seen: dict[str, tuple[int, str]] = {}  # id -> (line of its kept copy, hash), this chunk's
                chunk_written: set[str] = set()

                for (line_no, raw, digest), tid in zip(entries, ids, strict=True):
                    known_id = known.get(digest)
                    if known_id is not None and _kept(known_id, seen, prior) is None and not (
                            known_id in chunk_written or prior.get(known_id, (None, None, False, False))[3]):
                        seen[known_id] = (line_no, digest)
                        unchanged[0].append(known_id)
                        unchanged[1].append(digest)
                        records += 1
                        continue
                    if tid is None:  # a stored line that is not the first copy of its id: validate it after all
                        tid = _decoded_id(raw, path, line_no)
                    first = _kept(tid, seen, prior)
                    other = earlier.get(tid) if first is None else None
                    # Another file of this ingest holds a different record under the same id: refused, or one
                    # copy kept as --on-duplicate says, and counted in the summary either way.
                    if other is not None and other[2] != digest and _keeps_first_copy(
                            report, on_duplicate, path, line_no,
                            f"duplicate id {tid!r}: {other[0]} line {other[1]} and this line hold different records"):
                        continue
                    if first is not None:
                        first_line, first_digest = first
                        if first_digest == digest:
                            report.identical_duplicates += 1
                            continue
                        if _keeps_first_copy(report, on_duplicate, path, line_no,
                                             f"duplicate id {tid!r}: lines {first_line} and {line_no} hold "
                                             "different records"):
                            continue
                    seen[tid] = (line_no, digest)
                    records += 1
                    if workdir is None:
                        continue
                    if out is not None and batch is not None and written >= batch_bytes:
                        out.close()
                        out = None
                        yield _finish_batch(batch, latest, unchanged), records
                        unchanged, records = ([], []), 0
                    if out is None or batch is None:
                        batch_path = Path(workdir) / f"{path.name}.{source.start}.{n_batches:05d}.jsonl"
                        batch = _Batch(batch_path)
                        n_batches += 1
                        latest = {}
                        out = open(batch_path, "wb", buffering=_IO_BUFFER_BYTES)
                        written = 0
                    latest[tid] = (len(batch.line_ids), digest)
                    batch.rewrites = batch.rewrites or first is not None or other is not None
                    batch.line_ids.append(tid)
                    chunk_written.add(tid)
                    out.write(raw if raw.endswith(b"\n") and not raw.endswith(b"\r\n")
                              else raw.rstrip(b"\r\n") + b"\n")
                    written += len(raw)
                state.save(seen, chunk_written, prior)
                if failure is not None:
                    raise failure
                # Stored lines are handed on a chunk's worth at a time, even while a batch stays open.
                if unchanged[0] and (out is None or len(unchanged[0]) >= _LOOKUP_LINES):
                    yield _Batch(None, unchanged_ids=unchanged[0], unchanged_hashes=unchanged[1]), records
                    unchanged, records = ([], []), 0
    finally:
        if out is not None:
            out.close()
    source.end = offset
    if out is not None and batch is not None:
        yield _finish_batch(batch, latest, unchanged), records
    elif workdir is None or records:
        yield None, records


def _kept(tid: str, seen: dict[str, tuple[int, str]],
          prior: dict[str, tuple[int | None, str | None, bool, bool]]) -> tuple[int, str] | None:
    """The kept copy (line, hash) of tid in this file: this chunk's, else an earlier chunk's, else None."""
    if tid in seen:
        return seen[tid]
    line, digest, _, _ = prior.get(tid, (None, None, False, False))
    return None if line is None or digest is None else (line, digest)


def _keeps_first_copy(report: IngestReport, on_duplicate: OnDuplicate | None, path: Path, line_no: int,
                      conflict: str) -> bool:
    """The rule for a different record under a kept id: refused without --on-duplicate, else counted; whether
    this line is to be skipped (--on-duplicate first)."""
    if on_duplicate is None:
        raise RecordError(path, line_no, "trajectory_id",
                          f"{conflict} (pass --on-duplicate last or --on-duplicate first to keep one)")
    report.differing_duplicates += 1
    report.on_duplicate = on_duplicate
    return on_duplicate == "first"


def _decoded_id(raw: bytes, path: Path, line: int) -> str:
    """The trajectory id of a line, decoding (so validating) the whole record; RecordError when it is bad."""
    tid = decode_trajectory(raw, path=path, line=line).trajectory_id
    if not tid.strip():
        raise RecordError(path, line, "trajectory_id", "empty trajectory id: every trajectory needs one")
    return tid


def _decoded_ids(entries: list[tuple[int, bytes, str]], known: dict[str, str],
                 path: Path) -> tuple[list[str | None], RecordError | None]:
    """Per entry its id (None for a stored line, decoded later only if needed), up to the first bad line,
    and that line's error: the lines before it are still checked for duplicates first, in file order."""
    ids: list[str | None] = []
    for line, raw, digest in entries:
        if digest in known:
            ids.append(None)
            continue
        try:
            ids.append(_decoded_id(raw, path, line))
        except RecordError as exc:
            return ids, exc
    return ids, None


def _finish_batch(batch: _Batch, latest: dict[str, tuple[int, str]],
                  unchanged: tuple[list[str], list[str]]) -> _Batch:
    batch.unchanged_ids, batch.unchanged_hashes = unchanged
    for tid, (_, digest) in latest.items():
        batch.ids.append(tid)
        batch.hashes.append(digest)
    if batch.path is not None and len(latest) < len(batch.line_ids):
        _keep_last_occurrences(batch.path, batch.line_ids, latest)
    return batch


def _keep_last_occurrences(path: Path, line_ids: list[str], latest: dict[str, tuple[int, str]]) -> None:
    # A batch that repeats a trajectory id (--on-duplicate last) keeps its last copy only.
    kept = path.with_suffix(".dedup.jsonl")
    with open(path, "rb") as src, open(kept, "wb") as dst:
        for i, raw in enumerate(src):
            if latest[line_ids[i]][0] == i:
                dst.write(raw)
    os.replace(kept, path)


@functools.cache
def _load_sql() -> tuple[tuple[str, str], ...]:
    """The numbered load statements of warehouse/load/, in order: (file name, SQL)."""
    folder = resources.files("trajscope.warehouse") / "load"
    found = sorted((e.name, e.read_text()) for e in folder.iterdir()
                   if e.name.endswith(".sql") and e.name[:2].isdigit())
    return tuple(found)


@functools.cache
def _named_sql(name: str) -> str:
    return (resources.files("trajscope.warehouse") / "load" / name).read_text()


@functools.cache
def _stage_sql() -> str:
    columns = ", ".join(f"'{name}': '{type_}'" for name, type_ in read_json_columns(Trajectory).items())
    # Redaction may lengthen a line a little (a fragment becomes "[REDACTED]"): DuckDB's object limit is
    # twice the line limit, so the only refusal a user meets is the line-size one, with its line number.
    sql = _named_sql("stage.sql").replace("{max_object_bytes}", str(2 * MAX_LINE_BYTES))
    return sql.replace("{columns}", "{" + columns + "}")


_CHILD_TABLES = ("trajectories", "steps", "candidates", "reads", "register_events", "judgments",
                 "gold_evidence_facts", "trajectory_forks", "human_step_labels")
_STAGE_TABLES = ("stage", "stage_steps", "stage_questions", "stage_candidates", "stage_reads", "stage_gold",
                 "stage_register", "stage_trajectories", "incoming_changed", "stage_question_changes",
                 "question_conflict_keys")
_STAGE_VIEWS = ("stage_step_rows", "stage_judgment_rows")


def _check_question_conflicts(con: duckdb.DuckDBPyConnection, source: Path) -> None:
    """Raise GoldConflict naming both sides when the batch disagrees about a question's facts."""
    # A cheap pass over the stored questions first: the full check joins the stored trajectories, a cost that
    # grew with the warehouse (0.06 -> 0.13 s a batch over a 1M ingest), and a batch seldom has a key to check.
    con.execute(_named_sql("question_conflict_keys.sql"))
    if not con.execute("SELECT count(*) FROM question_conflict_keys").fetchall()[0][0]:
        return
    cur = con.execute(_named_sql("check_question_conflicts.sql"), {"source_file": str(source)})
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r, strict=False)) for r in cur.fetchall()]
    if not rows:
        return
    first = [r for r in rows if (r["dataset"], r["question_id"]) == (rows[0]["dataset"], rows[0]["question_id"])]
    a, b = first[0], first[1]
    facts = ("gold_answer", "aliases", "gold_chunk_ids", "gold_paragraphs", "question_type", "hop_count", "text")
    differing = next(f for f in facts if a[f] != b[f])
    keys = {(r["dataset"], r["question_id"]) for r in rows}

    def side(r: dict) -> str:
        return f"{r[differing]!r} in run(s) {', '.join(r['run_ids'])} (file(s) {', '.join(r['files'])})"

    more = f" ({len(keys) - 1} more question(s) conflict too)" if len(keys) > 1 else ""
    raise GoldConflict(
        source, a["dataset"], a["question_id"], differing,
        f"{conflicting_question(a['question_id'], a['dataset'])}: conflicting {differing}: "
        f"{side(b)} vs {side(a)}{more}. " + gold_conflict_remedy(a["dataset"]),
    )


def _load_batch(con: duckdb.DuckDBPyConnection, batch: _Batch, source: Path, seq: int,
                per_run_questions: bool, *, empty_before: bool = False) -> None:
    """Load a batch's new and changed trajectories, noting each id's stored hash in ingest_ids for the report.

    `empty_before`: the warehouse held no trajectory when this ingest began."""
    _note_ids(con, batch.unchanged_ids, batch.unchanged_hashes, seq)
    if batch.path is None:
        return
    if empty_before and not batch.rewrites:
        # Every id is new, and a join by string id would scan every trajectory earlier batches stored.
        stored: list[tuple[str, str, str | None]] = [(tid, digest, None)
                                                    for tid, digest in zip(batch.ids, batch.hashes, strict=True)]
    else:
        con.register("incoming_arrow", pa.table({"trajectory_id": batch.ids, "record_hash": batch.hashes}))
        # One join with the stored trajectories serves both the report (hash before this call) and
        # the choice of what to load (new or changed records only).
        stored = con.execute(
            "SELECT i.trajectory_id, i.record_hash, t.record_hash FROM incoming_arrow i "
            "LEFT JOIN trajectories t USING (trajectory_id)"
        ).fetchall()
        con.unregister("incoming_arrow")
    _note_ids(con, [tid for tid, _, _ in stored], [before for _, _, before in stored], seq)
    changed_rows = [(tid, digest, stored_digest is not None) for tid, digest, stored_digest in stored
                    if digest != stored_digest]
    if not changed_rows:
        return
    tids, digests, existed_flags = zip(*changed_rows, strict=False)
    con.register("incoming_changed_arrow", pa.table({
        "trajectory_id": list(tids), "record_hash": list(digests), "existed": list(existed_flags)}))
    con.execute("CREATE OR REPLACE TEMP TABLE incoming_changed AS SELECT * FROM incoming_changed_arrow")
    con.unregister("incoming_changed_arrow")
    if any(existed_flags):
        for table in _CHILD_TABLES:
            con.execute(
                f"DELETE FROM {table} WHERE trajectory_id IN "
                "(SELECT trajectory_id FROM incoming_changed WHERE existed)"
            )
    # The batch file holds one line per id (_finish_batch keeps the last copy), so when every id is
    # new or changed the whole file is to be staged.
    all_changed = len(changed_rows) == len(batch.ids)
    con.execute(_stage_sql(), {"path": str(batch.path), "per_run_questions": per_run_questions,
                               "all_changed": all_changed})
    _check_question_conflicts(con, source)
    for name, sql in _load_sql():
        try:
            con.execute(sql, {"source_file": str(source)} if "$source_file" in sql else None)
        except (duckdb.IOException, duckdb.FatalException):
            raise  # a full disk: the caller names it as such
        except duckdb.Error as exc:
            raise RuntimeError(f"warehouse/load/{name}: {exc}") from exc
    with _batch_rows_for_stored(con):
        # each fact unit's refresh_batch.sql, and the units reading them; the batch's new trajectories hold no facts
        refresh_on(con, "batch", fresh_sql="SELECT trajectory_id FROM incoming_changed WHERE NOT existed")
    for view in _STAGE_VIEWS:
        con.execute(f"DROP VIEW IF EXISTS {view}")
    for temp in _STAGE_TABLES:
        con.execute(f"DROP TABLE IF EXISTS {temp}")


@contextlib.contextmanager
def _batch_rows_for_stored(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """While a batch's facts are refreshed, its own trajectories, steps, judgments and gold facts stand in for the
    stored tables (batch_shadow_views.sql), when the refresh is of the batch's trajectories alone (no stored
    trajectory asks a question the batch restated).

    A semi-join on a string id skips no row group (DuckDB's string statistics keep an 8-byte prefix), so each
    batch's refresh otherwise scanned every stored row of those tables: rows read grew with every earlier batch.
    """
    if con.execute("SELECT count(*) FROM stage_question_changes").fetchall()[0][0]:
        yield
        return
    con.execute(_named_sql("batch_shadow_views.sql"))
    try:
        yield
    finally:
        try:
            con.execute(_named_sql("batch_shadow_views_drop.sql"))
        except duckdb.Error:
            pass  # an aborted transaction: its rollback removes them


def _note_ids(con: duckdb.DuckDBPyConnection, ids: list[str], before: Sequence[str | None], seq: int) -> None:
    # The report's memory lives in DuckDB, not in Python: each id met, with its stored hash then ('' if new).
    if not ids:
        return
    con.register("met_ids", pa.table({"trajectory_id": pa.array(ids, pa.string()),
                                      "before_hash": pa.array(before, pa.string()),
                                      "seq": pa.array([seq] * len(ids), pa.int64())}))
    con.execute(_named_sql("ingest_ids_note.sql"))
    con.unregister("met_ids")


def _batches(sources: Sequence[_Slice], workdir: str, progress: bool | None, report: IngestReport,
             on_duplicate: OnDuplicate | None, stored: duckdb.DuckDBPyConnection | None,
             ) -> Iterator[tuple[_Batch, Path]]:
    state = _SplitState(workdir, stored)
    try:
        for source in sources:
            for batch, records in _split_log(source, progress=progress, workdir=workdir, batch_bytes=None,
                                             on_duplicate=on_duplicate, report=report, state=state):
                report.records += records
                if batch is not None:
                    yield batch, Path(source.name) if source.name else source.path
    finally:
        state.close()


def remove_stale_batch_dirs(tmp_root: str | Path | None = None) -> list[Path]:
    """Delete the batch folders and records logs that a killed ingest left in the temp dir (their process is gone)."""
    root = Path(tmp_root or tempfile.gettempdir())
    return [*sweep_dead_process_dirs(root, _BATCH_DIR_PREFIX),
            *sweep_dead_process_dirs(root, _RECORDS_FILE_PREFIX, files=True)]


LabelFiles = Sequence[tuple[str, Sequence[LabelledTrajectory]] | tuple[str, Sequence[LabelledTrajectory], str]]


def _ingest(db_path: str | Path | None, sources: Sequence[_Slice], *, progress: bool | None,
            on_duplicate: OnDuplicate | None, per_run_questions: bool, skip_stored: bool = True,
            labels: LabelFiles = (), labels_run: str | None = None) -> IngestReport:
    start = time.perf_counter()
    report = IngestReport(files=[str(s.path) for s in sources])
    target = Path(db_path) if db_path else default_db_path()
    # Before any stat of it (a name over the limit makes one raise), and so that it, not a side file, is named.
    check_path_length(target)
    remove_stale_batch_dirs()
    sweep_dead_process_dirs(target.parent, _NEW_FILE_PREFIX, files=True)
    load = functools.partial(_load, sources=sources, progress=progress, on_duplicate=on_duplicate,
                             per_run_questions=per_run_questions, labels=labels, labels_run=labels_run)
    # A link is followed, as it always was.
    created = not (target.exists() or target.is_symlink()) and _build_beside(target, load, report)
    if not created:  # an existing warehouse, or one another ingest created while this one built its own
        report = IngestReport(files=report.files)
        if _loads_into_copy(target, sources):
            _load_into_copy(target, load, report, skip_stored=skip_stored, input_bytes=_input_bytes(sources))
        else:
            load(target, report=report, skip_stored=skip_stored)
    report.seconds = time.perf_counter() - start
    return report


def _side_path(beside: Path) -> Path:
    """A side file's name beside the warehouse, after this process: a sweep tells a live ingest's from a dead one's."""
    return beside.with_name(f"{_NEW_FILE_PREFIX}{os.getpid()}-{secrets.token_hex(4)}.duckdb")


def _build_beside(target: Path, load: Callable[..., None], report: IngestReport) -> bool:
    """Build a new warehouse in a side file and give it target's name; False if a warehouse appeared there first.

    Committed batch by batch, so memory stays bounded by the batch (one transaction kept every batch's staging
    until its commit: 2 GB at 1M); it takes the name only when complete, so a failed or killed ingest leaves none.
    """
    side = _side_path(target)
    try:
        load(side, report=report, skip_stored=False, new_file=True, shown=target)
        return _publish(side, target)
    except WarehouseFileError as exc:  # named after the path the user gave
        raise WarehouseFileError(str(exc).replace(str(side), str(target))) from None
    finally:
        for leftover in (side, side.with_name(side.name + ".wal")):
            leftover.unlink(missing_ok=True)


def _input_bytes(sources: Sequence[_Slice]) -> int:
    return sum(s.path.stat().st_size - s.start for s in sources if s.path.is_file())


def _loads_into_copy(target: Path, sources: Sequence[_Slice]) -> bool:
    """Whether a log this size loads into a copy of the existing warehouse rather than in one transaction on it.

    One transaction holds every batch until its commit: 1M trajectories (10 GB of log) into an existing file
    spilled 28 GB to DuckDB's temp folder and had written an 11.6 GB WAL, at 1.9 GB RSS, when the disk ran out.
    A log larger than one batch and than the file loads into a copy (100k new into a 100k warehouse: 22-24 s
    against 45-52 s in place); a smaller one is cheaper in place than a copy of the file (30k new into a 1M
    warehouse: 8.7-11.6 s against 26-38 s) and its room is checked for the transaction's spill and WAL. A file
    with other hard links stays in place: the copy's rename would take only this name to the new rows.
    """
    size = _input_bytes(sources)
    if size <= _BATCH_BYTES:
        return False
    try:
        stat = Path(os.path.realpath(target)).stat()
    except OSError:
        return False
    return stat.st_nlink == 1 and size > _COPY_ABOVE_FILE_FRACTION * stat.st_size


def _load_into_copy(target: Path, load: Callable[..., None], report: IngestReport, *, skip_stored: bool,
                    input_bytes: int) -> None:
    """Load into a copy of the existing warehouse, committed batch by batch, and give the complete copy its name.

    Memory and temp disk stay bounded by the batch, as for a new file; a failed or killed ingest leaves the
    warehouse's bytes as they were, and only a side file the next ingest sweeps.
    """
    real = Path(os.path.realpath(target))  # a link is followed: the file it names is replaced
    side = _side_path(real)
    try:
        # Held open to the end: DuckDB's lock keeps every other writer out until the copy has replaced the file,
        # so none commits to the file the copy is about to replace. It also answers the stored-hash lookups:
        # the warehouse as committed before this ingest, as in the one-transaction load.
        with open_warehouse(real) as held:
            if real.with_name(real.name + ".wal").exists():
                held.execute("CHECKPOINT")  # the copy is the file alone
            check_room(target, input_bytes, real.stat().st_size)
            _copy_in_a_child(real, side)
            shutil.copymode(real, side)
            stored = held.cursor() if skip_stored else None
            try:
                load(side, report=report, skip_stored=skip_stored, new_file=True, shown=target, stored_from=stored)
            finally:
                if stored is not None:
                    stored.close()
            os.replace(side, real)
    except WarehouseFileError as exc:  # named after the path the user gave
        raise WarehouseFileError(str(exc).replace(str(side), str(target)).replace(str(real), str(target))) from None
    finally:
        for leftover in (side, side.with_name(side.name + ".wal")):
            leftover.unlink(missing_ok=True)


def _copy_in_a_child(source: Path, dest: Path) -> None:
    """Copy the file from another process: DuckDB's lock is a POSIX record lock, which this process loses on
    closing any descriptor of the file it locked, so a copy read here would free the warehouse to other writers."""
    done = subprocess.run([sys.executable, "-c", _COPY_SCRIPT, str(source), str(dest)], capture_output=True, text=True)
    if done.returncode != 0:  # the child's exit status is the errno it met (a full disk: ENOSPC)
        code = done.returncode if 0 < done.returncode < 256 and os.strerror(done.returncode) else errno.EIO
        raise OSError(code, os.strerror(code), str(dest))


_COPY_SCRIPT = """import shutil, sys
try:
    shutil.copyfile(sys.argv[1], sys.argv[2])
except OSError as exc:
    sys.exit(exc.errno or 1)
"""


def _publish(side: Path, target: Path) -> bool:
    """Give the complete side file the warehouse's name, unless a warehouse appeared there meanwhile."""
    try:
        os.link(side, target)  # unlike a rename, never replaces a file that appeared at target
    except FileExistsError:
        return False
    except OSError:  # a filesystem without hard links
        if target.exists():
            return False
        os.replace(side, target)
    return True


def _load(path: Path, sources: Sequence[_Slice], report: IngestReport, *, progress: bool | None,
          on_duplicate: OnDuplicate | None, per_run_questions: bool, skip_stored: bool,
          labels: LabelFiles, labels_run: str | None, new_file: bool = False, shown: Path | None = None,
          stored_from: duckdb.DuckDBPyConnection | None = None) -> None:
    """Validate and load the sources into the warehouse at path (`shown` in messages): one transaction, or for a
    side file (new, or a copy) one per batch; `stored_from` answers the stored-hash lookups instead of path."""
    with tempfile.TemporaryDirectory(prefix=f"{_BATCH_DIR_PREFIX}{os.getpid()}-") as workdir:
        # A new file is removed if the load fails, so it is written the fast way (open_warehouse's new_file).
        with open_warehouse(path, new_file=new_file) as con:
            size = _input_bytes(sources)
            check_room(shown or path, size, in_place=not new_file)
            # Read on the validating thread: the warehouse as committed, i.e. before this ingest.
            own = skip_stored and stored_from is None
            stored = con.cursor() if own else stored_from
            try:
                with transaction(con):
                    show = bool(progress) or (progress is None and size > _BATCH_BYTES)
                    con.execute(_named_sql("ingest_ids.sql"))
                    empty_before = not con.execute("SELECT count(*) FROM trajectories").fetchall()[0][0]
                    with tqdm(desc="load", unit="batch", disable=not show, leave=False) as bar:
                        for seq, (batch, source) in enumerate(prefetched(_batches(
                                sources, workdir, progress, report, on_duplicate, stored))):
                            _load_batch(con, batch, source, seq, per_run_questions, empty_before=empty_before)
                            if batch.path is not None:
                                batch.path.unlink()
                                bar.update()
                            if new_file:
                                con.execute("COMMIT")
                                con.execute("BEGIN TRANSACTION")
                    report.new, report.unchanged, met = con.execute(_named_sql("ingest_counts.sql")).fetchall()[0]
                    report.replaced = met - report.new - report.unchanged
                    con.execute("DROP TABLE ingest_ids")
                    # Labels point at steps, so they load after the logs, in the same transaction.
                    for name, labelled, *method in labels:  # (file, labels[, method]): a method's predictions
                        report.label_loads.append(load_label_records(con, labelled, name, labels_run,
                                                                     method[0] if method else None))
            finally:
                if own and stored is not None:
                    stored.close()
            if new_file:
                con.execute("CHECKPOINT")  # every row in the file itself, none left in its WAL


def ingest_paths(
    db_path: str | Path | None, paths: Sequence[str | Path], *, progress: bool | None = None,
    on_duplicate: OnDuplicate | None = None, per_run_questions: bool = False,
    source_names: Sequence[str] | None = None, labels: LabelFiles = (), labels_run: str | None = None,
) -> IngestReport:
    """Validate and load every file, all or nothing: in one transaction, or for a warehouse this call creates, batch by
    batch into a side file that takes the warehouse's name once complete (memory bounded by the batch).

    `labels`: (label file name, its labelled trajectories) pairs, resolved against the warehouse after
    the logs load (warehouse._labels.load_label_records), within `labels_run` when given.

    `source_names` (one per path) is what `source_file` records, e.g. the original file an importer
    converted into the temporary log at `path`.

    The next batch is validated on a worker thread while DuckDB loads the current one; any bad
    line or conflicting gold rolls the whole transaction back (the file keeps its bytes), and the
    side file of a warehouse this call was creating is removed. on_duplicate ('last' / 'first') keeps one
    copy of an id a file holds twice with different content; per_run_questions keys every
    question by its run, so runs that disagree about a question's gold are stored apart.
    """
    names = list(source_names) if source_names is not None else [None] * len(paths)
    slices = [_Slice(Path(p), name=n) for p, n in zip(paths, names, strict=True)]
    return _ingest(db_path, slices, progress=progress, on_duplicate=on_duplicate,
                   per_run_questions=per_run_questions, labels=labels, labels_run=labels_run)


@dataclass(frozen=True)
class LogSliceLoad:
    """What ingest_log_slice loaded and where the next slice starts."""

    report: IngestReport
    next_offset: int
    next_line: int


def ingest_log_slice(db_path: str | Path | None, path: str | Path, *, start: int = 0,
                     first_line: int = 1) -> LogSliceLoad:
    """Load the complete lines a log holds from byte offset `start` on (a live run's new records)."""
    source = _Slice(Path(path), start=start, first_line=first_line, complete_lines_only=True)
    # A live log's new lines are new: reading every stored hash for each slice would cost more than it saves.
    report = _ingest(db_path, [source], progress=False, on_duplicate=None, per_run_questions=False,
                     skip_stored=False)
    return LogSliceLoad(report, next_offset=source.end or start, next_line=first_line + source.lines)


def ingest_trajectories(db_path: str | Path | None, trajectories: Iterable[Trajectory]) -> IngestReport:
    """Ingest in-memory records (importers, the Upload page) through the same path as a log file."""
    # Named after this process, so a sweep tells a live ingest's file from one a killed process left.
    fd, tmp = tempfile.mkstemp(suffix=".jsonl", prefix=f"{_RECORDS_FILE_PREFIX}{os.getpid()}-")
    try:
        with os.fdopen(fd, "wb") as out:
            for trajectory in trajectories:
                out.write(encode(trajectory) + b"\n")
        return ingest_paths(db_path, [tmp], progress=False)
    finally:
        os.unlink(tmp)


def _load_table(con, table: str, arrow: pa.Table) -> int:
    con.register("incoming_rows", arrow)
    keys = ", ".join(UPSERT_KEYS[table])
    columns = ", ".join(arrow.column_names)
    try:
        with transaction(con):
            # Rows that add or change a stored one: the funnel facts of trajectories reading them are recomputed.
            con.execute(f"CREATE OR REPLACE TEMP TABLE upserted_keys AS SELECT DISTINCT {keys} FROM "
                        f"(SELECT {columns} FROM incoming_rows EXCEPT SELECT {columns} FROM {table})")
            con.execute(f"DELETE FROM {table} WHERE ({keys}) IN (SELECT ({keys}) FROM incoming_rows)")
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
            refresh_on(con, table)  # each fact unit's refresh_<table>.sql, and the units reading them
            con.execute("DROP TABLE upserted_keys")
    finally:
        con.unregister("incoming_rows")
    return arrow.num_rows


def load_chunks(db_path: str | Path | None, chunks: Iterable[Chunk], dataset: str) -> int:
    """Upsert a corpus (replacing chunks with the same dataset and chunk id)."""
    rows = [msgspec.structs.asdict(c) for c in chunks]
    arrow = pa.table(
        {
            "dataset": [c["dataset"] or dataset for c in rows],
            "chunk_id": [c["chunk_id"] for c in rows],
            "title": [c["title"] for c in rows],
            "text": [c["text"] for c in rows],
        }
    )
    with open_warehouse(db_path) as con:
        return _load_table(con, "chunks", arrow)


_GOLD_HOPS = pa.list_(pa.struct([("chunk_id", pa.string()), ("entity", pa.string()),
                                  ("answers", pa.list_(pa.string()))]))


def load_questions(db_path: str | Path | None, questions: Iterable[Question], dataset: str) -> int:
    """Upsert dataset questions (so questions never run still appear in breakdowns of coverage)."""
    rows = [msgspec.structs.asdict(q) for q in questions]
    arrow = pa.table(
        {
            "dataset": [q["dataset"] or dataset for q in rows],
            "question_id": [q["question_id"] for q in rows],
            "text": [q["text"] for q in rows],
            "gold_answer": [q["gold_answer"] for q in rows],
            "aliases": pa.array([q["aliases"] for q in rows], type=pa.list_(pa.string())),
            "question_type": [q["question_type"] for q in rows],
            "hop_count": pa.array([q["hop_count"] for q in rows], type=pa.int32()),
            "gold_chunk_ids": pa.array([q["gold_chunk_ids"] for q in rows], type=pa.list_(pa.string())),
            "gold_match": [q["gold_match"] for q in rows],
            "gold_paragraphs": pa.array([q["gold_paragraphs"] for q in rows], type=pa.int32()),
            "gold_order": pa.array([q["gold_order"] for q in rows], type=pa.string()),
            "gold_hops": pa.array([[msgspec.structs.asdict(h) for h in q["gold_hops"]] for q in rows],
                                  type=_GOLD_HOPS),
            "distractor_chunk_ids": pa.array([q["distractor_chunk_ids"] for q in rows], type=pa.list_(pa.string())),
        }
    )
    with open_warehouse(db_path) as con:
        return _load_table(con, "questions", arrow)
