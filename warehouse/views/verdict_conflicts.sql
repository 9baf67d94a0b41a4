-- One row per (trajectory, source verdict, trajscope verdict) that disagree on whether the answer is right: the log's own scorer (origin record) against what trajscope judge added (origin judge), both kept (e.g. a CTF flag SQuAD-normalised EM matches but the source's scorer refused).
CREATE OR REPLACE VIEW verdict_conflicts AS
-- trajscope's em / f1 / contain normalise answers (SQuAD: case, punctuation, articles dropped); a source
-- scorer may compare exactly. Neither overrules the other here: the rows show where they part.
WITH latest AS (
    SELECT trajectory_id, judge, origin,
           arg_max(score, created_at)     AS score,
           arg_max(rationale, created_at) AS rationale
    FROM judgments
    WHERE judge IN ('em', 'contain', 'llm')
    GROUP BY trajectory_id, judge, origin
)
SELECT t.trajectory_id, t.run_id, t.question_id, t.final_answer,
       s.judge AS source_judge, s.score AS source_score, s.rationale AS source_rationale,
       j.judge AS trajscope_judge, j.score AS trajscope_score
FROM latest s
JOIN latest j ON j.trajectory_id = s.trajectory_id AND j.origin = 'judge'
JOIN trajectories t ON t.trajectory_id = s.trajectory_id
WHERE s.origin = 'record' AND says_correct(s.score) <> says_correct(j.score);
COMMENT ON COLUMN verdict_conflicts.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN verdict_conflicts.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN verdict_conflicts.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN verdict_conflicts.final_answer IS 'The answer both verdicts judged.';
COMMENT ON COLUMN verdict_conflicts.source_judge IS 'The judge name the source''s own verdict is stored under (em, contain or llm; e.g. Inspect includes -> contain).';
COMMENT ON COLUMN verdict_conflicts.source_score IS 'The source''s own verdict (origin record), newest per judge, in [0, 1].';
COMMENT ON COLUMN verdict_conflicts.source_rationale IS 'What the source said about it (its scorer name and explanation), when it did.';
COMMENT ON COLUMN verdict_conflicts.trajscope_judge IS 'The verdict trajscope judge added (origin judge) that disagrees: em, contain or llm.';
COMMENT ON COLUMN verdict_conflicts.trajscope_score IS 'trajscope''s verdict, newest per judge, in [0, 1]; says_correct differs from the source''s.';
