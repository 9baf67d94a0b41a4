"""Agreement of rubric scanners with people (`trajscope agreement --human`, the Search page): each (rubric, model)'s
verdicts against the labels given on the Search page, as precision, recall and Cohen's kappa with 95% intervals,
beside the trivial scanner that says match every time."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ..stats import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from ._attribution import Measure, _kappa, wilson_share
from ._sql import query_sql

PAIRS_SQL = query_sql("rubric_pairs")
ALWAYS_MATCH = "baseline:always_match"


@dataclass(frozen=True)
class ScannerAgreement:
    """One rubric scanner (or the always-match baseline on its labels) against people's labels."""

    rubric_hash: str
    scanner: str  # the model, or ALWAYS_MATCH
    n: int  # labelled verdicts (agree / disagree on a match or no_match)
    precision: Measure
    recall: Measure
    kappa: Measure


@dataclass(frozen=True)
class RubricAgreement:
    """Every labelled (rubric, model) with its baseline, and the SQL behind it."""

    rows: list[ScannerAgreement] = field(default_factory=list)
    sql: str = PAIRS_SQL

    def frame(self) -> pl.DataFrame:
        """One row per scanner: each measure as value [low, high], or its reason."""
        return pl.DataFrame(
            [{"rubric": r.rubric_hash, "scanner": r.scanner, "n": r.n, "precision": r.precision.text(),
              "recall": r.recall.text(), "kappa": r.kappa.text()} for r in self.rows],
            schema={"rubric": pl.Utf8, "scanner": pl.Utf8, "n": pl.Int64, "precision": pl.Utf8, "recall": pl.Utf8,
                    "kappa": pl.Utf8})


def _scored(rubric: str, scanner: str, said: list[bool], truth: list[bool], *, confidence: float,
            n_resamples: int, seed: int) -> ScannerAgreement:
    tp = sum(s and t for s, t in zip(said, truth, strict=True))
    precision = wilson_share(tp, sum(said), confidence, "does not apply: no labelled verdict says match")
    recall = wilson_share(tp, sum(truth), confidence,
                          "does not apply: no labelled trajectory matches by the people's labels")
    kappa = _kappa(list(zip(truth, said, strict=True)), n_resamples, seed, confidence)
    return ScannerAgreement(rubric, scanner, len(said), precision, recall, kappa)


def rubric_agreement(con: Any, run_id: str | None = None, rubric_hash: str | None = None, *,
                     confidence: float = DEFAULT_CONFIDENCE, n_resamples: int = DEFAULT_RESAMPLES,
                     seed: int = DEFAULT_SEED) -> RubricAgreement:
    """Precision (Wilson), recall (Wilson) and kappa (percentile bootstrap) of each labelled (rubric, model),
    with the always-match baseline on the same labels, over one run (None: every run)."""
    groups: dict[tuple[str, str], tuple[list[bool], list[bool]]] = {}
    for rubric, model, _, said, truth in con.execute(PAIRS_SQL, {"run": run_id, "rubric": rubric_hash}).fetchall():
        pair = groups.setdefault((rubric, model), ([], []))
        pair[0].append(bool(said))
        pair[1].append(bool(truth))
    out = RubricAgreement()
    for (rubric, model), (said, truth) in groups.items():
        out.rows.append(_scored(rubric, model, said, truth, confidence=confidence, n_resamples=n_resamples,
                                seed=seed))
        out.rows.append(_scored(rubric, ALWAYS_MATCH, [True] * len(truth), truth, confidence=confidence,
                                n_resamples=n_resamples, seed=seed))
    return out


__all__ = ["ALWAYS_MATCH", "PAIRS_SQL", "RubricAgreement", "ScannerAgreement", "rubric_agreement"]
