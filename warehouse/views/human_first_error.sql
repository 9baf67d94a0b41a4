-- One row per trajectory with a human error label: its first error (the lowest labelled step), with the agent, category and impact the annotator gave there.
CREATE OR REPLACE VIEW human_first_error AS
-- docs/definitions.md, "Agreement with people". Labels of every origin pool; at one step the first
-- label in source order gives the agent and category.
WITH errors AS (
    SELECT h.*, t.run_id, t.question_id, t.n_steps
    FROM human_step_labels h JOIN trajectories t USING (trajectory_id)
    WHERE h.label = 'error' AND h.step_index IS NOT NULL
),
-- Only the labelled trajectories' steps: a warehouse without labels reads no step here.
agents AS (
    SELECT trajectory_id, count(DISTINCT agent) AS n_agents FROM steps
    WHERE agent IS NOT NULL AND trajectory_id IN (SELECT trajectory_id FROM errors) GROUP BY trajectory_id
)
SELECT e.trajectory_id, any_value(e.run_id) AS run_id, any_value(e.question_id) AS question_id,
       min(e.step_index) AS step_index,
       first(e.source_ref ORDER BY e.step_index, e.origin, e.ordinal) AS source_ref,
       first(e.agent ORDER BY e.step_index, e.origin, e.ordinal) AS agent,
       first(e.category ORDER BY e.step_index, e.origin, e.ordinal) AS category,
       first(e.impact ORDER BY e.step_index, e.origin, e.ordinal) AS impact,
       first(e.source ORDER BY e.step_index, e.origin, e.ordinal) AS source,
       first(e.reason ORDER BY e.step_index, e.origin, e.ordinal) AS reason,
       count(*) AS n_error_labels, any_value(e.n_steps) AS n_steps, coalesce(any_value(a.n_agents), 0) AS n_agents
FROM errors e LEFT JOIN agents a USING (trajectory_id)
GROUP BY e.trajectory_id;

COMMENT ON COLUMN human_first_error.trajectory_id IS 'Trajectory with at least one human error label resolved to a step.';
COMMENT ON COLUMN human_first_error.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN human_first_error.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN human_first_error.step_index IS 'The first error: the lowest step a person labelled error (Who&When mistake_step, TRAIL''s earliest annotated span, a per-step map''s first -1).';
COMMENT ON COLUMN human_first_error.source_ref IS 'That step''s position in the source log (history:N, message:N, span:ID; NULL: not recorded).';
COMMENT ON COLUMN human_first_error.agent IS 'Agent the annotator held responsible at that step (NULL: none named).';
COMMENT ON COLUMN human_first_error.category IS 'Category of the first error, normalised (TRAIL''s 21 labels; NULL: none given).';
COMMENT ON COLUMN human_first_error.impact IS 'Impact the annotator gave the first error (NULL: none).';
COMMENT ON COLUMN human_first_error.source IS 'Annotation set of the first error label (who_and_when, trail, a label file).';
COMMENT ON COLUMN human_first_error.reason IS 'The annotator''s explanation of the first error (NULL: none).';
COMMENT ON COLUMN human_first_error.n_error_labels IS 'Error labels on the trajectory, at any step (TRAIL annotates several).';
COMMENT ON COLUMN human_first_error.n_steps IS 'Steps of the trajectory: n of the uniform random baseline''s 1/n.';
COMMENT ON COLUMN human_first_error.n_agents IS 'Distinct agents that took a step (0: a single-agent log without names).';
