-- Per run, whether its agent had a read action (run_capabilities.read_action; NULL: unknown, and discipline metrics do not apply), kept for queries written against the older name.
CREATE OR REPLACE VIEW run_protocol AS
SELECT run_id, read_action, read_action_reason FROM run_capabilities;
