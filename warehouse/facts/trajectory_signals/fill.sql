-- Every per-trajectory signal the taxonomies, pages and commands read (trajectory_forensics, trajectory_facts, trajectory_correctness, run_summary, run_capabilities), recomputed for the trajectories listed in the temp table signals_refresh (a loaded batch, a question upsert's, those a judge pass wrote, or all).
DELETE FROM trajectory_signals WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh);
INSERT INTO trajectory_signals BY NAME
-- Stored so that a page reads one table instead of joining trajectories, questions, verdicts, answer
-- checks and register items for every trajectory of the runs it shows (at a million trajectories those
-- joins took 1.6-3.6 s per page). Gold reach and register resolution are the load-time columns of
-- trajectories (summed there from gold_evidence_facts and register_events, as trajectory_evidence
-- reads them); a false resolution is per register item (register_item_resolution_rows), NULL for runs
-- without a register. Each scan below is restricted to signals_refresh, so a batch reads its own rows.
WITH scope AS (
    SELECT * FROM trajectories WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh)
),
base AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.record_hash,
           q.question_type, q.hop_count, q.gold_paragraphs, t.final_answer, t.end_reason,
           t.search_count, t.read_count, t.failed_read_count, t.passages_read,
           t.agent_actions + t.gate_rejections              AS turns,
           t.gate_rejections, t.injections, t.error_steps   AS errors,
           coalesce(t.total_tokens_in, t.step_tokens_in)    AS tokens_in,
           coalesce(t.total_tokens_out, t.step_tokens_out)  AS tokens_out,
           coalesce(t.total_cost_usd, t.step_cost_usd)      AS cost_usd,
           coalesce(t.total_latency_ms, t.step_latency_ms)  AS latency_ms,
           t.cached_calls, t.cached_cost_usd,
           t.n_candidates, t.n_snippets, t.n_search_observations, t.n_record_judgments,
           s.em, s.f1, s.contain, s.llm, has_gold_answer(q.gold_answer, q.aliases) AS has_gold_answer,
           t.n_gold, t.n_gold_retrieved, t.n_gold_read, t.n_gold_reached,
           t.n_register_items, t.n_register_resolved, t.register_complete
    FROM scope t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN (SELECT trajectory_id, em, f1, contain, llm FROM judgment_score_facts
               WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh)) s
           USING (trajectory_id)
)
SELECT b.trajectory_id, b.run_id, b.question_id, b.dataset, b.record_hash,
       b.question_type, b.hop_count, b.final_answer, b.end_reason,
       b.search_count, b.read_count, b.failed_read_count, b.passages_read, b.turns, b.gate_rejections,
       b.injections, b.errors, is_zero_read_final(b.end_reason, b.read_count) AS zero_read_final,
       b.tokens_in, b.tokens_out, b.cost_usd, b.latency_ms, b.cached_calls, b.cached_cost_usd,
       b.n_candidates, b.n_snippets, b.n_search_observations, b.n_record_judgments,
       b.em, b.f1, b.has_gold_answer,
       answer_correct(b.llm, b.contain)                                       AS correct,
       answer_correct_by(b.llm, b.contain)                                    AS correct_by,
       CASE WHEN b.llm IS NULL AND b.contain IS NULL THEN
            CASE WHEN NOT b.has_gold_answer THEN 'no gold answer for this question: correctness does not apply'
                 ELSE 'not judged yet: run trajscope judge' END END              AS correct_reason,
       b.contain, b.llm,
       b.n_gold, b.n_gold_retrieved, b.n_gold_read,
       -- ER App. E: a supporting paragraph that matched no chunk was never retrieved, so "every
       -- supporting passage retrieved / reached" needs every paragraph the source names matched
       -- (gold_paragraphs <= n_gold) as well as every matched chunk found; hop recall uses the same rule.
       CASE WHEN b.n_gold > 0 THEN b.n_gold_retrieved = b.n_gold
                                   AND coalesce(b.gold_paragraphs, b.n_gold) <= b.n_gold END AS all_gold_retrieved,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_read > 0 END                      AS any_gold_read,
       b.n_gold_reached,
       -- ExecutionRAG App. E: the share of supporting paragraphs reached, over every paragraph the source
       -- names (an unmatched one counts as not reached); the matched chunks when the source counts none.
       CASE WHEN coalesce(b.gold_paragraphs, b.n_gold) > 0
            THEN least(b.n_gold_reached / coalesce(b.gold_paragraphs, b.n_gold), 1.0) END AS hop_evidence_recall,
       b.gold_paragraphs,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_reached = b.n_gold
                                   AND coalesce(b.gold_paragraphs, b.n_gold) <= b.n_gold END AS all_gold_reached,
       greatest(coalesce(b.gold_paragraphs, b.n_gold) - b.n_gold, 0)          AS n_gold_unmatched,
       CASE WHEN b.n_gold = 0 THEN 'no gold passages for this question: gold-evidence measures do not apply' END
                                                                              AS evidence_reason,
       a.trajectory_id IS NOT NULL                                            AS answer_checked,
       a.abstained, a.answer_in_snippets, a.answer_in_reads,
       a.echoed, a.hedged,
       b.n_register_items, b.n_register_resolved, b.register_complete,
       fr.n_false_resolved,
       CASE WHEN b.n_gold > 0 THEN fr.n_false_resolved > 0 END                AS false_resolution
FROM base b
LEFT JOIN answer_checks a ON a.trajectory_id = b.trajectory_id AND a.record_hash = b.record_hash
LEFT JOIN (SELECT trajectory_id, count(*) FILTER (false_resolution) AS n_false_resolved
           FROM register_item_resolution_rows()
           WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh)
           GROUP BY trajectory_id) fr ON fr.trajectory_id = b.trajectory_id
