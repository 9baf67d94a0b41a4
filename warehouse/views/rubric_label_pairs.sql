-- One row per rubric verdict a person labelled agree or disagree (Search page): the model's match or no_match beside the truth the label implies; unsure labels and unsure or error verdicts are left out.
CREATE OR REPLACE VIEW rubric_label_pairs AS
-- docs/scanners.md, "Validation against people": agree keeps the model's verdict as the truth, disagree
-- flips it; a label says nothing about an unsure verdict, and an unsure label says nothing at all.
SELECT verdict_id, run_id, trajectory_id, question_id, rubric_hash, model, verdict, label,
       verdict = 'match' AS model_match,
       CASE label WHEN 'agree' THEN verdict = 'match' ELSE verdict = 'no_match' END AS human_match
FROM rubric_verdicts
WHERE label IN ('agree', 'disagree') AND verdict IN ('match', 'no_match');

COMMENT ON COLUMN rubric_label_pairs.verdict_id IS 'The verdict labelled (scan_verdicts.verdict_id).';
COMMENT ON COLUMN rubric_label_pairs.run_id IS 'Run of the trajectory.';
COMMENT ON COLUMN rubric_label_pairs.trajectory_id IS 'The trajectory the model read.';
COMMENT ON COLUMN rubric_label_pairs.question_id IS 'Question id of the trajectory.';
COMMENT ON COLUMN rubric_label_pairs.rubric_hash IS 'Rubric identity (rubrics.rubric_hash).';
COMMENT ON COLUMN rubric_label_pairs.model IS 'Model that gave the verdict.';
COMMENT ON COLUMN rubric_label_pairs.verdict IS 'The model''s verdict: match or no_match.';
COMMENT ON COLUMN rubric_label_pairs.label IS 'The latest person''s label: agree or disagree.';
COMMENT ON COLUMN rubric_label_pairs.model_match IS 'The model says the trajectory matches the rubric.';
COMMENT ON COLUMN rubric_label_pairs.human_match IS 'The person''s truth: the model''s verdict if they agreed, its opposite if they disagreed.';
