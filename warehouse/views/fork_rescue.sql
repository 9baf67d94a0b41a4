-- One row per fork run (a parent run x an intervention x a step rule): judged pairs, the rescue rate (share of wrong parents the intervention made right) and the break rate, the McNemar discordant cells and both accuracies; NULL with rescue_reason when no judged parent was wrong. The exact McNemar p and the CIs come from analysis.stats.fork_rescue_stats.
CREATE OR REPLACE VIEW fork_rescue AS
SELECT run_id, parent_run_id, any_value(intervention) AS intervention, any_value(rule) AS rule,
       bool_or(placebo) AS placebo,
       count(*) AS n_children,
       count(*) FILTER (fork_failed) AS n_failed,
       count(*) FILTER (NOT fork_failed AND parent_correct IS NOT NULL AND child_correct IS NOT NULL) AS n_pairs,
       count(*) FILTER (NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL) AS n_parent_wrong,
       count(*) FILTER (rescued) AS n_rescued,
       count(*) FILTER (NOT fork_failed AND parent_correct = true AND child_correct IS NOT NULL) AS n_parent_right,
       count(*) FILTER (broke) AS n_broke,
       count(*) FILTER (rescued) / nullif(count(*) FILTER (NOT fork_failed AND parent_correct = false
                                                            AND child_correct IS NOT NULL), 0) AS rescue_rate,
       count(*) FILTER (broke) / nullif(count(*) FILTER (NOT fork_failed AND parent_correct = true
                                                          AND child_correct IS NOT NULL), 0) AS break_rate,
       avg(CASE WHEN parent_correct THEN 1.0 ELSE 0.0 END) FILTER (NOT fork_failed AND parent_correct IS NOT NULL
                                                                   AND child_correct IS NOT NULL) AS parent_accuracy,
       avg(CASE WHEN child_correct THEN 1.0 ELSE 0.0 END) FILTER (NOT fork_failed AND parent_correct IS NOT NULL
                                                                  AND child_correct IS NOT NULL) AS child_accuracy,
       CASE WHEN count(*) FILTER (NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL) = 0
            THEN CASE WHEN count(*) FILTER (NOT fork_failed AND parent_correct IS NOT NULL
                                            AND child_correct IS NOT NULL) = 0
                      THEN 'does not apply: no judged pair (run trajscope judge, or every fork failed)'
                      ELSE 'does not apply: no judged parent was wrong' END END AS rescue_reason
FROM fork_pairs
GROUP BY run_id, parent_run_id;
COMMENT ON COLUMN fork_rescue.run_id IS 'The fork run.';
COMMENT ON COLUMN fork_rescue.parent_run_id IS 'The run its children branched off.';
COMMENT ON COLUMN fork_rescue.intervention IS 'The intervention of the fork run.';
COMMENT ON COLUMN fork_rescue.rule IS 'The step rule of the fork run (a number, final, first_read, ...).';
COMMENT ON COLUMN fork_rescue.placebo IS 'True for a placebo fork run (the control of inject_gold).';
COMMENT ON COLUMN fork_rescue.n_children IS 'Children logged, failed forks included.';
COMMENT ON COLUMN fork_rescue.n_failed IS 'Children whose fork could not be made (fork_pairs.fork_failed).';
COMMENT ON COLUMN fork_rescue.n_pairs IS 'Made forks with a verdict for both parent and child.';
COMMENT ON COLUMN fork_rescue.n_parent_wrong IS 'Judged pairs whose parent was wrong: the rescue rate''s denominator.';
COMMENT ON COLUMN fork_rescue.n_rescued IS 'Pairs the fork rescued (parent wrong, child right): McNemar''s b cell.';
COMMENT ON COLUMN fork_rescue.n_parent_right IS 'Judged pairs whose parent was right: the break rate''s denominator.';
COMMENT ON COLUMN fork_rescue.n_broke IS 'Pairs the fork broke (parent right, child wrong): McNemar''s c cell.';
COMMENT ON COLUMN fork_rescue.rescue_rate IS 'n_rescued / n_parent_wrong (NULL: see rescue_reason).';
COMMENT ON COLUMN fork_rescue.break_rate IS 'n_broke / n_parent_right (NULL: no judged parent was right).';
COMMENT ON COLUMN fork_rescue.parent_accuracy IS 'Share of judged pairs whose parent was right.';
COMMENT ON COLUMN fork_rescue.child_accuracy IS 'Share of judged pairs whose child was right.';
COMMENT ON COLUMN fork_rescue.rescue_reason IS 'Why rescue_rate is NULL (does not apply: ...).';
