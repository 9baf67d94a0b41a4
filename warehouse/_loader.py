"""Bulk, idempotent, atomic loading of canonical trajectory logs into the warehouse."""
from __future__ import annotations

import functools
import hashlib
import os
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa
from tqdm import tqdm

from trajscope.format import Chunk, Question, RecordError, Trajectory, decode_trajectory, encode

from ._connection import default_db_path, open_warehouse, transaction
from ._prefetch import prefetched
from ._duckdb_types import read_json_columns

_PROGRESS_MIN_BYTES = 8 * 1024 * 1024


@dataclass
class IngestReport:
    """What an ingest did: counts of new, replaced and unchanged records per call."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    new: int = 0
    replaced: int = 0
    unchanged: int = 0
    seconds: float = 0.0
    noun: str = "trajectories"

    def summary(self) -> str:
        where = f" from {len(self.files)} file(s)" if self.files else ""
        return (
            f"{self.records} {self.noun}{where}: {self.new} new, {self.replaced} replaced, "
            f"{self.unchanged} unchanged ({self.seconds:.1f}s)"
        )


_BATCH_BYTES = 48 * 1024 * 1024


@dataclass
class _Batch:
    """A slice of a log copied to a temporary file; ids and hashes are of the last copy of each id in it."""

    path: Path
    ids: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    line_ids: list[str] = field(default_factory=list)


@dataclass
class _Manifest:
    """A validated log: record count and its batches (empty when validated without a workdir)."""

    path: Path
    records: int = 0
    batches: list[_Batch] = field(default_factory=list)


def _line_hash(raw: bytes) -> str:
    # Hash of the line as written: identical records hash alike, so a re-ingest is detected as
    # unchanged without re-encoding every record.
    return hashlib.blake2b(raw.strip(), digest_size=16).hexdigest()


def validate_log(
    path: str | Path, *, progress: bool | None = None, workdir: str | Path | None = None,
    batch_bytes: int | None = None,
) -> _Manifest:
    """Stream-validate a canonical JSONL log (RecordError at the first bad line).

    With a workdir, the lines are also split into batch files of about batch_bytes, so loading
    needs memory for one batch, never for the whole file.
    """
    manifest = _Manifest(Path(path))
    for batch, records in _split_log(path, progress=progress, workdir=workdir, batch_bytes=batch_bytes):
        manifest.records += records
        if batch is not None:
            manifest.batches.append(batch)
    return manifest


def _split_log(
    path: str | Path, *, progress: bool | None, workdir: str | Path | None, batch_bytes: int | None,
) -> Iterator[tuple[_Batch | None, int]]:
    """Validate a log line by line, yielding (batch, records in it) as each batch file is complete.

    A batch keeps the last copy of an id it holds twice; a copy in a later batch replaces it at
    load time, so the last copy in the file wins either way. Without a workdir the batch is None.
    """
    path = Path(path)
    batch_bytes = batch_bytes or _BATCH_BYTES
    if not path.exists():
        raise RecordError(path, 0, None, "file not found")
    size = path.stat().st_size
    show = progress if progress is not None else size >= _PROGRESS_MIN_BYTES
    batch: _Batch | None = None
    latest: dict[str, tuple[int, str]] = {}  # id -> (line within the batch, hash)
    out = None
    written = records = n_batches = 0
    try:
        with open(path, "rb") as fh, tqdm(
            total=size, unit="B", unit_scale=True, desc=f"validate {path.name}", disable=not show,
            leave=False,
        ) as bar:
            for lineno, raw in enumerate(fh, start=1):
                bar.update(len(raw))
                if not raw.strip():
                    continue
                trajectory = decode_trajectory(raw, path=path, line=lineno)
                records += 1
                if workdir is None:
                    continue
                if out is not None and written >= batch_bytes:
                    out.close()
                    out = None
                    yield _finish_batch(batch, latest), records
                    records = 0
                if out is None:
                    batch = _Batch(Path(workdir) / f"{path.name}.{n_batches:05d}.jsonl")
                    n_batches += 1
                    latest = {}
                    out = open(batch.path, "wb")
                    written = 0
                latest[trajectory.trajectory_id] = (len(batch.line_ids), _line_hash(raw))
                batch.line_ids.append(trajectory.trajectory_id)
                out.write(raw.rstrip(b"\r\n") + b"\n")
                written += len(raw)
    finally:
        if out is not None:
            out.close()
    if out is not None:
        yield _finish_batch(batch, latest), records
    elif workdir is None:
        yield None, records


def _finish_batch(batch: _Batch, latest: dict[str, tuple[int, str]]) -> _Batch:
    for tid, (_, digest) in latest.items():
        batch.ids.append(tid)
        batch.hashes.append(digest)
    if len(latest) < len(batch.line_ids):
        _keep_last_occurrences(batch, latest)
    return batch


def _keep_last_occurrences(batch: _Batch, latest: dict[str, tuple[int, str]]) -> None:
    # A batch that repeats a trajectory id (a rerun appended to the log) keeps its last copy only.
    kept = batch.path.with_suffix(".dedup.jsonl")
    with open(batch.path, "rb") as src, open(kept, "wb") as dst:
        for i, raw in enumerate(src):
            if latest[batch.line_ids[i]][0] == i:
                dst.write(raw)
    os.replace(kept, batch.path)


_STAGE_SQL = """
CREATE OR REPLACE TEMP TABLE stage AS
SELECT *
FROM read_json($path, format = 'newline_delimited', columns = {columns},
               maximum_object_size = 67108864)
WHERE trajectory_id IN (SELECT trajectory_id FROM incoming_changed)
"""

@functools.cache
def _stage_sql() -> str:
    columns = ", ".join(f"'{name}': '{type_}'" for name, type_ in read_json_columns(Trajectory).items())
    return _STAGE_SQL.format(columns="{" + columns + "}")


_INSERT_SQL = [
    # runs: the newest settings seen for a run id win
    """DELETE FROM runs WHERE run_id IN (SELECT DISTINCT run.run_id FROM stage)""",
    """INSERT INTO runs
       SELECT r.run_id, r.source, r.dataset, r.controller, r.condition, r.intervention, r.model,
              r.model_settings.temperature, r.model_settings.max_tokens,
              r.model_settings.reasoning_effort, r.model_settings.protocol, r.model_settings.base_url,
              r.retriever.kind, r.retriever.top_k, r.retriever.rrf_k, r.retriever.embedding_model,
              r.retriever.bm25_k1, r.retriever.bm25_b, r.seed, r.code_version, r.started_at, r.config
       FROM (SELECT any_value(run) AS r FROM stage GROUP BY run.run_id)""",
    """CREATE OR REPLACE TEMP TABLE stage_questions AS
       SELECT coalesce(q.dataset, run_dataset, '') AS dataset, q.*
       FROM (SELECT any_value(question) AS q, any_value(run.dataset) AS run_dataset
             FROM stage GROUP BY coalesce(question.dataset, run.dataset, ''), question.question_id)""",
    """DELETE FROM questions WHERE (dataset, question_id) IN
       (SELECT (dataset, question_id) FROM stage_questions)""",
    """INSERT INTO questions
       SELECT dataset, question_id, text, gold_answer, aliases, question_type, hop_count,
              gold_chunk_ids, gold_match
       FROM stage_questions""",
    """CREATE OR REPLACE TEMP TABLE stage_steps AS
       SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st
       FROM stage""",
    """CREATE OR REPLACE TEMP TABLE stage_candidates AS
       SELECT trajectory_id, step_index, c.chunk_id, c.rank, c.score, c.retriever, c.snippet
       FROM (SELECT trajectory_id, step_index, unnest(st.candidates) AS c FROM stage_steps
             WHERE len(st.candidates) > 0)""",
    """CREATE OR REPLACE TEMP TABLE stage_reads AS
       SELECT trajectory_id, step_index, passage_index, p.chunk_id, p.text, p.is_new, kind AS via
       FROM (SELECT trajectory_id, step_index, st.kind AS kind,
                    unnest(range(len(st.passages))) AS passage_index, unnest(st.passages) AS p
             FROM stage_steps WHERE len(st.passages) > 0)""",
    # Gold reach is fixed once a trajectory is written, so it is computed here, per batch, rather
    # than by every query joining millions of candidate rows.
    """CREATE OR REPLACE TEMP TABLE stage_gold AS
       WITH gold AS (
           SELECT DISTINCT trajectory_id, unnest(question.gold_chunk_ids) AS chunk_id
           FROM stage WHERE len(question.gold_chunk_ids) > 0
       ),
       seen AS (
           SELECT trajectory_id, chunk_id, min(step_index) AS first_retrieved_step, min(rank) AS best_rank
           FROM stage_candidates WHERE (trajectory_id, chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
           GROUP BY ALL
       ),
       got AS (
           SELECT trajectory_id, chunk_id,
                  min(step_index) FILTER (via = 'read')              AS first_read_step,
                  min(step_index) FILTER (via = 'context_injection') AS first_injected_step
           FROM stage_reads WHERE (trajectory_id, chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
           GROUP BY ALL
       )
       SELECT g.trajectory_id, g.chunk_id, s.first_retrieved_step, s.best_rank,
              r.first_read_step, r.first_injected_step
       FROM gold g
       LEFT JOIN seen s USING (trajectory_id, chunk_id)
       LEFT JOIN got r USING (trajectory_id, chunk_id)""",
    # Register resolution is fixed by the record too: the last status of each item.
    """CREATE OR REPLACE TEMP TABLE stage_register AS
       WITH last AS (
           SELECT trajectory_id, e.item_id, arg_max(e.to_status, event_index) AS status
           FROM (SELECT trajectory_id, unnest(range(len(register_events))) AS event_index,
                        unnest(register_events) AS e
                 FROM stage WHERE len(register_events) > 0)
           GROUP BY ALL
       )
       SELECT trajectory_id,
              count(*)                                   AS n_register_items,
              count(*) FILTER (status = 'resolved')      AS n_register_resolved,
              bool_and(status IN ('resolved', 'retired')) AND count(*) FILTER (status = 'resolved') > 0
                                                         AS register_complete
       FROM last GROUP BY trajectory_id""",
    """INSERT INTO trajectories
       WITH agg AS (
           SELECT trajectory_id,
                  count(*) FILTER (list_contains(search_kinds(), st.kind)) AS search_count,
                  count(*) FILTER (st.kind = 'read') AS read_count,
                  count(*) FILTER (list_contains(agent_action_kinds(), st.kind)) AS agent_actions,
                  count(*) FILTER (st.kind = 'gate_rejection') AS gate_rejections,
                  count(*) FILTER (st.kind = 'context_injection') AS injections,
                  count(*) FILTER (st.kind = 'error') AS error_steps,
                  sum(st.tokens_in) AS tokens_in, sum(st.tokens_out) AS tokens_out,
                  sum(st.cost_usd) AS cost_usd, sum(st.latency_ms) AS latency_ms,
                  count(*) FILTER (st.cached) AS cached_calls,
                  sum(st.cost_usd) FILTER (st.cached) AS cached_cost_usd
           FROM stage_steps GROUP BY trajectory_id
       ),
       gold AS (
           SELECT trajectory_id,
                  count(*)                                                 AS n_gold,
                  count(*) FILTER (first_retrieved_step IS NOT NULL)       AS n_gold_retrieved,
                  count(*) FILTER (first_read_step IS NOT NULL)            AS n_gold_read,
                  count(*) FILTER (first_retrieved_step IS NOT NULL AND first_read_step IS NULL
                                   AND first_injected_step IS NULL)        AS n_gold_snippet_only,
                  count(*) FILTER (first_retrieved_step IS NOT NULL OR first_read_step IS NOT NULL
                                   OR first_injected_step IS NOT NULL)     AS n_gold_reached
           FROM stage_gold GROUP BY trajectory_id
       ),
       passages AS (
           SELECT trajectory_id, count(DISTINCT p.chunk_id) AS passages_read
           FROM (SELECT trajectory_id, unnest(st.passages) AS p FROM stage_steps
                 WHERE st.kind = 'read' AND len(st.passages) > 0)
           GROUP BY trajectory_id
       )
       SELECT s.trajectory_id, s.run.run_id, s.question.question_id,
              coalesce(s.question.dataset, s.run.dataset, ''), s.question.dataset, s.schema_version,
              s.final_answer, s.end_reason, s.error, s.started_at, s.finished_at, s.total_tokens_in,
              s.total_tokens_out, s.total_cost_usd, s.total_latency_ms, s.metadata, len(s.steps),
              coalesce(a.search_count, 0), coalesce(a.read_count, 0), coalesce(a.agent_actions, 0),
              coalesce(a.gate_rejections, 0), coalesce(a.injections, 0), coalesce(a.error_steps, 0),
              coalesce(p.passages_read, 0), a.tokens_in, a.tokens_out, a.cost_usd, a.latency_ms,
              coalesce(g.n_gold, 0), coalesce(g.n_gold_retrieved, 0), coalesce(g.n_gold_read, 0),
              coalesce(g.n_gold_snippet_only, 0), coalesce(g.n_gold_reached, 0),
              coalesce(r.n_register_items, 0), coalesce(r.n_register_resolved, 0),
              coalesce(r.register_complete, false),
              i.record_hash, $source_file, current_timestamp,
              coalesce(a.cached_calls, 0), a.cached_cost_usd
       FROM stage s
       JOIN incoming_changed i USING (trajectory_id)
       LEFT JOIN agg a USING (trajectory_id)
       LEFT JOIN passages p USING (trajectory_id)
       LEFT JOIN gold g USING (trajectory_id)
       LEFT JOIN stage_register r USING (trajectory_id)""",
    """INSERT INTO steps
       SELECT trajectory_id, step_index, st.kind, st.tool_name, st.args, st.observation, st.raw,
              st.thought, st.tokens_in, st.tokens_out, st.latency_ms, st.cost_usd, st.query,
              st.deduplicated, st.chunk_ids, st.answer, st.gate, st.rejected_answer, st.reason,
              st.phase, st.message, st.error_type, st.cached
       FROM stage_steps""",
    """INSERT INTO candidates SELECT * FROM stage_candidates""",
    """INSERT INTO reads SELECT * FROM stage_reads""",
    """INSERT INTO gold_evidence_facts SELECT * FROM stage_gold""",
    """INSERT INTO register_events
       SELECT trajectory_id, event_index, e.item_id, e.step_index, e.sub_question, e.from_status,
              e.to_status, e.note, e.reason, e.supporting_chunk_ids
       FROM (SELECT trajectory_id, unnest(range(len(register_events))) AS event_index,
                    unnest(register_events) AS e
             FROM stage WHERE len(register_events) > 0)""",
    """INSERT INTO judgments (trajectory_id, judge, score, judge_model, rationale, origin)
       SELECT trajectory_id, j.judge, j.score, j.judge_model, j.rationale, 'record'
       FROM (SELECT trajectory_id, unnest(judgments) AS j FROM stage WHERE len(judgments) > 0)""",
]

_CHILD_TABLES = ("trajectories", "steps", "candidates", "reads", "register_events", "judgments",
                 "gold_evidence_facts")


def _load_batch(con: duckdb.DuckDBPyConnection, batch: _Batch, source: Path, before: dict[str, str | None]) -> None:
    """Load a batch's new and changed trajectories; `before` gets each id's stored hash when first met."""
    incoming = pa.table({"trajectory_id": batch.ids, "record_hash": batch.hashes})
    con.register("incoming_arrow", incoming)
    # One join with the stored trajectories serves both the report (hash before this call) and
    # the choice of what to load (new or changed records only).
    stored = con.execute(
        "SELECT i.trajectory_id, i.record_hash, t.record_hash FROM incoming_arrow i "
        "LEFT JOIN trajectories t USING (trajectory_id)"
    ).fetchall()
    con.unregister("incoming_arrow")
    changed_rows = []
    for tid, digest, stored_digest in stored:
        before.setdefault(tid, stored_digest)
        if digest != stored_digest:
            changed_rows.append((tid, digest, stored_digest is not None))
    if not changed_rows:
        return
    tids, digests, existed_flags = zip(*changed_rows)
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
    con.execute(_stage_sql(), {"path": str(batch.path)})
    for sql in _INSERT_SQL:
        params = {"source_file": str(source)} if "$source_file" in sql else None
        con.execute(sql, params)
    for temp in ("stage", "stage_steps", "stage_questions", "stage_candidates", "stage_reads",
                 "incoming_changed"):
        con.execute(f"DROP TABLE IF EXISTS {temp}")


def _batches(paths: Sequence[Path], workdir: str, progress: bool | None,
             report: IngestReport) -> Iterator[tuple[_Batch, Path]]:
    for path in paths:
        for batch, records in _split_log(path, progress=progress, workdir=workdir, batch_bytes=None):
            report.records += records
            yield batch, path


def ingest_paths(
    db_path: str | Path | None, paths: Sequence[str | Path], *, progress: bool | None = None
) -> IngestReport:
    """Validate and load every file in one transaction: all or nothing.

    The next batch is validated on a worker thread while DuckDB loads the current one; any bad
    line rolls the whole transaction back, and a warehouse file this call created is removed again.
    """
    start = time.perf_counter()
    report = IngestReport(files=[str(p) for p in paths])
    target = Path(db_path) if db_path else default_db_path()
    created = not target.exists()
    before: dict[str, str | None] = {}  # trajectory id -> stored record hash when first met (None: new)
    final: dict[str, str] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="trajscope-batches-") as workdir:
            with open_warehouse(target) as con, transaction(con):
                size = sum(Path(p).stat().st_size for p in paths if Path(p).is_file())
                show = bool(progress) or (progress is None and size > _BATCH_BYTES)
                with tqdm(desc="load", unit="batch", disable=not show, leave=False) as bar:
                    for batch, source in prefetched(_batches([Path(p) for p in paths], workdir, progress, report)):
                        _load_batch(con, batch, source, before)
                        final.update(zip(batch.ids, batch.hashes))
                        batch.path.unlink()
                        bar.update()
    except BaseException:
        if created:
            for leftover in (target, target.with_name(target.name + ".wal")):
                leftover.unlink(missing_ok=True)
        raise
    report.new = sum(1 for tid in final if before[tid] is None)
    report.unchanged = sum(1 for tid, digest in final.items() if before[tid] == digest)
    report.replaced = len(final) - report.new - report.unchanged
    report.seconds = time.perf_counter() - start
    return report


def ingest_trajectories(db_path: str | Path | None, trajectories: Iterable[Trajectory]) -> IngestReport:
    """Ingest in-memory records (engine runs, importers) through the same path as a log file."""
    fd, tmp = tempfile.mkstemp(suffix=".jsonl", prefix="trajscope-ingest-")
    try:
        with os.fdopen(fd, "wb") as out:
            for trajectory in trajectories:
                out.write(encode(trajectory) + b"\n")
        return ingest_paths(db_path, [tmp], progress=False)
    finally:
        os.unlink(tmp)


def _load_table(con, table: str, key: Sequence[str], arrow: pa.Table) -> int:
    con.register("incoming_rows", arrow)
    keys = ", ".join(key)
    try:
        with transaction(con):
            con.execute(f"DELETE FROM {table} WHERE ({keys}) IN (SELECT ({keys}) FROM incoming_rows)")
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
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
        return _load_table(con, "chunks", ("dataset", "chunk_id"), arrow)


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
        }
    )
    with open_warehouse(db_path) as con:
        return _load_table(con, "questions", ("dataset", "question_id"), arrow)
