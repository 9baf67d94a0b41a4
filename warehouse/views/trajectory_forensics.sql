-- One row per trajectory: every signal the failure taxonomies use (correctness, reads, gold reach, abstention, snippet-only answer, register resolution).
CREATE OR REPLACE VIEW trajectory_forensics AS
WITH reach AS (
    -- ExecutionRAG's "ever retrieved": in a search result, read, or injected into context.
    SELECT trajectory_id,
           count(*) FILTER (retrieved OR read OR injected) AS n_gold_reached
    FROM gold_evidence GROUP BY trajectory_id
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
)
SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.record_hash,
       f.question_type, f.hop_count, f.final_answer, f.end_reason,
       f.search_count, f.read_count, f.tokens_in, f.tokens_out, f.cost_usd,
       c.correct, c.correct_by, c.contain, c.llm,
       e.n_gold, e.n_gold_retrieved, e.n_gold_read, e.all_gold_retrieved, e.any_gold_read,
       coalesce(r.n_gold_reached, 0)                                  AS n_gold_reached,
       CASE WHEN e.n_gold > 0 THEN coalesce(r.n_gold_reached, 0) / e.n_gold END AS hop_evidence_recall,
       e.n_gold > 0 AND coalesce(r.n_gold_reached, 0) = e.n_gold      AS all_gold_reached,
       a.trajectory_id IS NOT NULL                                    AS answer_checked,
       a.abstained, a.answer_in_snippets, a.answer_in_reads,
       coalesce(rs.n_register_items, 0)                               AS n_register_items,
       coalesce(rs.n_register_resolved, 0)                            AS n_register_resolved,
       coalesce(rs.register_complete, false)                          AS register_complete,
       coalesce(rs.register_complete, false) AND e.n_gold > 0
           AND coalesce(r.n_gold_reached, 0) < e.n_gold               AS false_resolution
FROM trajectories t
JOIN trajectory_facts f USING (trajectory_id)
JOIN trajectory_correctness c USING (trajectory_id)
JOIN trajectory_evidence e USING (trajectory_id)
LEFT JOIN reach r USING (trajectory_id)
LEFT JOIN answer_checks a ON a.trajectory_id = t.trajectory_id AND a.record_hash = t.record_hash
LEFT JOIN register_state rs USING (trajectory_id);
