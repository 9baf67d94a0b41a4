-- Every per-trajectory signal the taxonomies, pages and commands read (trajectory_forensics, trajectory_facts, trajectory_correctness, run_summary, run_capabilities), recomputed for the trajectories listed in the temp table signals_refresh (a loaded batch, a question upsert's, those a judge pass wrote, or all).
DELETE FROM trajectory_signals WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh);
INSERT INTO trajectory_signals BY NAME
-- Stored so that a page reads one table instead of joining trajectories, questions, verdicts, answer
-- checks and register items for every trajectory of the runs it shows (at a million trajectories those
-- joins took 1.6-3.6 s per page). Gold reach and register resolution are the load-time columns of
-- trajectories (summed there from gold_evidence_facts and register_events, as trajectory_evidence
-- reads them); a false resolution is per register item (register_item_resolution), NULL for runs
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
           t.n_register_items, t.n_register_resolved, t.register_complete, t.n_steps, q.gold_answer, q.aliases
    FROM scope t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN (SELECT * FROM judgment_scores WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh)) s
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
       CASE WHEN b.n_gold > 0 THEN fr.n_false_resolved > 0 END                AS false_resolution,
       b.n_steps, w.funnel_hops, w.funnel_queried, w.funnel_retrieved, w.funnel_shown, w.funnel_read, w.funnel_used,
       w.funnel_final_step, w.first_unread, w.answered_hop
FROM base b
LEFT JOIN answer_checks a ON a.trajectory_id = b.trajectory_id AND a.record_hash = b.record_hash
LEFT JOIN (SELECT trajectory_id, count(*) FILTER (false_resolution) AS n_false_resolved
           FROM register_item_resolution
           WHERE trajectory_id IN (SELECT trajectory_id FROM signals_refresh)
           GROUP BY trajectory_id) fr ON fr.trajectory_id = b.trajectory_id
-- The evidence-funnel walk of first_decisive_error that needs no run capability: the first hop whose
-- passage never entered the context (evidence_funnel.read is true exactly when read_step is set, on any
-- log) with the steps its rule names, and the first hop whose entity the final answer names while no
-- gold answer or alias does. Stored so the view reads one row per wrong trajectory, not all its hops.
-- With them, how many of its gold passages reached each funnel stage, whatever the log: evidence_funnel_question
-- decides its all-hops row from these and the run's capabilities (funnel_stage_all), not from every hop's row.
LEFT JOIN (
    SELECT trajectory_id, count(*) AS funnel_hops, count(*) FILTER (queried) AS funnel_queried,
           count(retrieved_step) AS funnel_retrieved, count(snippet_shown_step) AS funnel_shown,
           count(read_step) AS funnel_read, count(*) FILTER (used) AS funnel_used, max(final_step) AS funnel_final_step,
           arg_min({'hop': hop, 'chunk_id': chunk_id, 'queried': queried, 'queried_step': queried_step,
                    'retrieved_step': retrieved_step, 'shown_step': snippet_shown_step}, {'hop': hop, 'chunk_id': chunk_id})
               FILTER (read_step IS NULL)                                   AS first_unread,
           arg_min({'hop': hop, 'chunk_id': chunk_id, 'entity': named_entity}, {'hop': hop, 'chunk_id': chunk_id})
               FILTER (named_entity IS NOT NULL)                            AS answered_hop
    FROM (
        SELECT f.trajectory_id, f.hop, f.chunk_id, f.queried, f.queried_step, f.retrieved_step,
               f.snippet_shown_step, f.read_step, f.used, f.final_step,
               -- Entities of the gold chain other than the answer: the hop's title, bridge entity and what it
               -- yields; the first the final answer names while no gold answer or alias names it or is named by
               -- it (names_entity both ways). (The CASE spares the lambdas a hop that names nothing, or a
               -- trajectory with no final.)
               CASE WHEN g.final_answer IS NOT NULL
                         AND (f.title IS NOT NULL OR f.bridge_entity IS NOT NULL OR len(f.answer_entities) > 0) THEN
               list_filter(list_distinct([f.title, f.bridge_entity] || f.answer_entities),
                           lambda e: names_entity(g.final_answer, e)
                                     AND NOT list_bool_or(list_transform([g.gold_answer] || coalesce(g.aliases, []),
                                                                         lambda a: names_entity(a, e) OR names_entity(e, a))))[1]
               END AS named_entity
        FROM evidence_funnel_facts f
        JOIN base g ON g.trajectory_id = f.trajectory_id
        WHERE f.trajectory_id IN (SELECT trajectory_id FROM signals_refresh)
    )
    GROUP BY trajectory_id
) w ON w.trajectory_id = b.trajectory_id;
