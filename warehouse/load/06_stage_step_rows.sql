-- The batch's steps as rows of the steps table (a view over stage): 12 inserts them, and while the batch's facts are refreshed they stand in for the stored steps (batch_shadow_views.sql).
CREATE OR REPLACE TEMP VIEW stage_step_rows AS
SELECT trajectory_id, step_index, st.kind AS kind, st.tool_name AS tool_name, st.args AS args,
       st.observation AS observation, st.raw AS raw, st.thought AS thought, st.tokens_in AS tokens_in,
       st.tokens_out AS tokens_out, st.latency_ms AS latency_ms, st.cost_usd AS cost_usd, st.query AS query,
       st.deduplicated AS deduplicated, st.chunk_ids AS chunk_ids, st.answer AS answer, st.gate AS gate,
       st.rejected_answer AS rejected_answer, st.reason AS reason, st.phase AS phase, st.message AS message,
       st.error_type AS error_type, st.cached AS cached,
       st.source_ref AS source_ref, st.agent AS agent
FROM (SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st FROM stage)
