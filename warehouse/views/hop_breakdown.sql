-- Per run, dataset and hop count: accuracy (the papers' rule, and Contain-Acc and LLM-Acc separately), hop-level evidence recall (share of supporting paragraphs whose gold passage reached the agent: retrieved, read or injected) and ExecutionRAG failure counts.
CREATE OR REPLACE VIEW hop_breakdown AS
-- One pass: trajectory_erag_label carries every trajectory with its label (NULL unless wrong).
SELECT run_id, dataset, hop_count,
       count(*)                                              AS n,
       avg(CASE WHEN correct THEN 1.0 WHEN NOT correct THEN 0.0 END) AS accuracy,
       avg(contain)                                          AS contain_acc,
       llm_acc(llm)                                          AS llm_acc,
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
COMMENT ON COLUMN hop_breakdown.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN hop_breakdown.dataset IS 'Dataset key (trajectories.dataset).';
COMMENT ON COLUMN hop_breakdown.hop_count IS 'Reasoning hops the dataset assigns (NULL: the source gives none).';
COMMENT ON COLUMN hop_breakdown.n IS 'Trajectories in the group.';
COMMENT ON COLUMN hop_breakdown.accuracy IS 'Share correct by the papers'' criterion (LLM verdict, else Contain-Acc) over judged trajectories; NULL: none judged.';
COMMENT ON COLUMN hop_breakdown.contain_acc IS 'Mean Contain-Acc over trajectories with a contain verdict; NULL: none.';
COMMENT ON COLUMN hop_breakdown.llm_acc IS 'LLM-Acc (macro llm_acc): share of LLM-judged trajectories whose verdict, averaged over judge models, says correct (says_correct); NULL: none judged.';
COMMENT ON COLUMN hop_breakdown.n_llm_judged IS 'Trajectories with an LLM verdict: the denominator of llm_acc.';
COMMENT ON COLUMN hop_breakdown.hop_evidence_recall IS 'Mean hop-level evidence recall over trajectories where it is defined (gold reached / supporting paragraphs); NULL: no question with gold passages.';
COMMENT ON COLUMN hop_breakdown.n_failures IS 'Wrong trajectories (correct = false).';
COMMENT ON COLUMN hop_breakdown.judge_error IS 'Failures labelled judge_error (LLM says wrong, Contain-Acc right).';
COMMENT ON COLUMN hop_breakdown.gave_up IS 'Failures labelled gave_up (abstained, or forced at the context budget or for an unrecorded cause; not at the loop cap).';
COMMENT ON COLUMN hop_breakdown.reasoning_error IS 'Failures labelled reasoning_error (all gold reached, or a false resolution).';
COMMENT ON COLUMN hop_breakdown.missing_evidence IS 'Failures labelled missing_evidence (a gold passage never reached the agent).';
COMMENT ON COLUMN hop_breakdown.no_gold_evidence IS 'Failures labelled no_gold_evidence (the question has no gold passages).';
