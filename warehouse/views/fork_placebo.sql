-- One row per (parent run, step rule) forked both with an intervention and with its placebo: the two rescue rates side by side and their difference, so a rescue can be told from the effect of any extra passage.
CREATE OR REPLACE VIEW fork_placebo AS
SELECT a.parent_run_id, a.rule, a.run_id AS fork_run_id, a.intervention, b.run_id AS placebo_run_id,
       a.n_parent_wrong, a.n_rescued, a.rescue_rate, b.n_parent_wrong AS placebo_n_parent_wrong,
       b.n_rescued AS placebo_n_rescued, b.rescue_rate AS placebo_rescue_rate,
       a.rescue_rate - b.rescue_rate AS rescue_over_placebo
FROM fork_rescue a
JOIN fork_rescue b ON b.parent_run_id = a.parent_run_id AND b.rule = a.rule AND b.placebo
WHERE NOT a.placebo;
COMMENT ON COLUMN fork_placebo.parent_run_id IS 'The parent run both fork runs branched off.';
COMMENT ON COLUMN fork_placebo.rule IS 'The step rule both fork runs used.';
COMMENT ON COLUMN fork_placebo.fork_run_id IS 'The fork run of the intervention.';
COMMENT ON COLUMN fork_placebo.intervention IS 'The intervention compared against the placebo.';
COMMENT ON COLUMN fork_placebo.placebo_run_id IS 'The fork run of the placebo.';
COMMENT ON COLUMN fork_placebo.n_parent_wrong IS 'Wrong judged parents the intervention was applied to.';
COMMENT ON COLUMN fork_placebo.n_rescued IS 'Of them, rescued by the intervention.';
COMMENT ON COLUMN fork_placebo.rescue_rate IS 'The intervention''s rescue rate (fork_rescue.rescue_rate).';
COMMENT ON COLUMN fork_placebo.placebo_n_parent_wrong IS 'Wrong judged parents the placebo was applied to.';
COMMENT ON COLUMN fork_placebo.placebo_n_rescued IS 'Of them, rescued by the placebo.';
COMMENT ON COLUMN fork_placebo.placebo_rescue_rate IS 'The placebo''s rescue rate.';
COMMENT ON COLUMN fork_placebo.rescue_over_placebo IS 'rescue_rate - placebo_rescue_rate: the rescue beyond the effect of any extra passage (NULL when either is NULL).';
