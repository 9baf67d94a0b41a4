-- One row per trajectory: action counts (read_count: read steps that returned a passage; failed_read_count: read steps that returned none), zero-read finalisation, turns, tokens, cost, latency, cached model calls, end reason and scores.
CREATE OR REPLACE VIEW trajectory_facts AS
-- Stored per trajectory (trajectory_signals, warehouse/facts/trajectory_signals/fill.sql): the question's type
-- and hops and the newest verdicts are joined there once, not per query.
SELECT trajectory_id, run_id, question_id, dataset,
       question_type, hop_count,
       final_answer, end_reason,
       search_count, read_count, failed_read_count, passages_read,
       turns, gate_rejections, injections, errors, zero_read_final,
       tokens_in, tokens_out, cost_usd, latency_ms, cached_calls, cached_cost_usd,
       em, f1, contain, llm
FROM trajectory_signals;
COMMENT ON COLUMN trajectory_facts.read_count IS 'Read steps that returned a passage (the engine''s rule; a re-read counts).';
COMMENT ON COLUMN trajectory_facts.failed_read_count IS 'Read steps that returned no passage (an unknown chunk id).';
COMMENT ON COLUMN trajectory_facts.zero_read_final IS 'Ended on a final with no read step that returned a passage.';
COMMENT ON COLUMN trajectory_facts.errors IS 'Error steps.';
COMMENT ON COLUMN trajectory_facts.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_facts.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_facts.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_facts.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_facts.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_facts.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_facts.final_answer IS 'The answer the trajectory ended with (NULL: none).';
COMMENT ON COLUMN trajectory_facts.search_count IS 'Search steps (search, keyword_search, semantic_search).';
COMMENT ON COLUMN trajectory_facts.passages_read IS 'Distinct chunks opened by read steps.';
COMMENT ON COLUMN trajectory_facts.turns IS 'Turns: the agent''s own actions (searches, read, final, other tools) plus finals a gate refused.';
COMMENT ON COLUMN trajectory_facts.gate_rejections IS 'Finals the environment refused (gate_rejection steps).';
COMMENT ON COLUMN trajectory_facts.injections IS 'context_injection steps: passages the environment placed in the prompt.';
COMMENT ON COLUMN trajectory_facts.tokens_in IS 'Prompt tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_facts.tokens_out IS 'Completion tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_facts.cost_usd IS 'Cost in USD: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_facts.latency_ms IS 'Latency in ms: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_facts.cached_calls IS 'Steps whose model response came from the response cache (NULL: loaded before migration 0004).';
COMMENT ON COLUMN trajectory_facts.cached_cost_usd IS 'Cost in USD of the cached steps when first made (NULL: no cached step with a cost).';
COMMENT ON COLUMN trajectory_facts.em IS 'Exact match in {0, 1}, the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_facts.f1 IS 'Token F1 in [0, 1], the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_facts.contain IS 'Contain-Acc in {0, 1}: the normalised gold (or an alias) occurs in the normalised answer (NULL: not judged).';
COMMENT ON COLUMN trajectory_facts.llm IS 'LLM-judge verdict in [0, 1], the newest per judge model averaged over models (NULL: no LLM verdict).';
