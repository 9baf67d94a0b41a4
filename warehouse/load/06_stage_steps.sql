-- Per step of the batch the few fields the trajectory aggregates read (the steps table is filled from stage itself, so the batch's step texts are not copied into a second temp table).
CREATE OR REPLACE TEMP TABLE stage_steps AS
SELECT trajectory_id, unnest(range(len(steps))) AS step_index,
       unnest(list_transform(steps, lambda st: {
           'kind': st.kind, 'passages': list_transform(st.passages, lambda p: p.chunk_id),
           'has_observation': coalesce(st.observation, '') <> '', 'tokens_in': st.tokens_in,
           'tokens_out': st.tokens_out, 'cost_usd': st.cost_usd, 'latency_ms': st.latency_ms,
           'cached': st.cached})) AS st
FROM stage
