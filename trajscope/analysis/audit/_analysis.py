"""The audit statistics SQL cannot express: bootstrap CIs over the audit views and the C2a / C2b verdicts."""
from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np
import polars as pl

from ._bootstrap import Estimate, paired_bootstrap
from ._criteria import c2a_sentinel, c2a_verdict, c2b_placebo

if TYPE_CHECKING:  # a read session queries like a connection
    from trajscope.warehouse.read import Reader

PTS = 100.0  # the paper reports F1 in points
ALIAS_RESAMPLES = 2000  # the alias spot-check's clean-subset CI uses 2,000 resamples (paper, appendix 17)
MASK_LABEL = "MASK"


def _rows(con: duckdb.DuckDBPyConnection | Reader, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=False)) for row in cur.fetchall()]


def _frame(rows: list[dict[str, Any]], schema: dict[str, Any]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema, orient="row")


def _ci_columns(prefix: str, estimate: Estimate) -> dict[str, float]:
    e = estimate.scaled(PTS)
    return {f"{prefix}_pts": e.mean, f"{prefix}_low": e.low, f"{prefix}_high": e.high}


def _ci_schema(prefix: str) -> dict[str, Any]:
    return {f"{prefix}_pts": pl.Float64, f"{prefix}_low": pl.Float64, f"{prefix}_high": pl.Float64}


def intervention_effects(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """Per (cell, baseline, intervention, sentinel, stratum): n, reader F1 mean and the paired delta
    against the unperturbed context with its bootstrap CI (1,000 resamples, seed 42, 95%), in points."""
    groups: dict[tuple, list[tuple[float, float]]] = defaultdict(list)
    for r in _rows(con, """SELECT cell, baseline, intervention, coalesce(sentinel_label, '') AS sentinel,
                                  bucket, f1, f1_base
                           FROM audit_paired WHERE on_target
                           ORDER BY cell, baseline, intervention, sentinel, record_id"""):
        key = (r["cell"], r["baseline"], r["intervention"], r["sentinel"])
        groups[key + ("all",)].append((r["f1"], r["f1_base"]))
        groups[key + (r["bucket"],)].append((r["f1"], r["f1_base"]))
    rows = []
    for group in sorted(groups):
        pairs = np.array(groups[group], dtype=float)
        estimate = paired_bootstrap(pairs[:, 0] - pairs[:, 1])
        rows.append({
            "cell": group[0], "baseline": group[1], "intervention": group[2], "sentinel": group[3],
            "stratum": group[4],
            "n": len(pairs), "f1_pts": PTS * pairs[:, 0].mean(), "f1_base_pts": PTS * pairs[:, 1].mean(),
            **_ci_columns("delta", estimate),
        })
    schema = {"cell": pl.String, "baseline": pl.String, "intervention": pl.String, "sentinel": pl.String,
              "stratum": pl.String, "n": pl.Int64, "f1_pts": pl.Float64, "f1_base_pts": pl.Float64,
              **_ci_schema("delta")}
    return _frame(rows, schema)


def causal_effects(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """Per (cell, baseline) on the 1->1 stratum: delta_remove, delta_placebo and
    delta_causal = delta_remove - delta_placebo, each with its paired bootstrap CI, in points."""
    groups: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for r in _rows(con, """SELECT cell, baseline, delta_remove, delta_placebo FROM audit_causal_pairs
                           ORDER BY cell, baseline, record_id"""):
        groups[(r["cell"], r["baseline"])].append((r["delta_remove"], r["delta_placebo"]))
    rows = []
    for (cell, baseline), pairs in sorted(groups.items()):
        d = np.array(pairs, dtype=float)
        rows.append({
            "cell": cell, "baseline": baseline, "n": len(d),
            **_ci_columns("delta_remove", paired_bootstrap(d[:, 0])),
            **_ci_columns("delta_placebo", paired_bootstrap(d[:, 1])),
            **_ci_columns("delta_causal", paired_bootstrap(d[:, 0] - d[:, 1])),
        })
    schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64, **_ci_schema("delta_remove"),
              **_ci_schema("delta_placebo"), **_ci_schema("delta_causal")}
    return _frame(rows, schema)


def insertion_effects(con: duckdb.DuckDBPyConnection | Reader, stratum: str = "0->0") -> pl.DataFrame:
    """Per (cell, baseline): the prepend and midpoint insertion deltas on one stratum (0->0 by default)."""
    effects = intervention_effects(con).filter(
        pl.col("intervention").is_in(["insert_prepend", "insert_mid"]) & (pl.col("stratum") == stratum)
    )
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for r in effects.iter_rows(named=True):
        row = rows.setdefault((r["cell"], r["baseline"]), {"cell": r["cell"], "baseline": r["baseline"], "n": r["n"]})
        name = "prepend" if r["intervention"] == "insert_prepend" else "mid"
        row.update({f"{name}_pts": r["delta_pts"], f"{name}_low": r["delta_low"], f"{name}_high": r["delta_high"]})
    schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64, **_ci_schema("prepend"), **_ci_schema("mid")}
    return _frame([rows[k] for k in sorted(rows)], schema)


def sentinel_audit(con: duckdb.DuckDBPyConnection | Reader) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The sentinel-fragility audit on ans_in_compile = 1: one row per (cell, baseline, sentinel) with the
    residual vs B1, the delta vs [MASK] and its C2a result; and one verdict row per (cell, baseline)."""
    by_group: dict[tuple[str, str], dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in _rows(con, """SELECT * FROM audit_sentinel_pairs ORDER BY cell, baseline, sentinel, record_id"""):
        by_group[(r["cell"], r["baseline"])][r["sentinel"]].append(r)
    sentinel_rows, verdict_rows = [], []
    for (cell, baseline), per_sentinel in sorted(by_group.items()):
        mask_pairs = per_sentinel.get(MASK_LABEL, [])
        if not mask_pairs:
            continue
        mask_effect = paired_bootstrap([p["f1_mask"] - p["f1_base"] for p in mask_pairs]).scaled(PTS)
        placebo = paired_bootstrap([p["f1_placebo"] - p["f1_base"] for p in mask_pairs]).scaled(PTS)
        results = []
        order = [MASK_LABEL] + sorted(s for s in per_sentinel if s != MASK_LABEL)
        for sentinel in order:
            pairs = per_sentinel[sentinel]
            residual = paired_bootstrap([p["f1_sentinel"] - p["f1_b1"] for p in pairs if p["f1_b1"] is not None])
            row = {"cell": cell, "baseline": baseline, "sentinel": sentinel, "n": len(pairs),
                   "f1_pts": PTS * float(np.mean([p["f1_sentinel"] for p in pairs])),
                   **_ci_columns("residual_vs_b1", residual)}
            if sentinel == MASK_LABEL:
                row.update({"vs_mask_pts": None, "vs_mask_low": None, "vs_mask_high": None,
                            "c2a_pass": None, "c2a_reason": "reference"})
            else:
                versus = paired_bootstrap([p["f1_sentinel"] - p["f1_mask"] for p in pairs])
                result = c2a_sentinel(versus.scaled(PTS), mask_effect.mean)
                results.append(result)
                row.update({**_ci_columns("vs_mask", versus), "c2a_pass": result.passed, "c2a_reason": result.reason})
            sentinel_rows.append(row)
        c2a = c2a_verdict(results)
        c2b = c2b_placebo(placebo, mask_effect.mean)
        verdict_rows.append({
            "cell": cell, "baseline": baseline, "n": len(mask_pairs),
            "mask_effect_pts": mask_effect.mean, "mask_effect_low": mask_effect.low,
            "mask_effect_high": mask_effect.high,
            "alternatives_passing": sum(r.passed for r in results), "alternatives": len(results),
            "c2a_pass": c2a.passed if results else None, "c2a_verdict": c2a.reason,
            "placebo_pts": placebo.mean, "placebo_low": placebo.low, "placebo_high": placebo.high,
            "c2b_pass": c2b.passed, "c2b_reason": c2b.reason,
        })
    sentinel_schema = {"cell": pl.String, "baseline": pl.String, "sentinel": pl.String, "n": pl.Int64,
                       "f1_pts": pl.Float64, **_ci_schema("residual_vs_b1"), **_ci_schema("vs_mask"),
                       "c2a_pass": pl.Boolean, "c2a_reason": pl.String}
    verdict_schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64,
                      "mask_effect_pts": pl.Float64, "mask_effect_low": pl.Float64, "mask_effect_high": pl.Float64,
                      "alternatives_passing": pl.Int64, "alternatives": pl.Int64, "c2a_pass": pl.Boolean,
                      "c2a_verdict": pl.String, "placebo_pts": pl.Float64, "placebo_low": pl.Float64,
                      "placebo_high": pl.Float64, "c2b_pass": pl.Boolean, "c2b_reason": pl.String}
    return _frame(sentinel_rows, sentinel_schema), _frame(verdict_rows, verdict_schema)


def identity_check(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """The identity sanity check per (cell, baseline), straight from the audit_identity view."""
    schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64, "f1_original_pts": pl.Float64,
              "f1_rerun_pts": pl.Float64, "mean_delta_pts": pl.Float64, "median_abs_delta_pts": pl.Float64,
              "identical_answer_rate": pl.Float64}
    return _frame(_rows(con, "SELECT * FROM audit_identity"), schema)


def alias_check(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """The alias spot-check per (cell, baseline): flagged share and the clean-subset masked-vs-B1 lift
    with its bootstrap CI (2,000 resamples, seed 42)."""
    clean: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in _rows(con, """SELECT cell, baseline, f1_masked - f1_b1 AS lift FROM audit_alias_check
                           WHERE NOT flagged AND f1_b1 IS NOT NULL ORDER BY cell, baseline, record_id"""):
        clean[(r["cell"], r["baseline"])].append(r["lift"])
    rows = []
    for r in _rows(con, "SELECT * FROM audit_alias_summary"):
        estimate = paired_bootstrap(clean.get((r["cell"], r["baseline"]), []), n_resamples=ALIAS_RESAMPLES)
        rows.append({"cell": r["cell"], "baseline": r["baseline"], "n": r["n"], "n_flagged": r["n_flagged"],
                     "flagged_rate": r["flagged_rate"], "n_fired_the": r["n_fired_the"],
                     "n_fired_last_token": r["n_fired_last_token"], "n_fired_acronym": r["n_fired_acronym"],
                     "n_fired_year": r["n_fired_year"], "lift_all_pts": r["lift_vs_b1_all_pts"],
                     **_ci_columns("lift_clean", estimate), "lift_flagged_pts": r["lift_vs_b1_flagged_pts"]})
    schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64, "n_flagged": pl.Int64,
              "flagged_rate": pl.Float64, "n_fired_the": pl.Int64, "n_fired_last_token": pl.Int64,
              "n_fired_acronym": pl.Int64, "n_fired_year": pl.Int64, "lift_all_pts": pl.Float64,
              **_ci_schema("lift_clean"), "lift_flagged_pts": pl.Float64}
    return _frame(rows, schema)


def bucket_counts(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """Per (cell, baseline): records per transition bucket and the answer-surfacing rate."""
    schema = {"cell": pl.String, "baseline": pl.String, "n": pl.Int64, "n_0_0": pl.Int64, "n_0_1": pl.Int64,
              "n_1_1": pl.Int64, "n_1_0": pl.Int64, "ans_in_b1_rate": pl.Float64, "ans_in_compile_rate": pl.Float64}
    return _frame(_rows(con, "SELECT * FROM audit_bucket_counts"), schema)


def cells(con: duckdb.DuckDBPyConnection | Reader) -> pl.DataFrame:
    """One row per cell: models, records, exclusions (gold < 2 characters), failures."""
    schema = {"cell": pl.String, "audit_ids": pl.String, "dataset": pl.String, "reader_model": pl.String,
              "compiler_a": pl.String, "compiler_b": pl.String, "n_records": pl.Int64,
              "n_excluded_short_gold": pl.Int64, "n_failed": pl.Int64, "n_analysable": pl.Int64}
    return _frame(_rows(con, "SELECT * FROM audit_cells"), schema)


__all__ = [
    "alias_check", "bucket_counts", "causal_effects", "cells", "identity_check", "insertion_effects",
    "intervention_effects", "sentinel_audit",
]
