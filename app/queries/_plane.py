"""Failure plane page: P_disc against P_post per run, and the failures behind one point."""
from __future__ import annotations

from trajscope.app.access import sql_literal

from ._runs import REPLAY_LINK


def failure_plane_sql(extractor: str, datasets: list[str]) -> str:
    """One row per run of the failure_plane view for one entity extractor."""
    dataset_filter = (
        f"\n  AND dataset IN ({', '.join(sql_literal(d) for d in datasets)})" if datasets else ""
    )
    return f"""SELECT run_id, dataset, controller, condition, model, n_trajectories, n_wrong,
       n_disc, n_post, p_disc, p_post, read_action, p_disc_reason, p_post_reason
FROM failure_plane
WHERE extractor = {sql_literal(extractor)}{dataset_filter}
ORDER BY dataset, condition, run_id"""


def plane_failures_sql(run_id: str, extractor: str) -> str:
    """The wrong trajectories of one run with their Read-Gate label, linked to their replays."""
    return f"""SELECT {REPLAY_LINK} AS replay, question_id, label, discipline_subtype,
       question_type, hop_count, read_count, n_gold, n_gold_retrieved, n_gold_read, entity_coverage
FROM failure_rg
WHERE run_id = {sql_literal(run_id)} AND extractor = {sql_literal(extractor)}
ORDER BY label, question_id"""


def plane_arrows_sql(extractor: str, datasets: list[str]) -> str:
    """Arrow end points: each baseline run to every other condition of the same dataset, model and reasoning
    effort, the settings a study varies (runs without a read action have no P_disc, so no arrow)."""
    dataset_filter = (
        f"\n  AND dataset IN ({', '.join(sql_literal(d) for d in datasets)})" if datasets else ""
    )
    # MATERIALIZED: the plane is computed once, not once per side of the self-join.
    return f"""WITH plane AS MATERIALIZED (
    SELECT * FROM failure_plane WHERE extractor = {sql_literal(extractor)}{dataset_filter}
)
SELECT b.dataset, b.run_id AS from_run, i.run_id AS to_run, i.condition,
       b.p_post AS x, b.p_disc AS y, i.p_post AS x2, i.p_disc AS y2
FROM plane b
JOIN plane i ON i.dataset = b.dataset AND i.model IS NOT DISTINCT FROM b.model
            AND i.run_id <> b.run_id AND i.condition IS DISTINCT FROM 'baseline'
JOIN runs rb ON rb.run_id = b.run_id
JOIN runs ri ON ri.run_id = i.run_id AND ri.reasoning_effort IS NOT DISTINCT FROM rb.reasoning_effort
WHERE b.condition = 'baseline' AND b.p_disc IS NOT NULL AND i.p_disc IS NOT NULL
ORDER BY b.dataset, from_run, to_run"""
