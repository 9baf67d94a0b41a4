-- Per run, dataset and question type (HotpotQA bridge/comparison; 2Wiki compositional/comparison/bridge_comparison/inference): accuracy, evidence recall, zero-read rate.
CREATE OR REPLACE VIEW type_breakdown AS
SELECT run_id, dataset, question_type,
       count(*)                                                          AS n,
       avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END)     AS accuracy,
       avg(contain)                                                      AS contain_acc,
       avg(llm)                                                          AS llm_acc,
       avg(hop_evidence_recall)                                          AS hop_evidence_recall,
       avg(CASE WHEN read_count = 0 THEN 1.0 ELSE 0.0 END)               AS zero_read_rate,
       count(*) FILTER (correct = false)                                 AS n_failures
FROM trajectory_forensics
GROUP BY ALL;
