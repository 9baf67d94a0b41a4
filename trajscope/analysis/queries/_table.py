"""A Comparison as one flat table (overall row first, then strata), for print, export and the dashboard."""
from __future__ import annotations

import polars as pl

from ._compare import Comparison, PairedStatistics


def _row(stats: PairedStatistics, with_tost: bool) -> dict[str, object]:
    row: dict[str, object] = {
        "stratum": stats.stratum,
        "n": stats.n,
        "acc_a": stats.accuracy_a,
        "acc_b": stats.accuracy_b,
        "delta": stats.delta,
        "ci_low": stats.bootstrap.low,
        "ci_high": stats.bootstrap.high,
        "a_only": len(stats.transitions.a_only) if stats.transitions else None,
        "b_only": len(stats.transitions.b_only) if stats.transitions else None,
        "mcnemar_exact_p": stats.mcnemar.exact_p if stats.mcnemar else None,
        "mcnemar_chi2": stats.mcnemar.chi2 if stats.mcnemar else None,
        "mcnemar_chi2_p": stats.mcnemar.chi2_p if stats.mcnemar else None,
    }
    if with_tost:
        row["tost_p"] = stats.tost.p_value if stats.tost else None
        row["equivalent"] = stats.tost.equivalent if stats.tost else None
    return row


def comparison_frame(comparison: Comparison) -> pl.DataFrame:
    """Columns: stratum, n, acc_a, acc_b, delta, ci_low, ci_high, a_only (B broke), b_only (B fixed),
    McNemar exact p, chi2 and its p (continuity-corrected), and TOST p when a margin was given."""
    with_tost = comparison.overall.tost is not None
    rows = [_row(s, with_tost) for s in [comparison.overall, *comparison.strata]]
    schema = {
        "stratum": pl.String, "n": pl.Int64, "acc_a": pl.Float64, "acc_b": pl.Float64, "delta": pl.Float64,
        "ci_low": pl.Float64, "ci_high": pl.Float64, "a_only": pl.Int64, "b_only": pl.Int64,
        "mcnemar_exact_p": pl.Float64, "mcnemar_chi2": pl.Float64, "mcnemar_chi2_p": pl.Float64,
    }
    if with_tost:
        schema |= {"tost_p": pl.Float64, "equivalent": pl.Boolean}
    return pl.DataFrame(rows, schema=schema, orient="row")


__all__ = ["comparison_frame"]
