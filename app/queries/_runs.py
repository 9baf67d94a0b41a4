"""Runs page: every run with its settings, size, accuracy and cost; the trajectories of one run."""
from __future__ import annotations

from dataclasses import dataclass, field

from trajscope.app.access import sql_literal

from ._where import where_in

REPLAY_LINK = "'./replay?trajectory=' || url_encode(trajectory_id)"


@dataclass(frozen=True)
class RunFilters:
    """Selected values per run attribute (empty: no filter)."""

    dataset: list[str] = field(default_factory=list)
    controller: list[str] = field(default_factory=list)
    condition: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)

    def as_mapping(self) -> dict[str, list[str]]:
        return {"dataset": self.dataset, "controller": self.controller,
                "condition": self.condition, "model": self.model}


def run_filter_options_sql() -> str:
    """Distinct values of each filterable run attribute."""
    return """SELECT list(DISTINCT dataset ORDER BY dataset) FILTER (dataset IS NOT NULL)          AS dataset,
       list(DISTINCT controller ORDER BY controller) FILTER (controller IS NOT NULL) AS controller,
       list(DISTINCT condition ORDER BY condition) FILTER (condition IS NOT NULL)    AS condition,
       list(DISTINCT model ORDER BY model) FILTER (model IS NOT NULL)                AS model
FROM runs"""


def runs_sql(filters: RunFilters) -> str:
    """One row per run from run_summary, filtered."""
    return f"""SELECT run_id, dataset, controller, condition, model, n_trajectories,
       em, f1, contain_acc, llm_acc, zero_read_final_rate,
       mean_searches, mean_reads, mean_turns, mean_tokens,
       cost_usd, cost_per_question, incurred_cost_usd, cached_calls, mean_latency_ms, errors,
       temperature, retriever_kind, top_k, seed, source, started_at
FROM run_summary
{where_in(filters.as_mapping())}
ORDER BY dataset, controller, condition, run_id"""


def run_trajectories_sql(run_id: str, *, limit: int = 5000) -> str:
    """The trajectories of one run with their outcome and effort, each linked to its replay."""
    return f"""SELECT {REPLAY_LINK} AS replay, question_id, question_type, hop_count,
       final_answer, end_reason, em, f1, contain, llm,
       search_count, read_count, turns, gate_rejections, injections, errors,
       tokens_in, tokens_out, cost_usd, latency_ms
FROM trajectory_facts
WHERE run_id = {sql_literal(run_id)}
ORDER BY question_id
LIMIT {int(limit)}"""


def transition_questions_sql(run_a: str, run_b: str, question_ids: list[str]) -> str:
    """The paired trajectories of some questions, linked to their side-by-side replay."""
    ids = ", ".join(sql_literal(q) for q in question_ids) or "NULL"
    return f"""SELECT a.question_id,
       './replay?trajectory=' || url_encode(a.trajectory_id) || '&vs=' || url_encode(b.trajectory_id)
           AS side_by_side,
       q.text AS question, q.gold_answer, a.final_answer AS answer_a, b.final_answer AS answer_b
FROM trajectories a
JOIN trajectories b ON b.question_id = a.question_id AND b.dataset = a.dataset
LEFT JOIN questions q ON q.dataset = a.dataset AND q.question_id = a.question_id
WHERE a.run_id = {sql_literal(run_a)} AND b.run_id = {sql_literal(run_b)}
  AND a.question_id IN ({ids})
ORDER BY a.question_id"""


CAPABILITIES = ("search_candidates", "snippets", "read_action", "gold_answers", "gold_passages", "judgments")


def _capability_cell(name: str) -> str:
    # yes / no / unknown (NULL), marked when a user, mapping or writer declared it rather than the log showing it.
    return (f"CASE WHEN {name} IS NULL THEN 'unknown' WHEN {name} THEN 'yes' ELSE 'no' END"
            f" || CASE WHEN list_contains(declared, '{name}') THEN ' (declared)' ELSE '' END AS {name}")


def run_capabilities_sql(run_ids: list[str]) -> str:
    """Per run, each capability of run_capabilities as yes / no / unknown (marked when declared), with its reason."""
    ids = ", ".join(sql_literal(r) for r in run_ids) or "NULL"
    cells = ",\n       ".join(_capability_cell(c) for c in CAPABILITIES)
    reasons = ",\n       ".join(f"{c}_reason" for c in CAPABILITIES)
    return f"""SELECT run_id,
       {cells},
       profile_source,
       {reasons}
FROM run_capabilities
WHERE run_id IN ({ids})
ORDER BY run_id"""
