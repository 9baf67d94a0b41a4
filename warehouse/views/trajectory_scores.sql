-- One row per trajectory with its judgments side by side (newest verdict per judge; llm averaged over judge models).
CREATE OR REPLACE VIEW trajectory_scores AS
SELECT trajectory_id, em, f1, contain, llm
FROM trajectory_signals;
COMMENT ON COLUMN trajectory_scores.trajectory_id IS 'Trajectory id; every trajectory has a row, with NULL scores when unjudged.';
COMMENT ON COLUMN trajectory_scores.em IS 'Exact match in {0, 1}, the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_scores.f1 IS 'Token F1 in [0, 1], the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_scores.contain IS 'Contain-Acc in {0, 1}: the normalised gold (or an alias) occurs in the normalised answer (NULL: not judged).';
COMMENT ON COLUMN trajectory_scores.llm IS 'LLM-judge verdict in [0, 1], the newest per judge model averaged over models (NULL: no LLM verdict).';
