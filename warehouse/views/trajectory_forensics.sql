-- One row per trajectory: every signal the failure taxonomies use (correctness, reads, gold reach, abstention, snippet-only answer, register resolution); gold-reach signals are NULL for a question without gold passages, and correct is NULL with correct_reason when there is no verdict.
CREATE OR REPLACE VIEW trajectory_forensics AS
-- Every taxonomy view and page query reads this view, so it is written to scan each table once:
-- the verdicts (judgment_scores, as trajectory_scores reads them) are joined once and correctness
-- uses the rule of trajectory_correctness (the macro answer_correct) on them,
-- and gold reach and register resolution are the load-time columns of trajectories (summed there
-- from gold_evidence_facts and register_events, as trajectory_evidence reads them). A false
-- resolution is per register item (register_item_resolution); NULL for runs without a register.
WITH base AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.record_hash,
           q.question_type, q.hop_count, q.gold_paragraphs, t.final_answer, t.end_reason,
           t.search_count, t.read_count,
           coalesce(t.total_tokens_in, t.step_tokens_in)    AS tokens_in,
           coalesce(t.total_tokens_out, t.step_tokens_out)  AS tokens_out,
           coalesce(t.total_cost_usd, t.step_cost_usd)      AS cost_usd,
           s.contain, s.llm, has_gold_answer(q.gold_answer, q.aliases) AS has_gold_answer,
           t.n_gold, t.n_gold_retrieved, t.n_gold_read, t.n_gold_reached,
           t.n_register_items, t.n_register_resolved, t.register_complete
    FROM trajectories t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN judgment_scores s USING (trajectory_id)
)
SELECT b.trajectory_id, b.run_id, b.question_id, b.dataset, b.record_hash,
       b.question_type, b.hop_count, b.final_answer, b.end_reason,
       b.search_count, b.read_count, b.tokens_in, b.tokens_out, b.cost_usd,
       answer_correct(b.llm, b.contain)                                       AS correct,
       answer_correct_by(b.llm, b.contain)                                    AS correct_by,
       CASE WHEN b.llm IS NULL AND b.contain IS NULL THEN
            CASE WHEN NOT b.has_gold_answer THEN 'no gold answer for this question: correctness does not apply'
                 ELSE 'not judged yet: run trajscope judge' END END              AS correct_reason,
       b.contain, b.llm,
       b.n_gold, b.n_gold_retrieved, b.n_gold_read,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_retrieved = b.n_gold END          AS all_gold_retrieved,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_read > 0 END                      AS any_gold_read,
       b.n_gold_reached,
       -- ExecutionRAG App. E: the share of supporting paragraphs reached, over every paragraph the source
       -- names (an unmatched one counts as not reached); the matched chunks when the source counts none.
       CASE WHEN coalesce(b.gold_paragraphs, b.n_gold) > 0
            THEN least(b.n_gold_reached / coalesce(b.gold_paragraphs, b.n_gold), 1.0) END AS hop_evidence_recall,
       b.gold_paragraphs,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_reached = b.n_gold END            AS all_gold_reached,
       CASE WHEN b.n_gold = 0 THEN 'no gold passages for this question: gold-evidence measures do not apply' END
                                                                              AS evidence_reason,
       a.trajectory_id IS NOT NULL                                            AS answer_checked,
       a.abstained, a.answer_in_snippets, a.answer_in_reads,
       b.n_register_items, b.n_register_resolved, b.register_complete,
       fr.n_false_resolved,
       CASE WHEN b.n_gold > 0 THEN fr.n_false_resolved > 0 END                AS false_resolution
FROM base b
LEFT JOIN answer_checks a ON a.trajectory_id = b.trajectory_id AND a.record_hash = b.record_hash
LEFT JOIN (SELECT trajectory_id, count(*) FILTER (false_resolution) AS n_false_resolved
           FROM register_item_resolution GROUP BY trajectory_id) fr ON fr.trajectory_id = b.trajectory_id;
