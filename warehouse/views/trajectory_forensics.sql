-- One row per trajectory: every signal the failure taxonomies use (correctness, reads, gold reach, abstention, snippet-only answer, register resolution).
CREATE OR REPLACE VIEW trajectory_forensics AS
-- Every taxonomy view and page query reads this view, so it is written to scan each table once:
-- trajectory_scores is joined once (correctness uses the rule of trajectory_correctness on it),
-- and one aggregate of gold_evidence_facts gives both trajectory_evidence's counts and the reach.
WITH gold AS (
    -- ExecutionRAG's "ever retrieved" (reached): in a search result, read, or injected into context.
    SELECT trajectory_id,
           count(*)                                                 AS n_gold,
           count(*) FILTER (first_retrieved_step IS NOT NULL)       AS n_gold_retrieved,
           count(*) FILTER (first_read_step IS NOT NULL)            AS n_gold_read,
           count(*) FILTER (first_retrieved_step IS NOT NULL OR first_read_step IS NOT NULL
                            OR first_injected_step IS NOT NULL)     AS n_gold_reached
    FROM gold_evidence_facts GROUP BY trajectory_id
),
register_last AS (
    SELECT trajectory_id, item_id, arg_max(to_status, event_index) AS status
    FROM register_events GROUP BY ALL
),
register_state AS (
    -- "The register marks the question sufficiently answered": every item closed, one resolved.
    SELECT trajectory_id,
           count(*)                                   AS n_register_items,
           count(*) FILTER (status = 'resolved')      AS n_register_resolved,
           bool_and(status IN ('resolved', 'retired')) AND count(*) FILTER (status = 'resolved') > 0
                                                      AS register_complete
    FROM register_last GROUP BY trajectory_id
),
base AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.record_hash,
           q.question_type, q.hop_count, t.final_answer, t.end_reason,
           t.search_count, t.read_count,
           coalesce(t.total_tokens_in, t.step_tokens_in)    AS tokens_in,
           coalesce(t.total_tokens_out, t.step_tokens_out)  AS tokens_out,
           coalesce(t.total_cost_usd, t.step_cost_usd)      AS cost_usd,
           s.contain, s.llm,
           coalesce(g.n_gold, 0)                            AS n_gold,
           coalesce(g.n_gold_retrieved, 0)                  AS n_gold_retrieved,
           coalesce(g.n_gold_read, 0)                       AS n_gold_read,
           coalesce(g.n_gold_reached, 0)                    AS n_gold_reached
    FROM trajectories t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN trajectory_scores s USING (trajectory_id)
    LEFT JOIN gold g USING (trajectory_id)
)
SELECT b.trajectory_id, b.run_id, b.question_id, b.dataset, b.record_hash,
       b.question_type, b.hop_count, b.final_answer, b.end_reason,
       b.search_count, b.read_count, b.tokens_in, b.tokens_out, b.cost_usd,
       CASE WHEN b.llm IS NOT NULL THEN b.llm >= 0.5
            WHEN b.contain IS NOT NULL THEN b.contain >= 0.5 END              AS correct,
       CASE WHEN b.llm IS NOT NULL THEN 'llm'
            WHEN b.contain IS NOT NULL THEN 'contain' END                     AS correct_by,
       b.contain, b.llm,
       b.n_gold, b.n_gold_retrieved, b.n_gold_read,
       b.n_gold > 0 AND b.n_gold_retrieved = b.n_gold                         AS all_gold_retrieved,
       b.n_gold_read > 0                                                      AS any_gold_read,
       b.n_gold_reached,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_reached / b.n_gold END            AS hop_evidence_recall,
       b.n_gold > 0 AND b.n_gold_reached = b.n_gold                           AS all_gold_reached,
       a.trajectory_id IS NOT NULL                                            AS answer_checked,
       a.abstained, a.answer_in_snippets, a.answer_in_reads,
       coalesce(rs.n_register_items, 0)                                       AS n_register_items,
       coalesce(rs.n_register_resolved, 0)                                    AS n_register_resolved,
       coalesce(rs.register_complete, false)                                  AS register_complete,
       coalesce(rs.register_complete, false) AND b.n_gold > 0
           AND b.n_gold_reached < b.n_gold                                    AS false_resolution
FROM base b
LEFT JOIN answer_checks a ON a.trajectory_id = b.trajectory_id AND a.record_hash = b.record_hash
LEFT JOIN register_state rs ON rs.trajectory_id = b.trajectory_id;
