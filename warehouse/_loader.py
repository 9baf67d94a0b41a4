"""Bulk, idempotent, atomic loading of canonical trajectory logs into the warehouse."""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import msgspec
import pyarrow as pa
from tqdm import tqdm

from trajscope.format import Chunk, Question, RecordError, Trajectory, decode_trajectory, encode

from ._connection import open_warehouse
from ._duckdb_types import read_json_columns

_PROGRESS_MIN_BYTES = 8 * 1024 * 1024


@dataclass
class IngestReport:
    """What an ingest did: counts of new, replaced and unchanged trajectories per call."""

    files: list[str] = field(default_factory=list)
    records: int = 0
    new: int = 0
    replaced: int = 0
    unchanged: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        return (
            f"{self.records} trajectories from {len(self.files)} file(s): {self.new} new, "
            f"{self.replaced} replaced, {self.unchanged} unchanged ({self.seconds:.1f}s)"
        )


@dataclass
class _Manifest:
    """Per file: the last occurrence of each trajectory id and its canonical-content hash."""

    path: Path
    ids: list[str] = field(default_factory=list)
    hashes: list[str] = field(default_factory=list)
    records: int = 0


def _record_hash(trajectory: Trajectory) -> str:
    return hashlib.blake2b(encode(trajectory), digest_size=16).hexdigest()


def validate_log(path: str | Path, *, progress: bool | None = None) -> _Manifest:
    """Stream-validate a canonical JSONL log; raises RecordError at the first bad line."""
    path = Path(path)
    if not path.exists():
        raise RecordError(path, 0, None, "file not found")
    size = path.stat().st_size
    show = progress if progress is not None else size >= _PROGRESS_MIN_BYTES
    latest: dict[str, str] = {}
    manifest = _Manifest(path)
    with open(path, "rb") as fh, tqdm(
        total=size, unit="B", unit_scale=True, desc=f"validate {path.name}", disable=not show, leave=False
    ) as bar:
        for lineno, raw in enumerate(fh, start=1):
            bar.update(len(raw))
            if not raw.strip():
                continue
            trajectory = decode_trajectory(raw, path=path, line=lineno)
            latest.pop(trajectory.trajectory_id, None)  # re-insert so dict order = last occurrence
            latest[trajectory.trajectory_id] = _record_hash(trajectory)
            manifest.records += 1
    manifest.ids = list(latest)
    manifest.hashes = list(latest.values())
    return manifest


_STAGE_SQL = """
CREATE OR REPLACE TEMP TABLE stage AS
SELECT * EXCLUDE (ord) FROM (
    SELECT row_number() OVER () AS ord, *
    FROM read_json($path, format = 'newline_delimited', columns = {columns},
                   maximum_object_size = 268435456)
)
WHERE trajectory_id IN (SELECT trajectory_id FROM incoming_changed)
QUALIFY row_number() OVER (PARTITION BY trajectory_id ORDER BY ord DESC) = 1
"""

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
    """INSERT INTO trajectories
       SELECT s.trajectory_id, s.run.run_id, s.question.question_id,
              coalesce(s.question.dataset, s.run.dataset, ''), s.question.dataset, s.schema_version, s.final_answer,
              s.end_reason, s.error, s.started_at, s.finished_at, s.total_tokens_in,
              s.total_tokens_out, s.total_cost_usd, s.total_latency_ms, s.metadata,
              len(s.steps), i.record_hash, $source_file, current_timestamp
       FROM stage s JOIN incoming_changed i USING (trajectory_id)""",
    """CREATE OR REPLACE TEMP TABLE stage_steps AS
       SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st
       FROM stage""",
    """INSERT INTO steps
       SELECT trajectory_id, step_index, st.kind, st.tool_name, st.args, st.observation, st.raw,
              st.thought, st.tokens_in, st.tokens_out, st.latency_ms, st.cost_usd, st.query,
              st.deduplicated, st.chunk_ids, st.answer, st.gate, st.rejected_answer, st.reason,
              st.phase, st.message, st.error_type
       FROM stage_steps""",
    """INSERT INTO candidates
       SELECT trajectory_id, step_index, c.chunk_id, c.rank, c.score, c.retriever, c.snippet
       FROM (SELECT trajectory_id, step_index, unnest(st.candidates) AS c FROM stage_steps
             WHERE len(st.candidates) > 0)""",
    """INSERT INTO reads
       SELECT trajectory_id, step_index, passage_index, p.chunk_id, p.text, p.is_new, kind
       FROM (SELECT trajectory_id, step_index, st.kind AS kind,
                    unnest(range(len(st.passages))) AS passage_index, unnest(st.passages) AS p
             FROM stage_steps WHERE len(st.passages) > 0)""",
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

_CHILD_TABLES = ("trajectories", "steps", "candidates", "reads", "register_events", "judgments")


def _load_manifest(con: duckdb.DuckDBPyConnection, manifest: _Manifest, report: IngestReport) -> None:
    incoming = pa.table({"trajectory_id": manifest.ids, "record_hash": manifest.hashes})
    con.register("incoming_arrow", incoming)
    con.execute(
        """CREATE OR REPLACE TEMP TABLE incoming_changed AS
           SELECT i.trajectory_id, i.record_hash, t.trajectory_id IS NOT NULL AS existed
           FROM incoming_arrow i
           LEFT JOIN trajectories t USING (trajectory_id)
           WHERE t.record_hash IS DISTINCT FROM i.record_hash"""
    )
    con.unregister("incoming_arrow")
    changed, existed = con.execute(
        "SELECT count(*), count(*) FILTER (existed) FROM incoming_changed"
    ).fetchone()
    report.records += manifest.records
    report.unchanged += len(manifest.ids) - changed
    report.new += changed - existed
    report.replaced += existed
    if not changed:
        return
    for table in _CHILD_TABLES:
        if existed:
            con.execute(
                f"DELETE FROM {table} WHERE trajectory_id IN "
                "(SELECT trajectory_id FROM incoming_changed WHERE existed)"
            )
    columns = "{" + ", ".join(
        f"'{name}': '{type_}'" for name, type_ in read_json_columns(Trajectory).items()
    ) + "}"
    con.execute(_STAGE_SQL.format(columns=columns), {"path": str(manifest.path)})
    for sql in _INSERT_SQL:
        params = {"source_file": str(manifest.path)} if "$source_file" in sql else None
        con.execute(sql, params)
    for temp in ("stage", "stage_steps", "stage_questions"):
        con.execute(f"DROP TABLE IF EXISTS {temp}")


def ingest_paths(
    db_path: str | Path | None, paths: Sequence[str | Path], *, progress: bool | None = None
) -> IngestReport:
    """Validate every file first, then load all of them in one transaction (all or nothing)."""
    start = time.perf_counter()
    manifests = [validate_log(p, progress=progress) for p in paths]
    report = IngestReport(files=[str(p) for p in paths])
    with open_warehouse(db_path) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            for manifest in manifests:
                _load_manifest(con, manifest, report)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
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
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"DELETE FROM {table} WHERE ({keys}) IN (SELECT ({keys}) FROM incoming_rows)")
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
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
