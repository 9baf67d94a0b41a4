-- One row per trajectory: action counts (read_count: read steps that returned a passage; failed_read_count: read steps that returned none), zero-read finalisation, turns, tokens, cost, latency, cached model calls, end reason and scores.
CREATE OR REPLACE VIEW trajectory_facts AS
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset,
       q.question_type, q.hop_count,
       t.final_answer, t.end_reason,
       t.search_count,
       t.read_count,
       t.failed_read_count,
       t.passages_read,
       t.agent_actions + t.gate_rejections              AS turns,
       t.gate_rejections,
       t.injections,
       t.error_steps                                    AS errors,
       t.end_reason = 'final' AND t.read_count = 0      AS zero_read_final,
       coalesce(t.total_tokens_in, t.step_tokens_in)    AS tokens_in,
       coalesce(t.total_tokens_out, t.step_tokens_out)  AS tokens_out,
       coalesce(t.total_cost_usd, t.step_cost_usd)      AS cost_usd,
       coalesce(t.total_latency_ms, t.step_latency_ms)  AS latency_ms,
       t.cached_calls,
       t.cached_cost_usd,
       s.em, s.f1, s.contain, s.llm
FROM trajectories t
LEFT JOIN trajectory_scores s USING (trajectory_id)
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id;
COMMENT ON COLUMN trajectory_facts.read_count IS 'Read steps that returned a passage (the engine''s rule; a re-read counts).';
COMMENT ON COLUMN trajectory_facts.failed_read_count IS 'Read steps that returned no passage (an unknown chunk id).';
COMMENT ON COLUMN trajectory_facts.zero_read_final IS 'Ended on a final with no read step that returned a passage.';
COMMENT ON COLUMN trajectory_facts.errors IS 'Error steps.';
