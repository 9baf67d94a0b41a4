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
COMMENT ON COLUMN type_breakdown.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN type_breakdown.dataset IS 'Dataset key (trajectories.dataset).';
COMMENT ON COLUMN type_breakdown.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN type_breakdown.n IS 'Trajectories in the group.';
COMMENT ON COLUMN type_breakdown.accuracy IS 'Share correct by the papers'' criterion (LLM verdict, else Contain-Acc) over judged trajectories; NULL: none judged.';
COMMENT ON COLUMN type_breakdown.contain_acc IS 'Mean Contain-Acc over trajectories with a contain verdict; NULL: none.';
COMMENT ON COLUMN type_breakdown.llm_acc IS 'Mean LLM verdict (averaged over judge models) over trajectories with one; NULL: none.';
COMMENT ON COLUMN type_breakdown.hop_evidence_recall IS 'Mean hop-level evidence recall over trajectories where it is defined (gold reached / supporting paragraphs); NULL: no question with gold passages.';
COMMENT ON COLUMN type_breakdown.zero_read_rate IS 'Share of trajectories with no read step that returned a passage, any end reason; computed for every run, so read it with run_capabilities.read_action.';
COMMENT ON COLUMN type_breakdown.n_failures IS 'Wrong trajectories (correct = false).';
