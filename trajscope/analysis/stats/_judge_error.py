"""Accuracy corrected for judge error: sensitivity / specificity from a judge-vs-human sample, Rogan-Gladen."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class JudgeErrorRates:
    """The judge's sensitivity and specificity against human verdicts on a validation sample."""

    sensitivity: float  # P(judge says right | human says right)
    specificity: float  # P(judge says wrong | human says wrong)
    n_human_right: int
    n_human_wrong: int


@dataclass(frozen=True)
class CorrectedAccuracy:
    """Judge-measured accuracy, its Rogan-Gladen correction (clipped to [0, 1]) and a delta-method CI."""

    observed: float
    corrected: float
    corrected_unclipped: float
    low: float
    high: float
    n: int
    rates: JudgeErrorRates
    confidence: float


def judge_error_rates(judge: Sequence[bool], human: Sequence[bool]) -> JudgeErrorRates:
    """Sensitivity and specificity of the judge's verdicts, taking the human verdicts as truth."""
    j = np.asarray(judge, dtype=bool)
    h = np.asarray(human, dtype=bool)
    if j.shape != h.shape or j.ndim != 1:
        raise ValueError("judge and human verdicts must be equal-length 1-d sequences")
    n_right, n_wrong = int(h.sum()), int((~h).sum())
    if n_right == 0 or n_wrong == 0:
        raise ValueError("the validation sample needs answers humans call right and answers they call wrong")
    return JudgeErrorRates(float(j[h].mean()), float((~j[~h]).mean()), n_right, n_wrong)


def rogan_gladen(observed_correct: Sequence[bool], rates: JudgeErrorRates, *,
                 confidence: float = 0.95) -> CorrectedAccuracy:
    """(q + Sp - 1) / (Se + Sp - 1) with the delta-method variance of q, Se and Sp, all three
    estimated from independent samples (the run's judged answers, the validation sample)."""
    q_values = np.asarray(observed_correct, dtype=float)
    n = q_values.size
    if n == 0:
        raise ValueError("no judged answers to correct")
    se, sp = rates.sensitivity, rates.specificity
    youden = se + sp - 1
    if youden <= 0:
        raise ValueError(f"the judge is no better than chance (sensitivity {se:.3f} + specificity {sp:.3f} <= 1)")
    q = float(q_values.mean())
    p = (q + sp - 1) / youden
    var = (q * (1 - q) / n
           + p**2 * se * (1 - se) / rates.n_human_right
           + (1 - p) ** 2 * sp * (1 - sp) / rates.n_human_wrong) / youden**2
    z = stats.norm.isf((1 - confidence) / 2)
    half = z * np.sqrt(var)
    clip = lambda v: float(min(1.0, max(0.0, v)))  # noqa: E731 - a prevalence lies in [0, 1]
    return CorrectedAccuracy(q, clip(p), float(p), clip(p - half), clip(p + half), n, rates, confidence)


__all__ = ["CorrectedAccuracy", "JudgeErrorRates", "judge_error_rates", "rogan_gladen"]
