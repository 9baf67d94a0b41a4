-- Per run, whether its agent had a read action (Run.config.read_action; absent, as in imported logs, means it had).
CREATE OR REPLACE VIEW run_protocol AS
SELECT run_id,
       coalesce(TRY_CAST(json_extract_string(config, '$.read_action') AS BOOLEAN), true) AS read_action
FROM runs;
