"""Per-step label agreement as AgentProcessBench's evaluation script scores it (`trajscope agreement --human`):
step accuracy, exact match of the label map and first-error accuracy per method, beside the trivial baselines."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, McNemarResult, generator, mcnemar_test
from ._attribution import Measure, poisson_binomial_range, wilson_share
from ._sql import query_sql

REFERENCE_SQL = query_sql("per_step_reference")
PREDICTIONS_SQL = query_sql("method_step_predictions")
METHODS_SQL = query_sql("prediction_methods")
UNDECIDED_SQL = query_sql("rules_undecided")
# The trivial baselines: each names one step as the first error (or none) and every other labelled step fine.
BASELINES = {
    "baseline:all_fine": "no step is an error",
    "baseline:final": "the last step is the error",
    "baseline:final_if_wrong": "the last step is the error when the answer is wrong (people's verdict where the log "
                               "gives one, else trajscope's), else none",
    "baseline:first": "the first step is the error",
    "baseline:uniform": "a step drawn uniformly is the error (expected values)",
}


@dataclass(frozen=True)
class Reference:
    """One trajectory's human per-step labels: step index -> error / correct / neutral."""

    trajectory_id: str
    n_steps: int
    labels: dict[int, str]
    correct: bool | None  # trajscope's verdict
    human_correct: bool | None = None  # people's verdict on the answer, where the log carries one

    @property
    def wrong(self) -> bool:
        """The answer is wrong by people's verdict where given, else by trajscope's (unjudged: not wrong)."""
        return (self.human_correct if self.human_correct is not None else self.correct) is False

    @property
    def first_error(self) -> int | None:
        return min((s for s, label in self.labels.items() if label == "error"), default=None)


@dataclass(frozen=True)
class StepLabelScores:
    """A method's scores over the labelled trajectories, with the per-trajectory first-error hits for McNemar."""

    method: str
    n: int
    n_predicted: int
    step_accuracy: Measure
    exact: Measure
    first_error_accuracy: Measure
    first_error_hits: dict[str, bool] | None = None  # None: expected values only (the uniform baseline)
    note: str | None = None


@dataclass(frozen=True)
class StepLabelAgreement:
    """Every method's per-step scores on one run (empty when the run has no per-step human labels)."""

    run_id: str
    n_labelled: int = 0
    n_steps_labelled: int = 0
    methods: list[StepLabelScores] = field(default_factory=list)

    def versus(self, a: str, b: str) -> McNemarResult | str:
        """Exact McNemar on first-error hits of methods a and b over the same trajectories, or why not."""
        by = {m.method: m for m in self.methods}
        for name in (a, b):
            if name not in by:
                return f"does not apply: no method {name!r} in run {self.run_id}"
            if by[name].first_error_hits is None:
                return f"does not apply: {name} has expected hits, no step per trajectory"
        ha, hb = by[a].first_error_hits, by[b].first_error_hits
        assert ha is not None and hb is not None
        return mcnemar_test(sum(ha[t] and not hb[t] for t in ha), sum(hb[t] and not ha[t] for t in ha))


def _scores(ref: Reference, predicted: dict[int, str]) -> tuple[int, bool, bool]:
    """(matching labelled steps, whole map equal, first error equal) as the benchmark's script compares them."""
    matches = sum(predicted.get(s) == label for s, label in ref.labels.items())
    first = min((s for s, label in predicted.items() if label == "error"), default=None)
    return matches, predicted == ref.labels, first == ref.first_error


def _first_error_map(ref: Reference, step: int | None) -> dict[int, str]:
    """A method that names only a first error (or none): that step an error, every other labelled step fine."""
    out = {s: "correct" for s in ref.labels}
    if step is not None:
        out[step] = "error"
    return out


def _baseline_step(name: str, ref: Reference) -> int | None:
    last = ref.n_steps - 1
    return {"baseline:all_fine": None, "baseline:final": last, "baseline:first": 0,
            "baseline:final_if_wrong": last if ref.wrong else None}[name]


def _bootstrap_ratio(matches: np.ndarray, totals: np.ndarray, n_resamples: int, seed: int,
                     confidence: float) -> tuple[float, float]:
    """Percentile bootstrap over trajectories of sum(matches) / sum(totals) (micro accuracy)."""
    rng = generator(seed)
    idx = rng.integers(0, len(matches), (n_resamples, len(matches)))
    draws = matches[idx].sum(axis=1) / np.maximum(totals[idx].sum(axis=1), 1)
    tail = (1 - confidence) / 2
    return float(np.quantile(draws, tail)), float(np.quantile(draws, 1 - tail))


def _measured(method: str, refs: list[Reference], per: list[tuple[int, bool, bool]], n_predicted: int,
              confidence: float, n_resamples: int, seed: int, note: str | None) -> StepLabelScores:
    matches = np.array([m for m, _, _ in per], dtype=float)
    totals = np.array([len(r.labels) for r in refs], dtype=float)
    low, high = _bootstrap_ratio(matches, totals, n_resamples, seed, confidence)
    step = Measure(float(matches.sum() / totals.sum()), low, high, int(totals.sum()), "bootstrap")
    n = len(refs)
    return StepLabelScores(
        method, n, n_predicted, step, wilson_share(sum(e for _, e, _ in per), n, confidence),
        wilson_share(sum(f for _, _, f in per), n, confidence),
        {r.trajectory_id: f for r, (_, _, f) in zip(refs, per, strict=True)}, note)


def _uniform(refs: list[Reference], confidence: float) -> StepLabelScores:
    """Expected scores of naming one step drawn uniformly from each trajectory's steps, computed exactly."""
    step_hits, exact_p, first_p = 0.0, [], []
    matches_pmf = np.array([1.0])  # distribution of the matching labelled steps summed over trajectories
    for r in refs:
        outcomes = [_scores(r, _first_error_map(r, j)) for j in range(r.n_steps)]
        step_hits += sum(m for m, _, _ in outcomes) / r.n_steps
        exact_p.append(sum(e for _, e, _ in outcomes) / r.n_steps)
        first_p.append(sum(f for _, _, f in outcomes) / r.n_steps)
        own = np.bincount([m for m, _, _ in outcomes], minlength=len(r.labels) + 1) / r.n_steps
        matches_pmf = np.convolve(matches_pmf, own)
    total = sum(len(r.labels) for r in refs)
    cdf, tail = np.cumsum(matches_pmf), (1.0 - confidence) / 2
    step = Measure(step_hits / total, int(np.searchsorted(cdf, tail - 1e-12)) / total,
                   int(np.searchsorted(cdf, 1.0 - tail - 1e-12)) / total, total, "poisson_binomial")

    def expected(p: list[float]) -> Measure:
        low, high = poisson_binomial_range(np.array(p), confidence)
        return Measure(sum(p) / len(p), low, high, len(p), "poisson_binomial")
    return StepLabelScores("baseline:uniform", len(refs), len(refs), step,
                           expected(exact_p), expected(first_p), None, BASELINES["baseline:uniform"])


def step_label_agreement(con: Any, run_id: str, *, confidence: float = DEFAULT_CONFIDENCE,
                         n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> StepLabelAgreement:
    """Each method's step accuracy (micro, a missing prediction wrong), exact match and first-error accuracy
    ("no error" must be predicted as none) over the run's per-step-labelled trajectories, with 95% intervals:
    a percentile bootstrap over trajectories for step accuracy, Wilson for the shares, the exact
    Poisson-binomial range for the uniform baseline."""
    refs = [Reference(t, n, dict(zip(steps, labels, strict=True)), correct, human)
            for t, n, steps, labels, correct, human in con.execute(REFERENCE_SQL, {"run": run_id}).fetchall()]
    if not refs:
        return StepLabelAgreement(run_id)
    predictions: dict[str, dict[str, dict[int, str]]] = {}
    for method, trajectory, _kind, steps, labels in con.execute(PREDICTIONS_SQL, {"run": run_id}).fetchall():
        predictions.setdefault(method, {})[trajectory] = dict(zip(steps, labels, strict=True))
    out = StepLabelAgreement(run_id, len(refs), sum(len(r.labels) for r in refs))
    args = (confidence, n_resamples, seed)
    for name, rule in BASELINES.items():
        if name == "baseline:uniform":
            out.methods.append(_uniform(refs, confidence))
            continue
        note = rule
        if name == "baseline:final_if_wrong":
            by_people = sum(r.human_correct is not None for r in refs)
            unjudged = sum(r.human_correct is None and r.correct is None for r in refs)
            note += f" ({by_people} of {len(refs)} by people's verdict" + (
                f"; {unjudged} without any verdict count as right)" if unjudged else ")")
        out.methods.append(_measured(name, refs, [_scores(r, _first_error_map(r, _baseline_step(name, r)))
                                                  for r in refs], len(refs), *args, note))
    for method, kind in con.execute(METHODS_SQL, {"run": run_id}).fetchall():
        given = predictions.get(method, {})
        if kind == "map":
            per = [_scores(r, given.get(r.trajectory_id, {})) for r in refs]
            note = "a stored label map per trajectory; a trajectory without one counts as unlabelled"
        else:
            per = [_scores(r, _first_error_map(r, min(given[r.trajectory_id], default=None)
                                               if r.trajectory_id in given else None)) for r in refs]
            note = "names one first error (else none); every other labelled step counts as predicted fine"
        n_predicted = sum(r.trajectory_id in given for r in refs)
        note += f"; labels or names a step on {n_predicted} of {len(refs)}"
        if method == "rules":
            undecided, reason, passed_over = con.execute(UNDECIDED_SQL, {"run": run_id}).fetchone()
            note += (f"; {undecided} wrong trajectory(ies) undecided ({reason})" if undecided else "") + (
                f"; {passed_over} with a rule passed over for a missing capability" if passed_over else "")
        out.methods.append(_measured(method, refs, per, n_predicted, *args, note))
    return out
