-- One row per rubric verdict on the current version of a trajectory (trajscope scan): the verdict, matches as a 0/1 outcome, the explanation, cited steps and the latest person's label.
CREATE OR REPLACE VIEW rubric_verdicts AS
WITH labels AS (
    SELECT verdict_id, arg_max(label, labelled_at) AS label, arg_max(note, labelled_at) AS label_note
    FROM verdict_labels GROUP BY verdict_id
)
SELECT v.verdict_id, t.run_id, v.trajectory_id, t.question_id, t.dataset,
       v.rubric_hash, r.rubric_text, v.model, v.prompt_version, v.verdict,
       CASE v.verdict WHEN 'match' THEN 1 WHEN 'no_match' THEN 0 END AS matches,
       v.explanation, v.cited_steps, v.rejected_citations, v.error, v.truncated, v.token_budget,
       v.tokens_in, v.tokens_out, v.cost_usd, v.cached, v.created_at,
       l.label, l.label_note
FROM scan_verdicts v
JOIN trajectories t ON t.trajectory_id = v.trajectory_id AND t.record_hash = v.record_hash
LEFT JOIN rubrics r ON r.rubric_hash = v.rubric_hash
LEFT JOIN labels l ON l.verdict_id = v.verdict_id
WHERE v.scanner = 'rubric';

COMMENT ON COLUMN rubric_verdicts.verdict_id IS 'The verdict''s id (scan_verdicts.verdict_id): what a label refers to.';
COMMENT ON COLUMN rubric_verdicts.run_id IS 'Run of the trajectory.';
COMMENT ON COLUMN rubric_verdicts.trajectory_id IS 'The trajectory the model read.';
COMMENT ON COLUMN rubric_verdicts.question_id IS 'Question id: the pairing key of compare --rubric.';
COMMENT ON COLUMN rubric_verdicts.dataset IS 'Dataset of the question.';
COMMENT ON COLUMN rubric_verdicts.rubric_hash IS 'Rubric identity (16 hex digits of the SHA-256 of its text).';
COMMENT ON COLUMN rubric_verdicts.rubric_text IS 'The rubric text.';
COMMENT ON COLUMN rubric_verdicts.model IS 'Model that gave the verdict.';
COMMENT ON COLUMN rubric_verdicts.prompt_version IS 'Version of the rubric prompt template.';
COMMENT ON COLUMN rubric_verdicts.verdict IS 'match, no_match, unsure, or error (malformed reply or failed call; see error).';
COMMENT ON COLUMN rubric_verdicts.matches IS 'The rubric as an outcome: 1 match, 0 no_match, NULL unsure or error (left out of compare --rubric).';
COMMENT ON COLUMN rubric_verdicts.explanation IS 'The model''s explanation (NULL on error).';
COMMENT ON COLUMN rubric_verdicts.cited_steps IS 'Step indices the model cited that exist in the trajectory.';
COMMENT ON COLUMN rubric_verdicts.rejected_citations IS 'Citations naming no step of the trajectory (rejected).';
COMMENT ON COLUMN rubric_verdicts.error IS 'Why there is no verdict (NULL: none).';
COMMENT ON COLUMN rubric_verdicts.truncated IS 'The rendered trajectory was cut to the token budget.';
COMMENT ON COLUMN rubric_verdicts.token_budget IS 'Token budget of the rendered trajectory.';
COMMENT ON COLUMN rubric_verdicts.tokens_in IS 'Prompt tokens of the call (NULL: not reported).';
COMMENT ON COLUMN rubric_verdicts.tokens_out IS 'Completion tokens of the call (NULL: not reported).';
COMMENT ON COLUMN rubric_verdicts.cost_usd IS 'Cost of the call in USD (NULL: unknown price).';
COMMENT ON COLUMN rubric_verdicts.cached IS 'The reply came from the response cache.';
COMMENT ON COLUMN rubric_verdicts.created_at IS 'When the verdict was stored.';
COMMENT ON COLUMN rubric_verdicts.label IS 'The latest person''s label of the verdict: agree, disagree or unsure (NULL: unlabelled).';
COMMENT ON COLUMN rubric_verdicts.label_note IS 'Note given with that label (NULL: none).';
