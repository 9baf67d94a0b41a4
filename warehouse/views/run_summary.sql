-- One row per run: settings, size, accuracy (EM, F1, Contain-Acc, LLM-Acc; NULL with scores_reason without gold answers), search/read counts, zero-read rate (NULL without a read action), turns, tokens, cost (and the part a re-run served from the response cache), latency, errors.
CREATE OR REPLACE VIEW run_summary AS
SELECT r.run_id, r.source, r.dataset, r.controller, r.condition, r.intervention, r.model,
       r.temperature, r.retriever_kind, r.top_k, r.seed, r.started_at,
       count(f.trajectory_id)                         AS n_trajectories,
       -- A trajectory that gave no answer (failed, or forced with no text) is wrong under every judge: 0
       -- before trajscope judge too, so em is the same number before and after judging; a
       -- score stays NULL while no trajectory of the run has that verdict at all.
       CASE WHEN count(f.em) > 0 THEN avg(CASE WHEN f.em IS NULL AND f.no_answer_wrong THEN 0.0 ELSE f.em END) END
                                                      AS em,
       CASE WHEN count(f.f1) > 0 THEN avg(CASE WHEN f.f1 IS NULL AND f.no_answer_wrong THEN 0.0 ELSE f.f1 END) END
                                                      AS f1,
       CASE WHEN count(f.contain) > 0
            THEN avg(CASE WHEN f.contain IS NULL AND f.no_answer_wrong THEN 0.0 ELSE f.contain END) END
                                                      AS contain_acc,
       llm_acc(f.llm)                                 AS llm_acc,
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
LEFT JOIN (
    -- trajectory_facts' columns, stored per trajectory with whether the question has a gold answer.
    SELECT tf.*, gave_no_answer(tf.final_answer, tf.end_reason) AND tf.has_gold_answer AS no_answer_wrong
    FROM trajectory_signals tf
) f USING (run_id)
LEFT JOIN run_capabilities c USING (run_id)
GROUP BY ALL;
COMMENT ON COLUMN run_summary.em IS 'Mean exact match over judged trajectories, a trajectory that gave no answer (failed or forced, no text) counting 0 whether judged yet or not; NULL without gold answers (see scores_reason).';
COMMENT ON COLUMN run_summary.mean_reads IS 'Mean read steps that returned a passage (the engine''s rule).';
COMMENT ON COLUMN run_summary.mean_failed_reads IS 'Mean read steps that returned no passage.';
COMMENT ON COLUMN run_summary.zero_read_final_rate IS 'Share of trajectories that ended on a final without a read; NULL without a read action (see zero_read_reason).';
COMMENT ON COLUMN run_summary.errors IS 'Error steps, plus one for each error trajectory that carries no error step.';
COMMENT ON COLUMN run_summary.error_trajectories IS 'Trajectories that ended in an error.';
COMMENT ON COLUMN run_summary.incurred_cost_usd IS 'Cost the run actually incurred: responses served from the cache are left out.';
COMMENT ON COLUMN run_summary.scores_reason IS 'Why the scores are NULL: no gold answers, or not judged yet.';
COMMENT ON COLUMN run_summary.zero_read_reason IS 'Why zero_read_final_rate is NULL: the run has no known read action.';
COMMENT ON COLUMN run_summary.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN run_summary.source IS 'Who wrote the log: engine, or the importer that converted it.';
COMMENT ON COLUMN run_summary.dataset IS 'Dataset the run answered (NULL: the log does not say).';
COMMENT ON COLUMN run_summary.controller IS 'Agent controller (read_gate, execution_rag, arag, vanilla_rag, direct, or the source system).';
COMMENT ON COLUMN run_summary.condition IS 'Condition / intervention name the run was started with.';
COMMENT ON COLUMN run_summary.intervention IS 'Intervention the run applied (NULL: none recorded).';
COMMENT ON COLUMN run_summary.model IS 'Agent model name as the log gives it (NULL: not recorded).';
COMMENT ON COLUMN run_summary.temperature IS 'Agent decoding temperature (NULL: not recorded).';
COMMENT ON COLUMN run_summary.retriever_kind IS 'Retriever used by search (NULL: not recorded).';
COMMENT ON COLUMN run_summary.top_k IS 'Candidates returned per search (NULL: not recorded).';
COMMENT ON COLUMN run_summary.seed IS 'Random seed of the run (NULL: not recorded).';
COMMENT ON COLUMN run_summary.started_at IS 'When the run started, as the log writes it (NULL: not recorded).';
COMMENT ON COLUMN run_summary.n_trajectories IS 'Trajectories of the run (0 for a run loaded without any).';
COMMENT ON COLUMN run_summary.f1 IS 'Mean token F1 over trajectories with an f1 verdict, in [0, 1], one that gave no answer counting 0 (as em); NULL without gold answers or verdicts (see scores_reason).';
COMMENT ON COLUMN run_summary.contain_acc IS 'Contain-Acc: mean contain verdict over trajectories with one, in [0, 1], one that gave no answer counting 0 (as em); NULL without gold answers or verdicts (see scores_reason).';
COMMENT ON COLUMN run_summary.llm_acc IS 'LLM-Acc (macro llm_acc): share of LLM-judged trajectories whose verdict, averaged over judge models, says correct (says_correct); NULL: none judged (see scores_reason when no score at all).';
COMMENT ON COLUMN run_summary.n_llm_judged IS 'Trajectories with an LLM verdict: the denominator of llm_acc.';
COMMENT ON COLUMN run_summary.mean_searches IS 'Mean search steps per trajectory.';
COMMENT ON COLUMN run_summary.mean_turns IS 'Mean turns per trajectory: the agent''s own actions plus the finals a gate refused.';
COMMENT ON COLUMN run_summary.tokens_in IS 'Prompt tokens summed over trajectories (source totals, else step sums; NULL: none reported).';
COMMENT ON COLUMN run_summary.tokens_out IS 'Completion tokens summed over trajectories (source totals, else step sums; NULL: none reported).';
COMMENT ON COLUMN run_summary.mean_tokens IS 'Mean prompt + completion tokens per trajectory (an unreported count counts 0).';
COMMENT ON COLUMN run_summary.cost_usd IS 'Cost in USD summed over trajectories, including responses served from the cache at their original cost (NULL: none reported).';
COMMENT ON COLUMN run_summary.cost_per_question IS 'Mean cost in USD over trajectories that report a cost (NULL: none does).';
COMMENT ON COLUMN run_summary.cached_calls IS 'Steps whose model response came from the response cache (NULL: trajectories loaded before migration 0004).';
COMMENT ON COLUMN run_summary.mean_latency_ms IS 'Mean latency per trajectory in ms over trajectories that report one (NULL: none does).';
