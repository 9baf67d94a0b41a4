-- One row per trajectory with its judgments side by side (newest verdict per judge; llm averaged over judge models).
CREATE OR REPLACE VIEW trajectory_scores AS
SELECT t.trajectory_id, s.em, s.f1, s.contain, s.llm
FROM trajectories t
LEFT JOIN judgment_scores s USING (trajectory_id);
