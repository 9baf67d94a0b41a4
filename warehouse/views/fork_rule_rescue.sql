-- One row per (parent run, first decisive error rule) forked with --intervention auto and/or auto_placebo: the rescue rate of the intervention the rule implies beside its placebo's (a non-gold passage of the gold one's length), so a rescue can be told from the effect of any extra text: the causal check of the failure taxonomy.
CREATE OR REPLACE VIEW fork_rule_rescue AS
SELECT parent_run_id,
       split_part(rule, ':', 2) AS decisive_rule,
       any_value(intervention) FILTER (NOT placebo) AS intervention,
       count(*) FILTER (NOT placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL)
                                                                   AS n_parent_wrong,
       count(*) FILTER (NOT placebo AND rescued)                   AS n_rescued,
       count(*) FILTER (NOT placebo AND rescued) / nullif(count(*) FILTER (
           NOT placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL), 0)
                                                                   AS rescue_rate,
       count(*) FILTER (placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL)
                                                                   AS placebo_n_parent_wrong,
       count(*) FILTER (placebo AND rescued)                       AS placebo_n_rescued,
       count(*) FILTER (placebo AND rescued) / nullif(count(*) FILTER (
           placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL), 0)
                                                                   AS placebo_rescue_rate,
       count(*) FILTER (NOT placebo AND rescued) / nullif(count(*) FILTER (
           NOT placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL), 0)
       - count(*) FILTER (placebo AND rescued) / nullif(count(*) FILTER (
           placebo AND NOT fork_failed AND parent_correct = false AND child_correct IS NOT NULL), 0)
                                                                   AS rescue_over_placebo,
       count(*) FILTER (fork_failed)                               AS n_failed
FROM fork_pairs
WHERE starts_with(rule, 'first_decisive_error:')
GROUP BY parent_run_id, split_part(rule, ':', 2);
COMMENT ON COLUMN fork_rule_rescue.parent_run_id IS 'The run whose wrong trajectories were forked.';
COMMENT ON COLUMN fork_rule_rescue.decisive_rule IS 'The first decisive error rule of the parents (first_decisive_error.rule): never_queried, never_retrieved, ranked_out or not_read.';
COMMENT ON COLUMN fork_rule_rescue.intervention IS 'The intervention the rule implies: replace_query, inject_candidate or force_read.';
COMMENT ON COLUMN fork_rule_rescue.n_parent_wrong IS 'Wrong judged parents the intervention was applied to (failed forks excluded).';
COMMENT ON COLUMN fork_rule_rescue.n_rescued IS 'Of them, right after the intervention.';
COMMENT ON COLUMN fork_rule_rescue.rescue_rate IS 'n_rescued / n_parent_wrong (NULL: no such parent).';
COMMENT ON COLUMN fork_rule_rescue.placebo_n_parent_wrong IS 'Wrong judged parents the placebo was applied to.';
COMMENT ON COLUMN fork_rule_rescue.placebo_n_rescued IS 'Of them, right after the placebo.';
COMMENT ON COLUMN fork_rule_rescue.placebo_rescue_rate IS 'placebo_n_rescued / placebo_n_parent_wrong (NULL: no placebo forks).';
COMMENT ON COLUMN fork_rule_rescue.rescue_over_placebo IS 'rescue_rate - placebo_rescue_rate: the rescue the rule''s intervention adds beyond any extra text (NULL when either is NULL).';
COMMENT ON COLUMN fork_rule_rescue.n_failed IS 'Forks of this rule that could not be made (see fork_pairs.fork_failed).';
