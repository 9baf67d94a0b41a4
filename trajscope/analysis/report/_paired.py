"""Paired comparisons of two conditions inside a report: seeds paired run by run, questions as clusters."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from trajscope.analysis.stats import (
    BootstrapCI,
    cluster_bootstrap_delta,
    mcnemar_test,
    paired_bootstrap_delta,
    pooled_mcnemar,
    transition_table,
)

from ._context import ReportContext, RunInfo


@dataclass(frozen=True)
class PairedResult:
    """B against A over (question, seed) pairs: accuracies, delta with CI, McNemar (pooled over seeds)."""

    n_pairs: int
    n_questions: int
    n_seed_pairs: int
    acc_a: float
    acc_b: float
    delta: BootstrapCI
    mcnemar_p: float
    a_only: int
    b_only: int


# Below this many paired questions a percentile bootstrap CI is too coarse to read (one question moves the delta
# by more than 10 points): the table carries a warning beside the interval.
PAIRED_FLOOR = 10


def mcnemar_applies(result: PairedResult) -> bool:
    """McNemar tests the discordant pairs: with none, there is nothing to test (its p of 1 says nothing)."""
    return result.a_only + result.b_only > 0


def assumption_notes(label: str, result: PairedResult | None) -> list[str]:
    """What a paired row's statistics cannot claim: no discordant pair, or fewer questions than PAIRED_FLOOR."""
    if result is None:
        return []
    notes = []
    if not mcnemar_applies(result):
        notes.append(f"McNemar does not apply on {label}: no discordant pair (the arms agree on every question).")
    if result.n_questions < PAIRED_FLOOR:
        notes.append(f"Warning on {label}: {result.n_questions} paired question(s), below the floor of "
                     f"{PAIRED_FLOOR}; the bootstrap CI and McNemar p are not reliable there.")
    return notes


def seed_pairs(runs_a: list[RunInfo], runs_b: list[RunInfo]) -> list[tuple[RunInfo, RunInfo]]:
    """Run A_s with run B_s: by equal seed when both sides carry the same seeds, else in run-id order."""
    seeds_a = {r.seed: r for r in runs_a}
    seeds_b = {r.seed: r for r in runs_b}
    if len(seeds_a) == len(runs_a) and len(seeds_b) == len(runs_b) and seeds_a.keys() == seeds_b.keys():
        return [(seeds_a[s], seeds_b[s]) for s in sorted(seeds_a, key=lambda s: (s is None, s))]
    ordered_a = sorted(runs_a, key=lambda r: r.run_id)
    ordered_b = sorted(runs_b, key=lambda r: r.run_id)
    return list(zip(ordered_a, ordered_b, strict=False))


def paired_frame(
    ctx: ReportContext,
    runs_a: list[RunInfo],
    runs_b: list[RunInfo],
    *,
    column: str = "correct",
    subset: str | None = None,
) -> pl.DataFrame:
    """question_id, pair index, a, b for every question both runs of a seed pair scored under column;
    subset names a boolean outcome column that must hold on the A side (e.g. voluntary_zero_read)."""
    outcomes = ctx.outcomes()
    parts = []
    for index, (ra, rb) in enumerate(seed_pairs(runs_a, runs_b)):
        a = outcomes[ra.run_id]
        if subset is not None:
            a = a.filter(pl.col(subset))
        a = a.select("question_id", "dataset", pl.col(column).cast(pl.Float64).alias("a"))
        b = outcomes[rb.run_id].select("question_id", "dataset", pl.col(column).cast(pl.Float64).alias("b"))
        joined = a.join(b, on=["question_id", "dataset"], how="inner").drop_nulls(["a", "b"])
        parts.append(joined.with_columns(pl.lit(index).alias("pair")))
    schema = {"question_id": pl.String, "dataset": pl.String, "a": pl.Float64, "b": pl.Float64, "pair": pl.Int32}
    return pl.concat(parts, how="vertical_relaxed") if parts else pl.DataFrame(schema=schema)


def paired_comparison(
    ctx: ReportContext,
    runs_a: list[RunInfo],
    runs_b: list[RunInfo],
    *,
    column: str = "correct",
    subset: str | None = None,
) -> PairedResult | None:
    """Delta of B over A with a paired (one seed pair) or question-cluster (several) bootstrap CI and
    McNemar on the discordant pairs summed over seeds; None when nothing pairs."""
    df = paired_frame(ctx, runs_a, runs_b, column=column, subset=subset)
    if df.height == 0:
        return None
    a, b = df["a"].to_numpy(), df["b"].to_numpy()
    n_seed_pairs = int(df["pair"].n_unique())
    clusters = (df["dataset"] + "\x1f" + df["question_id"]).to_numpy()
    if n_seed_pairs == 1:
        ci = paired_bootstrap_delta(a, b)
    else:
        ci = cluster_bootstrap_delta(clusters, a, b)
    per_seed = []
    for g in df.partition_by("pair", maintain_order=True):
        cells = transition_table(g["question_id"].to_list(), g["a"].to_numpy(), g["b"].to_numpy())
        per_seed.append((len(cells.a_only), len(cells.b_only)))
    test = pooled_mcnemar(per_seed).result if n_seed_pairs > 1 else mcnemar_test(*per_seed[0])
    return PairedResult(
        df.height,
        int(np.unique(clusters).size),
        n_seed_pairs,
        float(a.mean()),
        float(b.mean()),
        ci,
        test.exact_p,
        test.a_only,
        test.b_only,
    )


__all__ = ["PairedResult", "paired_comparison", "paired_frame", "seed_pairs"]
