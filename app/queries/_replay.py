"""Trajectory replay page: one trajectory's question, steps, candidates, reads, register and verdicts."""
from __future__ import annotations

from trajscope.app.access import sql_literal


def _tid(trajectory_id: str) -> str:
    return sql_literal(trajectory_id)


# The question of a candidates / reads row, through its trajectory (q is NULL for a question not loaded).
_QUESTION_OF = """JOIN trajectories t USING (trajectory_id)
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id"""


def _is_gold(alias: str) -> str:
    """The gold flag of a passage row: its chunk is one of its question's gold chunks (false when none is known)."""
    return f"coalesce(list_contains(q.gold_chunk_ids, {alias}.chunk_id), false) AS is_gold"


def replay_header_sql(trajectory_id: str) -> str:
    """The trajectory, its run, its question with golds, and its per-trajectory facts."""
    return f"""SELECT t.trajectory_id, t.run_id, r.dataset, r.controller, r.condition, r.model,
       t.question_id, q.text AS question, q.gold_answer, q.aliases, q.question_type, q.hop_count,
       q.gold_chunk_ids, t.final_answer, t.end_reason, t.error, t.started_at, t.finished_at,
       f.search_count, f.read_count, f.turns, f.gate_rejections, f.injections,
       f.tokens_in, f.tokens_out, f.cost_usd, f.latency_ms, f.em, f.f1, f.contain, f.llm,
       answer_correct(f.llm, f.contain) AS correct,
       -- Through to_json: a warehouse from before migration 0009 (no echoed / hedged) still opens.
       CASE WHEN (to_json(a) ->> 'echoed') = 'true'
            THEN 'echo: the answer repeats a controller message; abstained, 0 under every judge'
            WHEN (to_json(a) ->> 'hedged') = 'true'
            THEN 'hedge: the answer names every option of the comparison; 0 under every judge' END AS answer_check
FROM trajectories t
JOIN runs r USING (run_id)
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
LEFT JOIN trajectory_facts f ON f.trajectory_id = t.trajectory_id
LEFT JOIN answer_checks a ON a.trajectory_id = t.trajectory_id AND a.record_hash = t.record_hash
WHERE t.trajectory_id = {_tid(trajectory_id)}"""


def replay_steps_sql(trajectory_id: str) -> str:
    """Every step in order with its action, arguments and effort (and, from migration 0004, whether
    its model response came from the cache)."""
    # SELECT *: a warehouse built before a column existed still opens read-only without it.
    return f"""SELECT * EXCLUDE (trajectory_id, raw) REPLACE (CAST(args AS VARCHAR) AS args)
FROM steps
WHERE trajectory_id = {_tid(trajectory_id)}
ORDER BY step_index"""


def replay_candidates_sql(trajectory_id: str) -> str:
    """Search candidates by step and rank, with whether each is a gold passage of the question."""
    return f"""SELECT c.step_index, c.rank, c.chunk_id, c.score, c.retriever,
       {_is_gold("c")}, c.snippet
FROM candidates c
{_QUESTION_OF}
WHERE c.trajectory_id = {_tid(trajectory_id)}
ORDER BY c.step_index, c.rank"""


def replay_reads_sql(trajectory_id: str) -> str:
    """Passages that entered the context (read or injected), with gold flags."""
    return f"""SELECT p.step_index, p.passage_index, p.chunk_id, p.via, p.is_new,
       {_is_gold("p")}, p.text
FROM reads p
{_QUESTION_OF}
WHERE p.trajectory_id = {_tid(trajectory_id)}
ORDER BY p.step_index, p.passage_index"""


def replay_register_sql(trajectory_id: str) -> str:
    """Requirement-register transitions in order."""
    return f"""SELECT event_index, step_index, item_id, sub_question, from_status, to_status, note,
       reason, supporting_chunk_ids
FROM register_events
WHERE trajectory_id = {_tid(trajectory_id)}
ORDER BY event_index"""


def replay_judgments_sql(trajectory_id: str) -> str:
    """Every verdict on the final answer."""
    return f"""SELECT judge, score, judge_model, origin, rationale, created_at
FROM judgments
WHERE trajectory_id = {_tid(trajectory_id)}
ORDER BY judge, created_at"""


def replay_evidence_sql(trajectory_id: str) -> str:
    """Per gold passage: retrieved, read, injected or seen only as a snippet, and when first."""
    return f"""SELECT chunk_id, retrieved, read, injected, snippet_only, first_retrieved_step, best_rank,
       first_read_step, first_injected_step
FROM gold_evidence
WHERE trajectory_id = {_tid(trajectory_id)}
ORDER BY chunk_id"""


def replay_labels_sql(trajectory_id: str) -> str:
    """Both taxonomies' labels for this trajectory and the facts that produced them."""
    return f"""SELECT 'read_gate:' || extractor AS taxonomy, label, discipline_subtype AS subtype,
       'no_read=' || no_read || ', snippet_only=' || snippet_only || ', low_evidence=' || low_evidence
       || ', entity_coverage=' || coalesce(CAST(round(entity_coverage, 3) AS VARCHAR), 'n/a')
       || ', gold read=' || n_gold_read || '/' || n_gold
       || ', gold retrieved=' || n_gold_retrieved || '/' || n_gold AS facts
FROM failure_rg
WHERE trajectory_id = {_tid(trajectory_id)}
UNION ALL
SELECT 'execution_rag', label, reasoning_subtype,
       'abstained=' || coalesce(CAST(abstained AS VARCHAR), 'n/a') || ', end_reason=' || coalesce(end_reason, 'n/a')
       || ', gold reached=' || n_gold_reached || '/' || n_gold
       || ', register_complete=' || register_complete
       || ', false_resolution=' || coalesce(CAST(false_resolution AS VARCHAR), 'n/a')
FROM failure_erag
WHERE trajectory_id = {_tid(trajectory_id)}
ORDER BY taxonomy"""


def replay_peers_sql(trajectory_id: str) -> str:
    """Other trajectories of the same question (same dataset and question id) in other runs."""
    return f"""SELECT o.trajectory_id, o.run_id, r.condition, r.controller, r.model
FROM trajectories t
JOIN trajectories o ON o.dataset = t.dataset AND o.question_id = t.question_id
                   AND o.trajectory_id <> t.trajectory_id
JOIN runs r ON r.run_id = o.run_id
WHERE t.trajectory_id = {_tid(trajectory_id)}
ORDER BY r.condition, o.run_id"""


def run_choices_sql() -> str:
    """Runs to pick from, with what names them (dataset, controller, condition, model)."""
    return "SELECT run_id, dataset, controller, condition, model FROM runs ORDER BY dataset, run_id"


def question_choices_sql(run_id: str, *, limit: int = 5000) -> str:
    """Trajectories of one run to pick from, with their outcome."""
    return f"""SELECT trajectory_id, question_id, end_reason, em
FROM trajectory_facts
WHERE run_id = {sql_literal(run_id)}
ORDER BY question_id
LIMIT {int(limit)}"""
