-- Per run, dataset and hop count: accuracy, hop-level evidence recall (share of gold passages ever retrieved) and ExecutionRAG failure counts.
CREATE OR REPLACE VIEW hop_breakdown AS
SELECT f.run_id, f.dataset, f.hop_count,
       count(*)                                              AS n,
       avg(CASE WHEN f.correct THEN 1.0 WHEN NOT f.correct THEN 0.0 END) AS accuracy,
       avg(f.hop_evidence_recall)                            AS hop_evidence_recall,
       count(*) FILTER (f.correct = false)                   AS n_failures,
       count(*) FILTER (e.label = 'judge_error')             AS judge_error,
       count(*) FILTER (e.label = 'gave_up')                 AS gave_up,
       count(*) FILTER (e.label = 'reasoning_error')         AS reasoning_error,
       count(*) FILTER (e.label = 'missing_evidence')        AS missing_evidence,
       count(*) FILTER (e.label = 'no_gold_evidence')        AS no_gold_evidence
FROM trajectory_forensics f
LEFT JOIN failure_erag e USING (trajectory_id)
GROUP BY ALL;
