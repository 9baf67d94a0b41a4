"""TRAIL's span metrics per method (location accuracy, category F1, joint accuracy), implemented from the
definitions of arXiv 2505.08638: TRAIL's released scoring script is not in reach (docs/definitions.md)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, generator
from ._attribution import Measure
from ._sql import query_sql

REFERENCE_SQL = query_sql("trail_span_reference")
PREDICTIONS_SQL = query_sql("trail_span_predictions")
DEVIATION = ("implemented from the TRAIL paper's definitions (arXiv 2505.08638), not TRAIL's released scoring "
             "script")
# The span baselines name the step their first-error baseline names, with the run's most common category.
SPAN_BASELINES = ("baseline:first_step", "baseline:final_step")
NO_SPANS = "does not apply: no TRAIL span labels in this run"

Pair = tuple[int, "str | None"]  # (step, category) of one annotated or predicted error


@dataclass(frozen=True)
class SpanReference:
    """One trace's annotated errors as distinct (step, category) pairs."""

    trajectory_id: str
    n_steps: int
    pairs: frozenset[Pair]


@dataclass(frozen=True)
class TrailScores:
    """A method's TRAIL metrics over the run's annotated traces."""

    method: str
    n: int
    location_accuracy: Measure
    category_f1: Measure
    joint_accuracy: Measure


@dataclass
class TrailAgreement:
    """Every method's TRAIL metrics on one run (empty when it has no TRAIL span labels)."""

    run_id: str
    n_traces: int = 0
    common_category: str | None = None
    methods: dict[str, TrailScores] = field(default_factory=dict)


def trace_shares(ref: SpanReference, predicted: set[Pair]) -> tuple[float, float]:
    """(location share, joint share): of the trace's reference locations / (location, category) pairs, named."""
    locations = {s for s, _ in ref.pairs}
    return (len(locations & {s for s, _ in predicted}) / len(locations),
            len(ref.pairs & predicted) / len(ref.pairs))


def category_counts(refs: list[SpanReference], predicted: list[set[Pair]],
                    categories: list[str | None]) -> np.ndarray:
    """Per trace and category: [true positive, false positive, false negative] of the category being present."""
    out = np.zeros((len(refs), len(categories), 3))
    for t, (ref, pred) in enumerate(zip(refs, predicted, strict=True)):
        truth, guess = {c for _, c in ref.pairs}, {c for _, c in pred}
        for k, c in enumerate(categories):
            out[t, k] = (c in truth and c in guess, c in guess and c not in truth, c in truth and c not in guess)
    return out


def weighted_f1(counts: np.ndarray) -> float:
    """F1 per category weighted by its support (traces that have it), summed over traces (sklearn 'weighted')."""
    tp, fp, fn = counts.sum(axis=0).T
    support = tp + fn
    if not support.sum():
        return 0.0
    f1 = np.divide(2 * tp, 2 * tp + fp + fn, out=np.zeros_like(tp), where=(2 * tp + fp + fn) > 0)
    return float((f1 * support).sum() / support.sum())


def _bootstrap(location: np.ndarray, joint: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int,
               confidence: float) -> list[tuple[float, float]]:
    """Percentile intervals of the three metrics, resampling traces."""
    rng = generator(seed)
    idx = rng.integers(0, len(location), (n_resamples, len(location)))
    draws = [location[idx].mean(axis=1), joint[idx].mean(axis=1),
             np.array([weighted_f1(counts[row]) for row in idx])]
    tail = (1 - confidence) / 2
    return [(float(np.quantile(d, tail)), float(np.quantile(d, 1 - tail))) for d in draws]


def score_method(method: str, refs: list[SpanReference], predicted: list[set[Pair]],
                 confidence: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
                 seed: int = DEFAULT_SEED) -> TrailScores:
    """Location and joint accuracy averaged over traces, category F1 pooled over them, each with a bootstrap CI."""
    shares = [trace_shares(r, p) for r, p in zip(refs, predicted, strict=True)]
    location, joint = np.array([s[0] for s in shares]), np.array([s[1] for s in shares])
    categories = sorted({c for r in refs for _, c in r.pairs} | {c for p in predicted for _, c in p},
                        key=lambda c: (c is not None, c or ""))
    counts = category_counts(refs, predicted, categories)
    (loc_lo, loc_hi), (joint_lo, joint_hi), (f1_lo, f1_hi) = _bootstrap(location, joint, counts, n_resamples, seed,
                                                                       confidence)
    n = len(refs)
    return TrailScores(method, n, Measure(float(location.mean()), loc_lo, loc_hi, n, "bootstrap"),
                       Measure(weighted_f1(counts), f1_lo, f1_hi, n, "bootstrap"),
                       Measure(float(joint.mean()), joint_lo, joint_hi, n, "bootstrap"))


def _references(con: Any, run_id: str) -> list[SpanReference]:
    pairs: dict[str, set[Pair]] = {}
    steps: dict[str, int] = {}
    for tid, step, category, n_steps in con.execute(REFERENCE_SQL, {"run": run_id}).fetchall():
        pairs.setdefault(tid, set()).add((step, category))
        steps[tid] = n_steps
    return [SpanReference(t, steps[t], frozenset(p)) for t, p in sorted(pairs.items())]


def common_category(refs: list[SpanReference]) -> str | None:
    """The category of most reference pairs in the run (ties: alphabetical)."""
    counts = Counter(c for r in refs for _, c in r.pairs if c is not None)
    return min(counts, key=lambda c: (-counts[c], c)) if counts else None


def trail_agreement(con: Any, run_id: str) -> TrailAgreement:
    """TRAIL's metrics for the span baselines and every method that names steps of the run's annotated traces."""
    refs = _references(con, run_id)
    out = TrailAgreement(run_id, len(refs), common_category(refs))
    if not refs:
        return out
    named: dict[str, dict[str, set[Pair]]] = {}
    for method, tid, step, category in con.execute(PREDICTIONS_SQL, {"run": run_id}).fetchall():
        errors = named.setdefault(method, {}).setdefault(tid, set())
        if step is not None:
            errors.add((step, category))
    for method in SPAN_BASELINES:
        named[method] = {r.trajectory_id: {(0 if method == "baseline:first_step" else r.n_steps - 1,
                                            out.common_category)} for r in refs}
    for method, by_trace in named.items():
        if any(by_trace.values()):  # a method that names no step of an annotated trace is not scored
            out.methods[method] = score_method(method, refs, [by_trace.get(r.trajectory_id, set()) for r in refs])
    return out
