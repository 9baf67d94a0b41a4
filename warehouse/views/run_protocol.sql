-- Per run, whether its agent had a read action (run_capabilities.read_action; NULL: unknown, and discipline metrics do not apply), kept for queries written against the older name.
CREATE OR REPLACE VIEW run_protocol AS
SELECT run_id, read_action, read_action_reason FROM run_capabilities;
COMMENT ON COLUMN run_protocol.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN run_protocol.read_action IS 'The run''s agent has a read action (run_capabilities.read_action); NULL: unknown, and discipline metrics do not apply.';
COMMENT ON COLUMN run_protocol.read_action_reason IS 'Why read_action holds, is false or is unknown (run_capabilities.read_action_reason).';
