-- Per run, dataset and question type (HotpotQA bridge/comparison; 2Wiki compositional/comparison/bridge_comparison/inference): accuracy, evidence recall, zero-read rate (NULL without a read action, with its reason).
CREATE OR REPLACE VIEW type_breakdown AS
SELECT run_id, dataset, question_type,
       count(*)                                                          AS n,
       avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END)     AS accuracy,
       avg(contain)                                                      AS contain_acc,
       llm_acc(llm)                                                      AS llm_acc,
       avg(hop_evidence_recall)                                          AS hop_evidence_recall,
       -- The voluntary zero-read rule, the measure run_summary.zero_read_final_rate gives per run.
       CASE WHEN any_value(c.read_action) THEN avg(CASE WHEN is_zero_read_final(end_reason, read_count) THEN 1.0 ELSE 0.0 END) END
                                                                         AS zero_read_final_rate,
       count(*) FILTER (correct = false)                                 AS n_failures,
       CASE WHEN any_value(c.read_action) IS NOT TRUE THEN any_value(c.read_action_reason) END AS zero_read_reason
FROM trajectory_forensics
LEFT JOIN run_capabilities c USING (run_id)
GROUP BY run_id, dataset, question_type;
COMMENT ON COLUMN type_breakdown.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN type_breakdown.dataset IS 'Dataset key (trajectories.dataset).';
COMMENT ON COLUMN type_breakdown.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN type_breakdown.n IS 'Trajectories in the group.';
COMMENT ON COLUMN type_breakdown.accuracy IS 'Share correct by the papers'' criterion (LLM verdict, else Contain-Acc) over judged trajectories; NULL: none judged.';
COMMENT ON COLUMN type_breakdown.contain_acc IS 'Mean Contain-Acc over trajectories with a contain verdict; NULL: none.';
COMMENT ON COLUMN type_breakdown.llm_acc IS 'LLM-Acc (macro llm_acc): share of LLM-judged trajectories whose verdict, averaged over judge models, says correct (says_correct); NULL: none judged.';
COMMENT ON COLUMN type_breakdown.hop_evidence_recall IS 'Mean hop-level evidence recall over trajectories where it is defined (gold reached / supporting paragraphs); NULL: no question with gold passages.';
COMMENT ON COLUMN type_breakdown.zero_read_final_rate IS 'Voluntary zero-read finals (macro is_zero_read_final: ended on a final with no read that returned a passage; run_summary.zero_read_final_rate per type); NULL without a read action (see zero_read_reason).';
COMMENT ON COLUMN type_breakdown.zero_read_reason IS 'Why zero_read_final_rate is NULL: the run has no known read action (run_capabilities.read_action_reason).';
COMMENT ON COLUMN type_breakdown.n_failures IS 'Wrong trajectories (correct = false).';
