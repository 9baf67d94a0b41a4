"""The answer verdict against people: per judge, accuracy and Cohen's kappa of its correctness against the
human final label of each trajectory (validates the judges before their verdicts feed the baselines)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED, cohen_kappa, generator
from ._attribution import Measure, wilson_share
from ._sql import query_sql

VERDICTS_SQL = query_sql("answer_verdicts_vs_people")


@dataclass(frozen=True)
class JudgeVersusPeople:
    """One judge's verdicts against the human final labels; `disagreements` names the trajectories."""

    judge: str
    n: int
    n_unjudged: int
    accuracy: Measure
    kappa: Measure
    disagreements: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AnswerVerdictAgreement:
    """Every judge's agreement with the people's final labels in one run (empty: no human final label)."""

    run_id: str
    judges: list[JudgeVersusPeople] = field(default_factory=list)


def _kappa(human: np.ndarray, judge: np.ndarray, confidence: float, n_resamples: int, seed: int) -> Measure:
    rng = generator(seed)
    draws = [cohen_kappa(human[i], judge[i]).kappa
             for i in (rng.integers(0, len(human), len(human)) for _ in range(n_resamples))]
    tail = (1 - confidence) / 2
    return Measure(cohen_kappa(human, judge).kappa, float(np.quantile(draws, tail)),
                   float(np.quantile(draws, 1 - tail)), len(human), "bootstrap")


def answer_verdict_agreement(con: Any, run_id: str, *, confidence: float = DEFAULT_CONFIDENCE,
                             n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> AnswerVerdictAgreement:
    """Accuracy (Wilson interval) and Cohen's kappa (percentile bootstrap) of each judge's verdict against the
    human final label, over the trajectories the judge decided; `trajscope` is the verdict trajscope uses."""
    rows: dict[str, list[tuple[str, bool, bool | None]]] = {}
    for judge, trajectory, human, says in con.execute(VERDICTS_SQL, {"run": run_id}).fetchall():
        rows.setdefault(judge, []).append((trajectory, bool(human), says))
    out = AnswerVerdictAgreement(run_id)
    for judge, items in rows.items():
        decided = [(t, h, s) for t, h, s in items if s is not None]
        human = np.array([h for _, h, _ in decided], dtype=object)
        verdict = np.array([bool(s) for _, _, s in decided], dtype=object)
        hits = int(sum(h == s for _, h, s in decided))
        out.judges.append(JudgeVersusPeople(
            judge, len(decided), len(items) - len(decided),
            wilson_share(hits, len(decided), confidence, "does not apply: the judge decided no labelled answer"),
            _kappa(human, verdict, confidence, n_resamples, seed) if decided
            else Measure(None, reason="does not apply: the judge decided no labelled answer"),
            sorted(t for t, h, s in decided if h != s)))
    return out
