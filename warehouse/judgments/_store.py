"""Writing a judge pass's results: entity coverage and answer checks replaced, judgments appended, in one
transaction, skipping trajectories re-ingested since their inputs were read."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from .._connection import open_warehouse
from .._derived import refresh_verdict_facts
from .._transaction import transaction
from ._inputs import JudgeInput

_JUDGMENT_COLUMNS = ("trajectory_id", "judge", "score", "judge_model", "rationale")


@dataclass(frozen=True)
class StoredJudging:
    """What the write kept out (re-ingested meanwhile) and how many trajectories now disagree with the source."""

    stale_skipped: int
    source_conflicts: int


def _only(table: pa.Table, fresh: set[str]) -> pa.Table:
    return table.filter(pa.array([t in fresh for t in table.column("trajectory_id").to_pylist()], pa.bool_()))


def store_judge_results(db_path: str | Path | None, run_id: str, inputs: Sequence[JudgeInput],
                        judgment_rows: list[tuple], coverage: pa.Table, answers: pa.Table) -> StoredJudging:
    """Replace the run's forensic rows and append its judgments (rows of _JUDGMENT_COLUMNS) in one transaction."""
    with open_warehouse(db_path) as con:
        current = dict(con.execute(
            "SELECT trajectory_id, record_hash FROM trajectories WHERE trajectory_id IN (SELECT unnest($ids))",
            {"ids": [i.trajectory_id for i in inputs]}).fetchall())
        fresh = {i.trajectory_id for i in inputs if current.get(i.trajectory_id) == i.record_hash}
        judgment_rows = [r for r in judgment_rows if r[0] in fresh]
        coverage, answers = _only(coverage, fresh), _only(answers, fresh)
        con.register("coverage_rows", coverage)
        con.register("answer_rows", answers)
        try:
            with transaction(con):
                con.execute(
                    "DELETE FROM entity_coverage WHERE trajectory_id IN (SELECT unnest($ids)) "
                    "AND extractor IN (SELECT unnest($extractors))",
                    {"ids": sorted(fresh), "extractors": sorted(set(coverage.column("extractor").to_pylist()))})
                con.execute("DELETE FROM answer_checks WHERE trajectory_id IN (SELECT unnest($ids))",
                            {"ids": sorted(fresh)})
                con.execute("INSERT INTO entity_coverage BY NAME SELECT * FROM coverage_rows")
                con.execute("INSERT INTO answer_checks BY NAME SELECT * FROM answer_rows")
                if judgment_rows:
                    con.register("judgment_rows", pa.table({
                        name: pa.array([r[k] for r in judgment_rows], pa.float64() if name == "score" else pa.string())
                        for k, name in enumerate(_JUDGMENT_COLUMNS)}))
                    con.execute(
                        "INSERT INTO judgments (trajectory_id, judge, score, judge_model, rationale, origin) "
                        "SELECT trajectory_id, judge, score, judge_model, rationale, 'judge' FROM judgment_rows")
                    con.unregister("judgment_rows")
                # The stored verdicts of the trajectories written (their judgments and answer checks changed).
                con.execute("CREATE OR REPLACE TEMP TABLE judged_now AS "
                            "SELECT unnest(CAST($ids AS VARCHAR[])) AS trajectory_id", {"ids": sorted(fresh)})
                refresh_verdict_facts(con, "SELECT trajectory_id FROM judged_now")
                con.execute("DROP TABLE judged_now")
        finally:
            con.unregister("coverage_rows")
            con.unregister("answer_rows")
        conflicts = con.execute(
            "SELECT count(DISTINCT trajectory_id) FROM verdict_conflicts WHERE run_id = ?", [run_id]).fetchall()[0][0]
    return StoredJudging(len(inputs) - len(fresh), conflicts)


__all__ = ["StoredJudging", "store_judge_results"]
