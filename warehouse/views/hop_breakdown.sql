-- Per run, dataset and hop count: accuracy (the papers' rule, and Contain-Acc and LLM-Acc separately), hop-level evidence recall (share of gold passages ever retrieved) and ExecutionRAG failure counts.
CREATE OR REPLACE VIEW hop_breakdown AS
-- One pass: trajectory_erag_label carries every trajectory with its label (NULL unless wrong).
SELECT run_id, dataset, hop_count,
       count(*)                                              AS n,
       avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END) AS accuracy,
       avg(contain)                                          AS contain_acc,
       avg(CASE WHEN says_correct(llm) THEN 1.0 WHEN NOT says_correct(llm) THEN 0.0 END) AS llm_acc,
       count(llm)                                            AS n_llm_judged,
       avg(hop_evidence_recall)                              AS hop_evidence_recall,
       count(*) FILTER (correct = false)                     AS n_failures,
       count(*) FILTER (label = 'judge_error')               AS judge_error,
       count(*) FILTER (label = 'gave_up')                   AS gave_up,
       count(*) FILTER (label = 'reasoning_error')           AS reasoning_error,
       count(*) FILTER (label = 'missing_evidence')          AS missing_evidence,
       count(*) FILTER (label = 'no_gold_evidence')          AS no_gold_evidence
FROM trajectory_erag_label
GROUP BY ALL;
