-- One row per trajectory: action counts, zero-read finalisation, turns, tokens, cost, latency, end reason and scores.
CREATE OR REPLACE VIEW trajectory_facts AS
WITH step_counts AS (
    SELECT trajectory_id,
           count(*) FILTER (kind IN ('search', 'keyword_search', 'semantic_search')) AS search_count,
           count(*) FILTER (kind = 'read')                                            AS read_count,
           count(*) FILTER (kind IN ('search', 'keyword_search', 'semantic_search', 'read', 'final', 'tool')) AS agent_actions,
           count(*) FILTER (kind = 'gate_rejection')                                  AS gate_rejections,
           count(*) FILTER (kind = 'context_injection')                               AS injections,
           count(*) FILTER (kind = 'error')                                           AS errors,
           sum(tokens_in)  AS step_tokens_in,
           sum(tokens_out) AS step_tokens_out,
           sum(cost_usd)   AS step_cost_usd,
           sum(latency_ms) AS step_latency_ms
    FROM steps
    GROUP BY trajectory_id
),
read_passages AS (
    SELECT trajectory_id, count(DISTINCT chunk_id) FILTER (via = 'read') AS passages_read
    FROM reads
    GROUP BY trajectory_id
)
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       q.question_type, q.hop_count,
       t.final_answer, t.end_reason,
       coalesce(c.search_count, 0)     AS search_count,
       coalesce(c.read_count, 0)       AS read_count,
       coalesce(p.passages_read, 0)    AS passages_read,
       coalesce(c.agent_actions, 0) + coalesce(c.gate_rejections, 0) AS turns,
       coalesce(c.gate_rejections, 0)  AS gate_rejections,
       coalesce(c.injections, 0)       AS injections,
       coalesce(c.errors, 0)           AS errors,
       t.end_reason = 'final' AND coalesce(c.read_count, 0) = 0 AS zero_read_final,
       coalesce(t.total_tokens_in, c.step_tokens_in)   AS tokens_in,
       coalesce(t.total_tokens_out, c.step_tokens_out) AS tokens_out,
       coalesce(t.total_cost_usd, c.step_cost_usd)     AS cost_usd,
       coalesce(t.total_latency_ms, c.step_latency_ms) AS latency_ms,
       s.em, s.f1, s.contain, s.llm
FROM trajectories t
LEFT JOIN step_counts c USING (trajectory_id)
LEFT JOIN read_passages p USING (trajectory_id)
LEFT JOIN trajectory_scores s USING (trajectory_id)
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id;
