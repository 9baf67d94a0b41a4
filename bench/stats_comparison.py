"""Benchmark: the full paired comparison on 100,000 synthetic paired trajectories (target < 2 s).

Run: .venv/bin/python bench/stats_comparison.py [--n 100000] [--repeats 5] [--tiny]
Times pairing by question id, the transition table with ids per cell, McNemar (exact and chi-square),
the 1,000-resample paired bootstrap, TOST, per-stratum statistics and the Mantel-Haenszel odds
ratio, and prints the median wall time.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from trajscope.analysis.stats import (
    mantel_haenszel,
    mcnemar_test,
    pair_outcomes,
    paired_bootstrap_delta,
    tost_paired,
    transition_table,
)


def synthetic(n: int, seed: int = 0):
    """Two runs over the same n question ids (B shuffled), 5 strata, B about 5 points better."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:07d}" for i in range(n)]
    a = (rng.random(n) < 0.55).astype(float)
    b = np.where(rng.random(n) < 0.1, 1.0, a)
    strata = rng.integers(0, 5, n)
    order = rng.permutation(n)
    return ids, a, [ids[i] for i in order], b[order], strata


def full_comparison(ids_a, a, ids_b, b, strata) -> float:
    paired = pair_outcomes(ids_a, a, ids_b, b)
    table = transition_table(paired.question_ids, paired.a, paired.b)
    mcnemar_test(len(table.a_only), len(table.b_only))
    boot = paired_bootstrap_delta(paired.a, paired.b, n_resamples=1000, seed=42)
    tost_paired(paired.a, paired.b, 0.02)
    tables = []
    for k in range(5):
        mask = strata == k
        sa, sb = paired.a[mask], paired.b[mask]
        mcnemar_test(int(((sa == 1) & (sb == 0)).sum()), int(((sa == 0) & (sb == 1)).sum()))
        paired_bootstrap_delta(sa, sb, n_resamples=1000, seed=42)
        tables.append([[sb.sum(), mask.sum() - sb.sum()], [sa.sum(), mask.sum() - sa.sum()]])
    mantel_haenszel(np.array(tables))
    return boot.delta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tiny", action="store_true",
                        help="2,000 pairs, one repeat: checks the script runs, not speed")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.repeats = 2_000, 1
    data = synthetic(args.n)
    full_comparison(*data)  # warm-up: imports, allocator
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        full_comparison(*data)
        times.append(time.perf_counter() - start)
    median = float(np.median(times))
    print(f"full paired comparison, n={args.n:,} paired trajectories, 1,000 bootstrap resamples "
          f"(overall + 5 strata): median {median:.3f} s over {args.repeats} runs "
          f"(min {min(times):.3f} s, max {max(times):.3f} s); target < 2 s: {median / 2.0:.2f}x of budget")
    # F1 outcomes are continuous, so the bootstrap must resample indices (no value-count shortcut).
    rng = np.random.default_rng(1)
    f1_a, f1_b = rng.random(args.n), rng.random(args.n)
    start = time.perf_counter()
    paired_bootstrap_delta(f1_a, f1_b, n_resamples=1000, seed=42)
    print(f"continuous (F1) paired bootstrap alone, n={args.n:,}, 1,000 resamples: "
          f"{time.perf_counter() - start:.3f} s")


if __name__ == "__main__":
    main()
