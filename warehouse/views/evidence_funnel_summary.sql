-- Evidence-funnel shares per run, per (run, hop position) and per (run, question type): of the gold passages, the share queried for, retrieved, shown in the top-k, read and used.
CREATE OR REPLACE VIEW evidence_funnel_summary AS
-- A stage's share is over the passages where the stage applies (NULL stage values are left out,
-- and the share is NULL when it applies to none: see evidence_funnel.<stage>_reason).
SELECT run_id,
       CASE WHEN grouping(hop) = 0 THEN 'hop' WHEN grouping(question_type) = 0 THEN 'question_type'
            ELSE 'run' END                                          AS grouped_by,
       hop, question_type,
       -- A trajectory has one question type and one run, and one row per hop is marked per trajectory.
       CASE WHEN grouping(hop) = 0 THEN count(*) FILTER (first_of_hop)
            ELSE count(*) FILTER (first_of_trajectory) END          AS n_trajectories,
       count(*)                                                     AS n_passages,
       avg(queried::INTEGER)                                        AS queried,
       avg(retrieved::INTEGER)                                      AS retrieved,
       avg(snippet_shown::INTEGER)                                  AS snippet_shown,
       avg(read::INTEGER)                                           AS read,
       avg(used::INTEGER)                                           AS used,
       avg(best_rank)                                               AS mean_best_rank
FROM evidence_funnel
GROUP BY GROUPING SETS ((run_id), (run_id, hop), (run_id, question_type));
COMMENT ON COLUMN evidence_funnel_summary.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN evidence_funnel_summary.grouped_by IS 'The grouping of the row: run (the whole run), hop (one hop position) or question_type.';
COMMENT ON COLUMN evidence_funnel_summary.hop IS 'Hop position (evidence_funnel.hop) for grouped_by = hop; NULL otherwise.';
COMMENT ON COLUMN evidence_funnel_summary.question_type IS 'Question type for grouped_by = question_type (NULL there: the source gives none); NULL otherwise.';
COMMENT ON COLUMN evidence_funnel_summary.n_trajectories IS 'Trajectories with at least one gold passage in the group.';
COMMENT ON COLUMN evidence_funnel_summary.n_passages IS 'Gold passages (trajectory x gold passage rows) in the group: the denominator of each share where the stage applies.';
COMMENT ON COLUMN evidence_funnel_summary.queried IS 'Share of gold passages a query named (title or bridge entity).';
COMMENT ON COLUMN evidence_funnel_summary.retrieved IS 'Share listed among search candidates; NULL: the log has no candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel_summary.snippet_shown IS 'Share listed within the shown top-k; NULL: no candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel_summary.read IS 'Share read or injected; NULL: no read action and nothing injected.';
COMMENT ON COLUMN evidence_funnel_summary.used IS 'Share used (register resolution, a later query naming what it yields, or the final naming it).';
COMMENT ON COLUMN evidence_funnel_summary.mean_best_rank IS 'Mean best candidate rank over the retrieved passages (NULL: none retrieved).';
