-- The failure plane: per run and extractor, P_disc and P_post (Read-Gate discipline and post-gold-read failures) as shares of the run's judged trajectories; P_disc is NULL for runs without a read action and P_post for runs without gold passages, both when no trajectory of the run has a verdict, each with its reason.
CREATE OR REPLACE VIEW failure_plane AS
WITH totals AS (
    SELECT run_id, count(*) AS n_trajectories,
           count(*) FILTER (correct IS NOT NULL) AS n_judged,
           count(*) FILTER (correct = false)     AS n_wrong,
           any_value(correct_reason)             AS unjudged_reason
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
ran AS (
    -- The extractors whose coverage trajscope judge computed for the run's current records.
    SELECT DISTINCT t.run_id, ec.extractor
    FROM entity_coverage ec
    JOIN trajectories t ON t.trajectory_id = ec.trajectory_id AND t.record_hash = ec.record_hash
),
grid AS (
    -- The gate's extractor always has a row (no-read and snippet-only need no coverage); another
    -- (spaCy) only where it ran: missing coverage is not "not low-evidence".
    SELECT t.*, x.extractor FROM totals t CROSS JOIN entity_extractors() x
    WHERE x.extractor = gate_extractor()
       OR EXISTS (SELECT 1 FROM ran r WHERE r.run_id = t.run_id AND r.extractor = x.extractor)
)
SELECT g.run_id, r.condition, r.controller, r.model, r.dataset, g.extractor,
       g.n_trajectories, g.n_judged, g.n_wrong,
       -- a failure is a wrong answer: the shares are over the judged trajectories (an unjudged one can be
       -- neither a failure nor a success), and with no verdict at all no share is known
       CASE WHEN c.read_action AND g.n_judged > 0 THEN coalesce(l.n_disc, 0) END                          AS n_disc,
       CASE WHEN c.gold_passages AND g.n_judged > 0 THEN coalesce(l.n_post, 0) END                        AS n_post,
       CASE WHEN c.read_action AND g.n_judged > 0 THEN coalesce(l.n_disc, 0) / g.n_judged END       AS p_disc,
       CASE WHEN c.gold_passages AND g.n_judged > 0 THEN coalesce(l.n_post, 0) / g.n_judged END     AS p_post,
       CASE WHEN c.read_action AND g.n_judged > 0 THEN coalesce(l.n_disc_any, 0) / g.n_judged END   AS p_disc_any,
       CASE WHEN c.gold_passages AND g.n_judged > 0 THEN coalesce(l.n_post_any, 0) / g.n_judged END AS p_post_any,
       c.read_action,
       CASE WHEN c.read_action IS NOT TRUE THEN 'no read action in this log: discipline metrics do not apply'
            WHEN g.n_judged = 0 THEN 'no trajectory has a verdict (' || g.unjudged_reason || ')' END AS p_disc_reason,
       CASE WHEN c.gold_passages IS NOT TRUE THEN c.gold_passages_reason
            WHEN g.n_judged = 0 THEN 'no trajectory has a verdict (' || g.unjudged_reason || ')' END AS p_post_reason
FROM grid g
LEFT JOIN labels l USING (run_id, extractor)
LEFT JOIN runs r USING (run_id)
LEFT JOIN run_capabilities c USING (run_id);
COMMENT ON COLUMN failure_plane.p_disc IS 'Discipline failures (primary label) over the run''s judged trajectories (n_judged); NULL without a read action or with no verdict in the run (see p_disc_reason).';
COMMENT ON COLUMN failure_plane.p_post IS 'Post-gold-read failures (primary label) over the run''s judged trajectories (n_judged); NULL without gold passages or with no verdict in the run (see p_post_reason).';
COMMENT ON COLUMN failure_plane.p_disc_any IS 'Trajectories where any discipline test fires, multi-label, over the judged trajectories (n_judged); NULL without a read action or with no verdict in the run (see p_disc_reason).';
COMMENT ON COLUMN failure_plane.p_post_any IS 'Wrong trajectories that read a gold passage (without a read action: were given one), multi-label, over the judged trajectories (n_judged); NULL without gold passages or with no verdict in the run (see p_post_reason).';
COMMENT ON COLUMN failure_plane.p_disc_reason IS 'Why p_disc is NULL.';
COMMENT ON COLUMN failure_plane.p_post_reason IS 'Why p_post is NULL.';
COMMENT ON COLUMN failure_plane.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN failure_plane.condition IS 'Condition / intervention name the run was started with.';
COMMENT ON COLUMN failure_plane.controller IS 'Agent controller (read_gate, execution_rag, arag, vanilla_rag, direct, or the source system).';
COMMENT ON COLUMN failure_plane.model IS 'Agent model name as the log gives it (NULL: not recorded).';
COMMENT ON COLUMN failure_plane.dataset IS 'Dataset the run answered (NULL: the log does not say).';
COMMENT ON COLUMN failure_plane.extractor IS 'Entity extractor of the low-evidence test: regex or spacy (Read-Gate reports both).';
COMMENT ON COLUMN failure_plane.n_trajectories IS 'All the run''s trajectories (judged or not).';
COMMENT ON COLUMN failure_plane.n_judged IS 'Trajectories with a verdict (correct not NULL): the denominator of p_disc and p_post.';
COMMENT ON COLUMN failure_plane.n_wrong IS 'Wrong trajectories (correct = false).';
COMMENT ON COLUMN failure_plane.n_disc IS 'Wrong trajectories whose primary Read-Gate label is discipline; NULL without a read action or with no verdict in the run (see p_disc_reason).';
COMMENT ON COLUMN failure_plane.n_post IS 'Wrong trajectories whose primary label is post_gold_read; NULL without gold passages or with no verdict in the run (see p_post_reason).';
COMMENT ON COLUMN failure_plane.read_action IS 'The run''s agent has a read action (run_capabilities.read_action; NULL: unknown).';
