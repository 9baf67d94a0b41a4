"""Search page: stored rubric verdicts, cited steps, clusters (the scans themselves run from the CLI)."""
from __future__ import annotations

from trajscope.app.access import sql_literal

from ._runs import REPLAY_LINK
from ._where import where_in


def rubric_choices_sql() -> str:
    """Every rubric with verdicts: hash, text, models, how many verdicts and matches."""
    return """SELECT rubric_hash, any_value(rubric_text) AS rubric_text, list(DISTINCT model ORDER BY model) AS models,
       count(*) AS verdicts, count(*) FILTER (verdict = 'match') AS matches
FROM rubric_verdicts GROUP BY rubric_hash ORDER BY max(created_at) DESC"""


def verdicts_sql(rubric_hash: str, runs: list[str], verdicts: list[str]) -> str:
    """The verdicts of one rubric in the chosen runs, hits first, each with its replay link."""
    filters = where_in({"run_id": runs, "verdict": verdicts})
    rubric = f"rubric_hash = {sql_literal(rubric_hash)}"
    where = f"{filters} AND {rubric}" if filters else f"WHERE {rubric}"
    return f"""SELECT {REPLAY_LINK} || '&verdict=' || verdict_id AS replay, run_id, question_id, verdict, explanation,
       cited_steps, rejected_citations, label, model, error, truncated, verdict_id
FROM rubric_verdicts
{where}
ORDER BY CASE verdict WHEN 'match' THEN 0 WHEN 'unsure' THEN 1 WHEN 'no_match' THEN 2 ELSE 3 END, run_id, question_id"""


def trajectory_verdicts_sql(trajectory_id: str) -> str:
    """Model verdicts on a trajectory's current version (rubric verdicts, attributions; no errors), newest first."""
    return f"""SELECT v.verdict_id, v.scanner,
       CASE v.scanner WHEN 'rubric' THEN 'rubric ' || v.rubric_hash || ': ' || coalesce(r.rubric_text, '?')
            ELSE 'attribution, ' || v.protocol END AS subject,
       v.model, v.verdict, v.explanation, v.cited_steps, v.agent
FROM scan_verdicts v
JOIN trajectories t ON t.trajectory_id = v.trajectory_id AND t.record_hash = v.record_hash
LEFT JOIN (SELECT rubric_hash, any_value(rubric_text) AS rubric_text FROM rubrics GROUP BY rubric_hash) r
       ON r.rubric_hash = v.rubric_hash
WHERE v.trajectory_id = {sql_literal(trajectory_id)} AND v.verdict <> 'error'
ORDER BY v.created_at DESC, v.verdict_id"""


def verdict_steps_sql(verdict_id: str) -> str:
    """The steps of a verdict's trajectory, each marked cited or not."""
    return f"""SELECT s.step_index, coalesce(s.source_ref, CAST(s.step_index AS VARCHAR)) AS label, s.kind, s.agent,
       left(coalesce(s.query, s.answer, s.message, s.observation, s.raw, ''), 400) AS text,
       list_contains(v.cited_steps, s.step_index) AS cited
FROM rubric_verdicts v JOIN steps s ON s.trajectory_id = v.trajectory_id
WHERE v.verdict_id = {sql_literal(verdict_id)}
ORDER BY s.step_index"""


def cluster_sizes_sql() -> str:
    """Each stored clustering's clusters with their sizes (newest clustering first)."""
    return """SELECT c.clustering_id, g.method, g.model, c.cluster_index, c.name, c.description,
       count(m.trajectory_id) AS trajectories, c.examples, g.created_at
FROM clusters c JOIN clusterings g ON g.clustering_id = c.clustering_id
LEFT JOIN cluster_members m ON m.clustering_id = c.clustering_id AND m.cluster_index = c.cluster_index
GROUP BY ALL ORDER BY g.created_at DESC, c.clustering_id, c.cluster_index"""


__all__ = ["cluster_sizes_sql", "rubric_choices_sql", "trajectory_verdicts_sql", "verdict_steps_sql", "verdicts_sql"]
