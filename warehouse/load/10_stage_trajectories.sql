-- One row per trajectory of the batch with its step aggregates, gold reach and register resolution (11 inserts them; they stand in for the stored rows while the batch's facts are refreshed); read_count counts the reads is_counted_read counts, failed_read_count the other read steps.
CREATE OR REPLACE TEMP TABLE stage_trajectories AS
WITH agg AS (
    SELECT trajectory_id,
           count(*) FILTER (list_contains(search_kinds(), st.kind)) AS search_count,
           count(*) FILTER (is_counted_read(st.kind, st.passages))  AS read_count,
           count(*) FILTER (st.kind = 'read' AND NOT is_counted_read(st.kind, st.passages)) AS failed_read_count,
           count(*) FILTER (list_contains(agent_action_kinds(), st.kind)) AS agent_actions,
           count(*) FILTER (st.kind = 'gate_rejection') AS gate_rejections,
           count(*) FILTER (st.kind = 'context_injection') AS injections,
           count(*) FILTER (st.kind = 'error') AS error_steps,
           count(*) FILTER (list_contains(search_kinds(), st.kind) AND st.has_observation) AS n_search_observations,
           sum(st.tokens_in) AS step_tokens_in, sum(st.tokens_out) AS step_tokens_out,
           sum(st.cost_usd) AS step_cost_usd, sum(st.latency_ms) AS step_latency_ms,
           count(*) FILTER (st.cached) AS cached_calls,
           sum(st.cost_usd) FILTER (st.cached) AS cached_cost_usd
    FROM stage_steps GROUP BY trajectory_id
),
cands AS (
    SELECT trajectory_id, count(*) AS n_candidates,
           count(*) FILTER (has_snippet) AS n_snippets
    FROM stage_candidates GROUP BY trajectory_id
),
gold AS (
    SELECT trajectory_id,
           count(*)                                                 AS n_gold,
           count(*) FILTER (first_retrieved_step IS NOT NULL)       AS n_gold_retrieved,
           count(*) FILTER (first_read_step IS NOT NULL)            AS n_gold_read,
           count(*) FILTER (first_retrieved_step IS NOT NULL AND first_read_step IS NULL
                            AND first_injected_step IS NULL)        AS n_gold_snippet_only,
           count(*) FILTER (first_retrieved_step IS NOT NULL OR first_read_step IS NOT NULL
                            OR first_injected_step IS NOT NULL)     AS n_gold_reached
    FROM stage_gold GROUP BY trajectory_id
),
passages AS (
    SELECT trajectory_id, count(DISTINCT chunk_id) AS passages_read
    FROM (SELECT trajectory_id, unnest(st.passages) AS chunk_id FROM stage_steps
          WHERE is_counted_read(st.kind, st.passages))
    GROUP BY trajectory_id
)
SELECT s.trajectory_id, s.run.run_id AS run_id, s.question.question_id AS question_id,
       s.key_dataset AS dataset, s.question.dataset AS question_dataset, s.schema_version,
       s.final_answer, s.end_reason, s.error, s.started_at, s.finished_at, s.total_tokens_in,
       s.total_tokens_out, s.total_cost_usd, s.total_latency_ms, s.metadata, len(s.steps) AS n_steps,
       coalesce(a.search_count, 0) AS search_count, coalesce(a.read_count, 0) AS read_count,
       coalesce(a.failed_read_count, 0) AS failed_read_count, coalesce(a.agent_actions, 0) AS agent_actions,
       coalesce(a.gate_rejections, 0) AS gate_rejections, coalesce(a.injections, 0) AS injections,
       coalesce(a.error_steps, 0) AS error_steps, coalesce(p.passages_read, 0) AS passages_read,
       a.step_tokens_in, a.step_tokens_out, a.step_cost_usd, a.step_latency_ms,
       coalesce(g.n_gold, 0) AS n_gold, coalesce(g.n_gold_retrieved, 0) AS n_gold_retrieved,
       coalesce(g.n_gold_read, 0) AS n_gold_read, coalesce(g.n_gold_snippet_only, 0) AS n_gold_snippet_only,
       coalesce(g.n_gold_reached, 0) AS n_gold_reached,
       coalesce(r.n_register_items, 0) AS n_register_items,
       coalesce(r.n_register_resolved, 0) AS n_register_resolved,
       coalesce(r.register_complete, false) AS register_complete,
       i.record_hash, $source_file AS source_file, current_timestamp AS ingested_at,
       coalesce(a.cached_calls, 0) AS cached_calls, a.cached_cost_usd,
       coalesce(c.n_candidates, 0) AS n_candidates, coalesce(c.n_snippets, 0) AS n_snippets,
       coalesce(a.n_search_observations, 0) AS n_search_observations,
       len(list_filter(s.judgments, lambda j: NOT scored_at_import(j.rationale))) AS n_record_judgments
FROM stage s
JOIN incoming_changed i USING (trajectory_id)
LEFT JOIN agg a USING (trajectory_id)
LEFT JOIN cands c USING (trajectory_id)
LEFT JOIN passages p USING (trajectory_id)
LEFT JOIN gold g USING (trajectory_id)
LEFT JOIN stage_register r USING (trajectory_id)
