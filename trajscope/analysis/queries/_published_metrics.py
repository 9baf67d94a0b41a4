"""One row per method with the metrics each label family is published with: per-step labels (step accuracy,
exact, first-error accuracy), Who&When (step and agent accuracy); a metric that does not apply says why."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ._answer_agreement import AnswerVerdictAgreement, answer_verdict_agreement
from ._attribution import HumanAgreement, Measure, human_agreement
from ._step_label_agreement import StepLabelAgreement, step_label_agreement
from ._trail_agreement import DEVIATION, NO_SPANS, TrailAgreement, trail_agreement

METRICS = ("step_accuracy", "exact", "first_error_accuracy", "agent_accuracy", "location_accuracy", "category_f1",
           "joint_accuracy")
_SPAN_METRICS = ("location_accuracy", "category_f1", "joint_accuracy")


@dataclass(frozen=True)
class PublishedRow:
    """A method's published metrics; `paired` is McNemar on first-error hits against the --versus method."""

    method: str
    n: int
    measures: dict[str, Measure]
    paired: str = ""
    note: str = ""


@dataclass
class PublishedMetrics:
    """The rows of one run and which label family they come from."""

    run_id: str
    family: str | None = None
    rows: list[PublishedRow] = field(default_factory=list)

    def frame(self, numeric: bool = False) -> pl.DataFrame:
        """As text cells (value [low, high], or the reason), or numeric with _low / _high columns (csv)."""
        records = []
        for r in self.rows:
            record: dict[str, object] = {"method": r.method, "n": r.n}
            for name in METRICS:
                m = r.measures.get(name) or Measure(None, reason="does not apply")
                if numeric:
                    record.update({name: m.value, f"{name}_low": m.low, f"{name}_high": m.high})
                else:  # an empty cell: why is in reasons(), printed above the table
                    record[name] = m.text() if m.value is not None else ""
            record["mcnemar"] = r.paired
            if not numeric:
                record["note"] = r.note
            records.append(record)
        return pl.DataFrame(records, infer_schema_length=None)

    def reasons(self) -> list[str]:
        """Each distinct reason a metric is empty, with the metrics it empties (for the text output)."""
        seen: dict[str, set[str]] = {}
        for r in self.rows:
            for name in METRICS:
                m = r.measures.get(name)
                if m is not None and m.value is None and m.reason:
                    seen.setdefault(m.reason, set()).add(name)
        return [f"{', '.join(sorted(names))}: {reason}" for reason, names in seen.items()]


def _mcnemar_text(result: object) -> str:
    if isinstance(result, str):
        return result
    return f"only this {result.a_only}, only the other {result.b_only}; exact p {result.exact_p:.3g}"  # type: ignore[attr-defined]


def _span_measures(method: str, trail: TrailAgreement | None) -> dict[str, Measure]:
    """TRAIL's three span metrics of a method, or why they are empty."""
    scores = trail.methods.get(method) if trail is not None else None
    if scores is None:
        reason = "does not apply: the method names no span of an annotated trace"
        if trail is None or not trail.n_traces:
            reason = NO_SPANS
        elif method == "baseline:uniform_random":
            reason = "does not apply: a uniform guess has expected hits, no span per trace"
        return {name: Measure(None, reason=reason) for name in _SPAN_METRICS}
    return {name: getattr(scores, name) for name in _SPAN_METRICS}


def published_metrics(per_step: StepLabelAgreement, decisive: HumanAgreement | None,
                      versus: str | None = None, trail: TrailAgreement | None = None) -> PublishedMetrics:
    """Per-step label scores when the run has per-step labels, else the Who&When decisive-step scores with
    TRAIL's span metrics where the run has TRAIL span labels."""
    out = PublishedMetrics(per_step.run_id)
    if per_step.methods:
        out.family = "per-step labels"
        not_agents = Measure(None, reason="does not apply: per-step labels name no agent")
        for m in per_step.methods:
            paired = _mcnemar_text(per_step.versus(m.method, versus)) if versus and versus != m.method else ""
            out.rows.append(PublishedRow(
                m.method, m.n, {"step_accuracy": m.step_accuracy, "exact": m.exact,
                                "first_error_accuracy": m.first_error_accuracy, "agent_accuracy": not_agents,
                                "location_accuracy": Measure(None, reason="does not apply: per-step labels, no spans"),
                                "category_f1": Measure(None, reason="does not apply: per-step labels, no categories"),
                                "joint_accuracy": Measure(None, reason="does not apply: per-step labels, no spans")},
                paired, m.note or ""))
        return out
    if decisive is None or not decisive.methods:
        return out
    out.family = "first error only (Who&When decisive step, TRAIL earliest span)"
    if trail is not None and trail.n_traces:
        out.family += (f"; TRAIL span metrics {DEVIATION}, the first- and final-step baselines naming their span "
                       f"with the run's most common category, {trail.common_category}")
    no_map = Measure(None, reason="does not apply: the labels name one decisive step, no label per step")
    for agreed in decisive.methods:
        out.rows.append(PublishedRow(
            agreed.method, agreed.n_labelled,
            {"step_accuracy": agreed.step, "exact": no_map, "first_error_accuracy": no_map,
             "agent_accuracy": agreed.agent, **_span_measures(agreed.method, trail)},
            f"vs rules: only rules {agreed.vs_rules.a_only}, only this {agreed.vs_rules.b_only}; exact p "
            f"{agreed.vs_rules.exact_p:.3g}" if agreed.vs_rules else (agreed.vs_rules_reason or ""),
            f"coverage {agreed.coverage:.3f}"))
    return out


@dataclass(frozen=True)
class PublishedAgreement:
    """`trajscope agreement --human`'s first tables: the published metrics per method and the answer verdicts."""

    metrics: PublishedMetrics
    answers: AnswerVerdictAgreement

    def answers_frame(self) -> pl.DataFrame:
        """One row per judge: accuracy and kappa against people's final labels, and the disagreeing trajectories."""
        return pl.DataFrame(
            [{"judge": j.judge, "n": j.n, "unjudged": j.n_unjudged, "accuracy": j.accuracy.text(),
              "kappa": j.kappa.text(), "disagreements": ", ".join(j.disagreements)} for j in self.answers.judges],
            schema={"judge": pl.Utf8, "n": pl.Int64, "unjudged": pl.Int64, "accuracy": pl.Utf8, "kappa": pl.Utf8,
                    "disagreements": pl.Utf8})


def published_agreement(con: Any, run_id: str, method: str | None = None, versus: str | None = None,
                        decisive: HumanAgreement | None = None) -> PublishedAgreement:
    """The run's published metrics per method (or `method` beside the baselines), each paired with `versus` by
    McNemar, and every judge's answer verdicts against people; `decisive` reuses a computed human_agreement."""
    per_step = step_label_agreement(con, run_id)
    if method is not None:
        per_step.methods[:] = [m for m in per_step.methods if m.method == method or m.method.startswith("baseline:")]
    if decisive is None and not per_step.methods:
        decisive = human_agreement(con, run_id, method)
    trail = trail_agreement(con, run_id) if not per_step.methods else None
    return PublishedAgreement(published_metrics(per_step, decisive, versus, trail),
                              answer_verdict_agreement(con, run_id))
