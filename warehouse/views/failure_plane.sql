-- The failure plane: per run and extractor, P_disc and P_post (Read-Gate discipline and post-gold-read failures) as shares of all the run's trajectories; P_disc is NULL for runs without a read action.
CREATE OR REPLACE VIEW failure_plane AS
WITH totals AS (
    SELECT run_id, count(*) AS n_trajectories,
           count(*) FILTER (correct IS NOT NULL) AS n_judged,
           count(*) FILTER (correct = false)     AS n_wrong
    FROM trajectory_correctness GROUP BY run_id
),
labels AS (
    SELECT run_id, extractor,
           count(*) FILTER (label = 'discipline')     AS n_disc,
           count(*) FILTER (label = 'post_gold_read') AS n_post,
           count(*) FILTER (is_discipline)            AS n_disc_any,
           count(*) FILTER (is_post_gold_read)        AS n_post_any
    FROM failure_rg GROUP BY run_id, extractor
),
grid AS (
    SELECT t.*, x.extractor FROM totals t CROSS JOIN entity_extractors() x
)
SELECT g.run_id, r.condition, r.controller, r.model, r.dataset, g.extractor,
       g.n_trajectories, g.n_judged, g.n_wrong,
       coalesce(l.n_disc, 0)                        AS n_disc,
       coalesce(l.n_post, 0)                        AS n_post,
       CASE WHEN p.read_action THEN coalesce(l.n_disc, 0) / g.n_trajectories END     AS p_disc,
       coalesce(l.n_post, 0) / g.n_trajectories                                    AS p_post,
       CASE WHEN p.read_action THEN coalesce(l.n_disc_any, 0) / g.n_trajectories END AS p_disc_any,
       coalesce(l.n_post_any, 0) / g.n_trajectories                                AS p_post_any,
       p.read_action
FROM grid g
LEFT JOIN labels l USING (run_id, extractor)
LEFT JOIN runs r USING (run_id)
LEFT JOIN run_protocol p USING (run_id);
