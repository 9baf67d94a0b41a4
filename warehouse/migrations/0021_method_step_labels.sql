-- Step labels predicted by a named attribution method (trajscope ingest --labels FILE --method NAME): the same shape as human_step_labels, kept apart so a method's labels never count as people's.
CREATE TABLE IF NOT EXISTS method_step_labels (
    method         VARCHAR NOT NULL,
    trajectory_id  VARCHAR NOT NULL,
    ordinal        INTEGER NOT NULL,
    source_ref     VARCHAR,
    step_index     INTEGER,
    label          VARCHAR NOT NULL,
    category       VARCHAR,
    agent          VARCHAR,
    reason         VARCHAR,
    label_file     VARCHAR
);
COMMENT ON TABLE method_step_labels IS 'Step labels an attribution method predicted (a judge''s released annotations, another tool''s output): one row per (method, trajectory, labelled step); a trajectory the file names with no labels has none.';
COMMENT ON COLUMN method_step_labels.method IS 'Name given with --method (e.g. blind_gpt-5.2).';
COMMENT ON COLUMN method_step_labels.trajectory_id IS 'Trajectory the predicted label belongs to.';
COMMENT ON COLUMN method_step_labels.ordinal IS 'Position of the label among the method''s labels of the trajectory, from 0 (file order).';
COMMENT ON COLUMN method_step_labels.source_ref IS 'Where the method pointed in the source (message:N, history:N, span:ID; NULL: a step index only).';
COMMENT ON COLUMN method_step_labels.step_index IS 'Canonical step the label resolved to (steps.step_index).';
COMMENT ON COLUMN method_step_labels.label IS 'error (-1), correct (+1) or neutral (0).';
COMMENT ON COLUMN method_step_labels.category IS 'Error category the method gave (NULL: none).';
COMMENT ON COLUMN method_step_labels.agent IS 'Agent the method held responsible (NULL: none).';
COMMENT ON COLUMN method_step_labels.reason IS 'The method''s explanation of the step (NULL: none).';
COMMENT ON COLUMN method_step_labels.label_file IS 'Prediction file the row came from.';
