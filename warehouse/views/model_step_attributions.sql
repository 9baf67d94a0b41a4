-- One row per model step attribution on the current version of a trajectory (trajscope attribute), in the columns of step_attributions: method llm:<protocol>:<model>.
CREATE OR REPLACE VIEW model_step_attributions AS
SELECT 'llm:' || v.protocol || ':' || v.model AS method, v.trajectory_id, v.step_index,
       s.source_ref,
       v.agent, CAST(NULL AS VARCHAR) AS category, v.explanation AS reason
FROM scan_verdicts v
JOIN trajectories t ON t.trajectory_id = v.trajectory_id AND t.record_hash = v.record_hash
LEFT JOIN steps s ON s.trajectory_id = v.trajectory_id AND s.step_index = v.step_index
WHERE v.scanner = 'attribution' AND v.verdict = 'attributed';

COMMENT ON COLUMN model_step_attributions.method IS 'llm:<protocol>:<model>, protocol all-at-once, step-by-step, binary-search or hybrid (Who&When, Zhang et al. ICML 2025).';
COMMENT ON COLUMN model_step_attributions.trajectory_id IS 'The trajectory attributed.';
COMMENT ON COLUMN model_step_attributions.step_index IS 'The decisive error step the model named (0-based steps.step_index).';
COMMENT ON COLUMN model_step_attributions.source_ref IS 'That step''s position in the source log (steps.source_ref: history:N, message:N, span:ID; NULL: none recorded).';
COMMENT ON COLUMN model_step_attributions.agent IS 'The agent the model held responsible (NULL: the log has no agents).';
COMMENT ON COLUMN model_step_attributions.category IS 'Error category (NULL: the model protocols name a step and a reason, no category).';
COMMENT ON COLUMN model_step_attributions.reason IS 'The model''s reason for that step.';
