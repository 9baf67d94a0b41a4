"""Run B against run A paired by question: the tables `trajscope compare` prints and `Warehouse.compare` returns."""
from __future__ import annotations

from pathlib import Path

from trajscope.warehouse import ReadLimits

from ._results import CaptionedTable, CompareResult


def compare_tables(db_path: str | Path | None, run_a: str, run_b: str, *, metric: str, limits: ReadLimits,
                   rubric: str | None = None, strata: str | None = None, zero_read: bool = False,
                   margin: float | None = None, table4: bool = False, funnel: bool = False, resamples: int = 1000,
                   seed: int = 42) -> CompareResult:
    """The paired comparison (and Table 4, the paired funnel when asked), each with the CLI's caption.

    Raises QueryError or UnpairedComparison for runs that cannot be compared, and the read path's errors.
    """
    from trajscope.analysis.queries import (
        compare_funnels,
        compare_runs,
        comparison_frame,
        post_read_odds_ratio,
        table4_frame,
    )
    from trajscope.format import GATE_EXTRACTOR
    from trajscope.warehouse import open_read

    if rubric:
        metric = f"rubric:{rubric}"
    # The read path: an old warehouse is brought up to date first, then read in the sandbox.
    with open_read(db_path, limits=limits) as con:
        comparison = compare_runs(
            con, run_a, run_b, metric=metric, strata=strata, margin=margin,
            subset="a_zero_read" if zero_read else None, n_resamples=resamples, seed=seed,
        )
        odds = post_read_odds_ratio(con, run_a, run_b, extractor=GATE_EXTRACTOR) if table4 else None
        stages = compare_funnels(con, run_a, run_b) if funnel else None  # type: ignore[arg-type]
    note = (f"{run_b} vs {run_a} ({metric}): {comparison.pairing}; delta = B - A with a 95% paired "
            f"bootstrap CI ({resamples} resamples, seed {seed})")
    if margin is not None:
        note += f"; TOST equivalence margin +/-{margin}"
    tables = [CaptionedTable(note, comparison_frame(comparison))]
    if odds is not None:
        tables.append(CaptionedTable(
            f"Table 4 ({run_b} vs {run_a}): post-gold-read failure odds ratio, marginal and "
            f"Mantel-Haenszel across read-exposure strata ({GATE_EXTRACTOR} extractor), 95% CIs", table4_frame(odds)))
    if stages is not None:
        caption = (f"Evidence funnel ({run_b} vs {run_a}), paired by question: share of questions whose gold passages "
                   "reached each stage (all hops: every passage; hop k: that hop's), delta = B - A, a_only / b_only "
                   "the discordant questions, McNemar exact p")
        if stages.frame.height == 0:
            caption += ": no shared question with gold passages"
        tables.append(CaptionedTable(caption, stages.frame))
    return CompareResult(tuple(tables), run_a=run_a, run_b=run_b, metric=metric, pairing=comparison.pairing)


__all__ = ["compare_tables"]
