-- Per run: how many wrong trajectories each first-decisive-error rule decides (or leaves undecided for a missing capability), overall and beside their ExecutionRAG label, with the share of the run's wrong trajectories.
CREATE OR REPLACE VIEW first_decisive_error_summary AS
-- n_wrong is summed over the few grouped rows (each wrong trajectory has one rule), not counted by a window
-- over every wrong trajectory (70 ms of a two-run page at 1M).
WITH grouped AS (
    SELECT run_id, CASE WHEN grouping(erag_label) = 0 THEN 'rule_and_label' ELSE 'rule' END AS grouped_by,
           rule, erag_label, count(*) AS n
    FROM (SELECT run_id, coalesce(rule, 'does not apply: no ' || missing_capability) AS rule, erag_label
          FROM first_decisive_error)
    GROUP BY GROUPING SETS ((run_id, rule), (run_id, rule, erag_label))
), totals AS (
    SELECT *, CAST(sum(n) FILTER (grouped_by = 'rule') OVER (PARTITION BY run_id) AS BIGINT) AS n_wrong FROM grouped
)
SELECT run_id, grouped_by, rule, erag_label, n, n / n_wrong AS share, n_wrong
FROM totals;
COMMENT ON COLUMN first_decisive_error_summary.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN first_decisive_error_summary.grouped_by IS 'rule: one row per rule; rule_and_label: one row per rule and ExecutionRAG label.';
COMMENT ON COLUMN first_decisive_error_summary.rule IS 'The first-decisive-error rule (first_decisive_error.rule), or does not apply: no CAPABILITY where the log lacks one.';
COMMENT ON COLUMN first_decisive_error_summary.erag_label IS 'The ExecutionRAG label of the same trajectories (trajectory_erag_label.label); NULL for grouped_by rule.';
COMMENT ON COLUMN first_decisive_error_summary.n IS 'Wrong trajectories in the row.';
COMMENT ON COLUMN first_decisive_error_summary.share IS 'n over the run''s wrong trajectories (n_wrong).';
COMMENT ON COLUMN first_decisive_error_summary.n_wrong IS 'Wrong trajectories of the run (correct = false): the denominator of share.';
