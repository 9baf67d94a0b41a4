-- One row per run: settings, size, accuracy (EM, F1, Contain-Acc, LLM-Acc; NULL with scores_reason without gold answers), search/read counts, zero-read rate (NULL without a read action), turns, tokens, cost (and the part a re-run served from the response cache), latency, errors.
CREATE OR REPLACE VIEW run_summary AS
SELECT r.run_id, r.source, r.dataset, r.controller, r.condition, r.intervention, r.model,
       r.temperature, r.retriever_kind, r.top_k, r.seed, r.started_at,
       count(f.trajectory_id)                         AS n_trajectories,
       avg(f.em)                                      AS em,
       avg(f.f1)                                      AS f1,
       avg(f.contain)                                 AS contain_acc,
       avg(f.llm)                                     AS llm_acc,
       count(f.llm)                                   AS n_llm_judged,
       avg(f.search_count)                            AS mean_searches,
       avg(f.read_count)                              AS mean_reads,
       avg(f.failed_read_count)                       AS mean_failed_reads,
       CASE WHEN any_value(c.read_action) THEN avg(CASE WHEN f.zero_read_final THEN 1.0 ELSE 0.0 END) END
                                                      AS zero_read_final_rate,
       avg(f.turns)                                   AS mean_turns,
       sum(f.tokens_in)                               AS tokens_in,
       sum(f.tokens_out)                              AS tokens_out,
       avg(coalesce(f.tokens_in, 0) + coalesce(f.tokens_out, 0)) AS mean_tokens,
       sum(f.cost_usd)                                AS cost_usd,
       avg(f.cost_usd)                                AS cost_per_question,
       CAST(sum(f.cached_calls) AS BIGINT)            AS cached_calls,
       sum(f.cost_usd) - coalesce(sum(f.cached_cost_usd), 0) AS incurred_cost_usd,
       avg(f.latency_ms)                              AS mean_latency_ms,
       -- error steps, plus one for each error trajectory that carries no error step
       CAST(sum(CASE WHEN f.end_reason = 'error' AND f.errors = 0 THEN 1 ELSE f.errors END) AS BIGINT) AS errors,
       count(*) FILTER (f.end_reason = 'error')       AS error_trajectories,
       CASE WHEN count(f.em) + count(f.contain) + count(f.llm) = 0 AND count(f.trajectory_id) > 0 THEN
            CASE WHEN NOT any_value(c.gold_answers) THEN any_value(c.gold_answers_reason)
                 ELSE 'not judged yet: run trajscope judge' END END AS scores_reason,
       CASE WHEN NOT any_value(c.read_action) OR any_value(c.read_action) IS NULL THEN any_value(c.read_action_reason) END
                                                      AS zero_read_reason
FROM runs r
LEFT JOIN trajectory_facts f USING (run_id)
LEFT JOIN run_capabilities c USING (run_id)
GROUP BY ALL;
COMMENT ON COLUMN run_summary.em IS 'Mean exact match over judged trajectories; NULL without gold answers (see scores_reason).';
COMMENT ON COLUMN run_summary.mean_reads IS 'Mean read steps that returned a passage (the engine''s rule).';
COMMENT ON COLUMN run_summary.mean_failed_reads IS 'Mean read steps that returned no passage.';
COMMENT ON COLUMN run_summary.zero_read_final_rate IS 'Share of trajectories that ended on a final without a read; NULL without a read action (see zero_read_reason).';
COMMENT ON COLUMN run_summary.errors IS 'Error steps, plus one for each error trajectory that carries no error step.';
COMMENT ON COLUMN run_summary.error_trajectories IS 'Trajectories that ended in an error.';
COMMENT ON COLUMN run_summary.incurred_cost_usd IS 'Cost the run actually incurred: responses served from the cache are left out.';
COMMENT ON COLUMN run_summary.scores_reason IS 'Why the scores are NULL: no gold answers, or not judged yet.';
COMMENT ON COLUMN run_summary.zero_read_reason IS 'Why zero_read_final_rate is NULL: the run has no known read action.';
