"""Two runs' evidence funnels paired by question: the change at each stage, overall and per hop, with McNemar."""
from __future__ import annotations

from dataclasses import dataclass

import duckdb
import polars as pl

from trajscope.analysis.stats import mcnemar_test

from ._outcomes import require_run
from ._sql import query_sql

# The funnel's stages in order (evidence_funnel_question's boolean columns).
FUNNEL_STAGES: tuple[str, ...] = ("queried", "retrieved", "snippet_shown", "read", "used")

# The .sql lists the stages in FUNNEL_STAGES's order (tests/test_evidence_funnel_paired_sql.py holds it so).
FUNNEL_PAIRED_SQL = query_sql("funnel_paired")


@dataclass(frozen=True)
class FunnelComparison:
    """The paired stage table of RUN_B against RUN_A, and the SQL that counted it."""

    run_a: str
    run_b: str
    frame: pl.DataFrame  # scope, hop, stage, n_pairs, share_a, share_b, delta, a_only, b_only, mcnemar_exact_p
    sql: str = FUNNEL_PAIRED_SQL


def compare_funnels(con: duckdb.DuckDBPyConnection, run_a: str, run_b: str) -> FunnelComparison:
    """Each stage's share under A and B on the questions both answered, the change and McNemar's exact p.

    A stage that does not apply to one run's log (NULL there) has no pairs; a question pairs only
    with the same question (and dataset) of the other run, a hop with the same hop position.
    """
    require_run(con, run_a)
    require_run(con, run_b)
    rows = con.execute(FUNNEL_PAIRED_SQL, {"run_a": run_a, "run_b": run_b}).fetchall()
    order = {s: i for i, s in enumerate(FUNNEL_STAGES)}
    rows.sort(key=lambda r: (r[0] != "all", r[1] or 0, order[r[2]]))
    out = []
    for scope, hop, stage, n, share_a, share_b, a_only, b_only in rows:
        test = mcnemar_test(a_only, b_only)
        out.append({"scope": "all hops" if scope == "all" else f"hop {hop}", "stage": stage, "n_pairs": n,
                    "share_a": share_a, "share_b": share_b, "delta": share_b - share_a,
                    "a_only": a_only, "b_only": b_only, "mcnemar_exact_p": test.exact_p})
    schema = {"scope": pl.String, "stage": pl.String, "n_pairs": pl.Int64, "share_a": pl.Float64,
              "share_b": pl.Float64, "delta": pl.Float64, "a_only": pl.Int64, "b_only": pl.Int64,
              "mcnemar_exact_p": pl.Float64}
    return FunnelComparison(run_a, run_b, pl.DataFrame(out, schema=schema, orient="row"))


__all__ = ["FUNNEL_PAIRED_SQL", "FUNNEL_STAGES", "FunnelComparison", "compare_funnels"]
