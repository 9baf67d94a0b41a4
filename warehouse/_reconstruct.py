"""Rebuilding canonical trajectories from the warehouse tables (the inverse of the loader)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import duckdb
import msgspec

from trajscope.format import CAPABILITY_NAMES, STEP_TYPES, ForkOrigin, HumanLabel, Trajectory

if TYPE_CHECKING:  # a read session queries like a connection
    from trajscope.warehouse.read import Reader

_STEP_FIELDS = {t.__struct_config__.tag: set(t.__struct_fields__) for t in STEP_TYPES}
_JSON_COLUMNS = {"args", "config", "metadata", "capability_reasons"}
_LABEL_FIELDS = tuple(HumanLabel.__struct_fields__)
_FORK_FIELDS = tuple(ForkOrigin.__struct_fields__)
_CAPABILITY_COLUMNS = {f"cap_{name}": name for name in CAPABILITY_NAMES}


def _rows(con: duckdb.DuckDBPyConnection | Reader, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    out = []
    for row in cur.fetchall():
        record = dict(zip(names, row, strict=False))
        for key in _JSON_COLUMNS & record.keys():
            if isinstance(record[key], str):
                record[key] = json.loads(record[key])
        out.append(record)
    return out


def read_trajectory(con: duckdb.DuckDBPyConnection | Reader, trajectory_id: str) -> Trajectory | None:
    """The canonical record of one stored trajectory, or None if absent."""
    head = _rows(con, "SELECT * FROM trajectories WHERE trajectory_id = ?", [trajectory_id])
    if not head:
        return None
    t = head[0]
    run = _rows(con, "SELECT * FROM runs WHERE run_id = ?", [t["run_id"]])[0]
    question = _rows(
        con, "SELECT * FROM questions WHERE dataset = ? AND question_id = ?", [t["dataset"], t["question_id"]]
    )[0]
    steps = _rows(con, "SELECT * FROM steps WHERE trajectory_id = ? ORDER BY step_index", [trajectory_id])
    candidates = _rows(
        con, "SELECT * FROM candidates WHERE trajectory_id = ? ORDER BY step_index, rank", [trajectory_id]
    )
    passages = _rows(
        con, "SELECT * FROM reads WHERE trajectory_id = ? ORDER BY step_index, passage_index", [trajectory_id]
    )
    events = _rows(con, "SELECT * FROM register_events WHERE trajectory_id = ? ORDER BY event_index", [trajectory_id])
    judgments = _rows(
        con, "SELECT * FROM judgments WHERE trajectory_id = ? AND origin IN ('record', 'import') ORDER BY rowid",
        [trajectory_id]
    )
    labels = _rows(con, "SELECT * FROM human_step_labels WHERE trajectory_id = ? AND origin = 'log' ORDER BY ordinal",
                   [trajectory_id])
    forks = _rows(con, "SELECT * FROM trajectory_forks WHERE trajectory_id = ?", [trajectory_id])

    step_records = []
    for step in steps:
        kind = step["kind"]
        fields = _STEP_FIELDS[kind]
        record = {k: v for k, v in step.items() if k in fields and v is not None}
        record["kind"] = kind
        if "candidates" in fields:
            record["candidates"] = [
                {k: c[k] for k in ("chunk_id", "rank", "score", "retriever", "snippet")}
                for c in candidates if c["step_index"] == step["step_index"]
            ]
        if "passages" in fields:
            record["passages"] = [
                {k: p[k] for k in ("chunk_id", "text", "is_new")}
                for p in passages if p["step_index"] == step["step_index"]
            ]
        step_records.append(record)

    settings = ("temperature", "max_tokens", "reasoning_effort", "protocol", "base_url")
    retriever = {"retriever_kind": "kind", "top_k": "top_k", "rrf_k": "rrf_k",
                 "embedding_model": "embedding_model", "bm25_k1": "bm25_k1", "bm25_b": "bm25_b"}
    profile = ("capabilities_declared", "capability_reasons", *_CAPABILITY_COLUMNS)
    run_record = {k: v for k, v in run.items() if k not in settings and k not in retriever and k not in profile}
    # A recorded profile always stores its declared list (maybe empty); NULL means the log had none.
    run_record["capabilities"] = None if run["capabilities_declared"] is None else {
        **{name: run[column] for column, name in _CAPABILITY_COLUMNS.items()},
        "declared": run["capabilities_declared"], "reasons": run["capability_reasons"] or {}}
    run_record["model_settings"] = {k: run[k] for k in settings}
    run_record["retriever"] = {new: run[old] for old, new in retriever.items()}
    question_record = {**question, "dataset": t["question_dataset"]}
    stored = {k: t[k] for k in (
        "schema_version", "trajectory_id", "final_answer", "end_reason", "error", "started_at",
        "finished_at", "total_tokens_in", "total_tokens_out", "total_cost_usd", "total_latency_ms", "metadata")}
    if stored["metadata"] is None:  # a log without metadata (ingest accepts one): the record's default stands
        del stored["metadata"]
    record = {
        **stored,
        "run": run_record,
        "question": question_record,
        "steps": step_records,
        "register_events": [
            {k: e[k] for k in ("item_id", "step_index", "sub_question", "from_status", "to_status",
                               "note", "reason", "supporting_chunk_ids")} for e in events],
        "judgments": [{k: j[k] for k in ("judge", "score", "judge_model", "rationale")} for j in judgments],
        "human_labels": [{k: h[k] for k in _LABEL_FIELDS} for h in labels],
        # A fork child keeps its fork record (a rebuilt child must not pass for a parent of its own).
        "fork": {k: forks[0][k] for k in _FORK_FIELDS if k in forks[0]} if forks else None,
    }
    return msgspec.convert(record, Trajectory)
