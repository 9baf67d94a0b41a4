"""A run's trajectories as they leave the warehouse: canonical record, every verdict, and the views' labels."""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import duckdb
import msgspec

from trajscope.format import Exported, Judgment

from .._reconstruct import read_trajectory

if TYPE_CHECKING:  # a read session queries like a connection
    from trajscope.warehouse.read import Reader

# Every verdict the warehouse holds (the record's own and `trajscope judge`'s), oldest first, so a
# re-import keeps their order and the newest still wins in judgment_scores.
_JUDGMENTS_SQL = """SELECT judge, score, judge_model, rationale FROM judgments
                    WHERE trajectory_id = ? AND score IS NOT NULL ORDER BY created_at, rowid"""
_CORRECT_SQL = "SELECT correct, correct_by FROM trajectory_correctness WHERE trajectory_id = ?"
_RG_SQL = "SELECT extractor, label, discipline_subtype FROM failure_rg WHERE trajectory_id = ? ORDER BY extractor"
_ERAG_SQL = "SELECT label, reasoning_subtype FROM trajectory_erag_label WHERE trajectory_id = ?"


class RunNotFound(LookupError):
    """The warehouse holds no trajectory of the run."""


def trajectory_labels(con: duckdb.DuckDBPyConnection | Reader, trajectory_id: str) -> dict[str, Any]:
    """The labels the views give one trajectory: correctness and both taxonomies' label and sub-type."""
    labels: dict[str, Any] = {}
    row = con.execute(_CORRECT_SQL, [trajectory_id]).fetchone()
    if row is not None:
        labels["correct"], labels["correct_by"] = row
    for extractor, label, subtype in con.execute(_RG_SQL, [trajectory_id]).fetchall():
        labels[f"read_gate.label.{extractor}"] = label
        labels[f"read_gate.discipline_subtype.{extractor}"] = subtype
    row = con.execute(_ERAG_SQL, [trajectory_id]).fetchone()
    if row is not None:
        labels["execution_rag.label"], labels["execution_rag.reasoning_subtype"] = row
    return labels


def run_trajectory_ids(con: duckdb.DuckDBPyConnection | Reader, run_id: str) -> list[str]:
    """The run's trajectory ids in question order; RunNotFound names the runs that exist when it has none."""
    ids = [r[0] for r in con.execute(
        "SELECT trajectory_id FROM trajectories WHERE run_id = ? ORDER BY question_id, trajectory_id",
        [run_id]).fetchall()]
    if not ids:
        known = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id LIMIT 20").fetchall()]
        raise RunNotFound(f"no trajectories of run {run_id!r}; runs here: {', '.join(known) or 'none'}")
    return ids


def exported_trajectories(con: duckdb.DuckDBPyConnection | Reader, run_id: str) -> Iterator[Exported]:
    """Each trajectory of the run with every stored verdict as its judgments and the views' labels."""
    for trajectory_id in run_trajectory_ids(con, run_id):
        trajectory = read_trajectory(con, trajectory_id)
        if trajectory is None:  # removed between the listing and now
            continue
        judgments = [Judgment(judge=j, score=s, judge_model=m, rationale=r)
                     for j, s, m, r in con.execute(_JUDGMENTS_SQL, [trajectory_id]).fetchall()]
        yield Exported(trajectory=msgspec.structs.replace(trajectory, judgments=judgments),
                       labels=trajectory_labels(con, trajectory_id))
