-- Steps keep their position in the source (source_ref) and speaker (agent); human step labels (human_step_labels) and the step attributions other methods store (step_attribution_rows) get their tables.
ALTER TABLE steps ADD COLUMN IF NOT EXISTS source_ref VARCHAR;
ALTER TABLE steps ADD COLUMN IF NOT EXISTS agent VARCHAR;
COMMENT ON COLUMN steps.source_ref IS 'Where the step sits in the source log: history:N (a history entry), message:N (a chat message), span:ID (a trace span); NULL: the importer had no position, or loaded before migration 0013.';
COMMENT ON COLUMN steps.agent IS 'Agent that took the step in a multi-agent log (the speaker''s name); NULL: a single agent, or not recorded.';

CREATE TABLE IF NOT EXISTS human_step_labels (
    trajectory_id  VARCHAR NOT NULL,
    ordinal        INTEGER NOT NULL,
    source_ref     VARCHAR,
    step_index     INTEGER,
    label          VARCHAR NOT NULL,
    category       VARCHAR,
    category_raw   VARCHAR,
    impact         VARCHAR,
    agent          VARCHAR,
    annotator      VARCHAR,
    source         VARCHAR,
    reason         VARCHAR,
    evidence       VARCHAR,
    origin         VARCHAR NOT NULL,
    label_file     VARCHAR
);
COMMENT ON TABLE human_step_labels IS 'Human annotations of steps: one row per labelled step, from the log itself (origin log) or a --labels file (origin file).';
COMMENT ON COLUMN human_step_labels.trajectory_id IS 'Trajectory the labelled step belongs to.';
COMMENT ON COLUMN human_step_labels.ordinal IS 'Position of the label among the trajectory''s labels, from 0 (source order).';
COMMENT ON COLUMN human_step_labels.source_ref IS 'Where the annotator pointed in the source (history:N, message:N, span:ID); NULL when the label names a step index only.';
COMMENT ON COLUMN human_step_labels.step_index IS 'Canonical step the label resolved to (steps.step_index); NULL: the reference names no step of the trajectory.';
COMMENT ON COLUMN human_step_labels.label IS 'error (a mistake at this step), correct (+1) or neutral (0) of a per-step map; a trajectory''s first error is its lowest-step error.';
COMMENT ON COLUMN human_step_labels.category IS 'Error category normalised to the source''s taxonomy (TRAIL''s 21 labels); NULL: the source gives none.';
COMMENT ON COLUMN human_step_labels.category_raw IS 'The category as the source spelt it (NULL: none).';
COMMENT ON COLUMN human_step_labels.impact IS 'Severity the annotator gave (TRAIL LOW / MEDIUM / HIGH; NULL: none).';
COMMENT ON COLUMN human_step_labels.agent IS 'Agent the annotator held responsible (Who&When mistake_agent; NULL: none named).';
COMMENT ON COLUMN human_step_labels.annotator IS 'Who annotated (NULL: not recorded).';
COMMENT ON COLUMN human_step_labels.source IS 'Annotation set the label comes from (who_and_when, trail, a label file family).';
COMMENT ON COLUMN human_step_labels.reason IS 'The annotator''s explanation (Who&When mistake_reason, TRAIL description; NULL: none).';
COMMENT ON COLUMN human_step_labels.evidence IS 'Excerpt of the step the annotator quoted (TRAIL evidence; NULL: none).';
COMMENT ON COLUMN human_step_labels.origin IS 'log: carried by the trajectory record; file: loaded with trajscope ingest --labels.';
COMMENT ON COLUMN human_step_labels.label_file IS 'Label file the row came from (origin file; NULL for origin log).';

CREATE TABLE IF NOT EXISTS step_attribution_rows (
    method         VARCHAR NOT NULL,
    trajectory_id  VARCHAR NOT NULL,
    step_index     INTEGER,
    source_ref     VARCHAR,
    agent          VARCHAR,
    category       VARCHAR,
    reason         VARCHAR
);
COMMENT ON TABLE step_attribution_rows IS 'Stored step attributions of methods that run outside SQL (a language-model scanner, imported predictions): one row per (method, trajectory); the step_attributions view adds them to the SQL methods.';
COMMENT ON COLUMN step_attribution_rows.method IS 'Name of the method that made the attribution (e.g. llm:<model>).';
COMMENT ON COLUMN step_attribution_rows.trajectory_id IS 'Trajectory attributed.';
COMMENT ON COLUMN step_attribution_rows.step_index IS 'Step the method names as the first decisive error (NULL: it names no step, e.g. an agent-only method).';
COMMENT ON COLUMN step_attribution_rows.source_ref IS 'Source position of that step (NULL: not known).';
COMMENT ON COLUMN step_attribution_rows.agent IS 'Agent the method holds responsible (NULL: none named).';
COMMENT ON COLUMN step_attribution_rows.category IS 'Error category the method names (NULL: none).';
COMMENT ON COLUMN step_attribution_rows.reason IS 'The method''s explanation (NULL: none).';
