-- Per chosen run ($runs) and question category (MuSiQue: hop count; otherwise question type): questions, Contain-Acc and LLM-Acc sums (LLM-Acc through the llm_acc macro, as run_summary).
SELECT run_id,
       CASE WHEN dataset ILIKE '%musique%' THEN coalesce(CAST(hop_count AS VARCHAR) || '-hop', '(none)')
            ELSE coalesce(question_type, '(none)') END AS category,
       count(*) AS n, count(contain) AS n_contain, sum(contain) AS contain_sum,
       count(llm) AS n_llm,
       -- The count of LLM-judged trajectories said correct (llm_acc x n_llm), not the sum of averaged
       -- verdicts: two judges splitting 1 / 0 is a tie that says_correct counts as right.
       coalesce(llm_acc(llm) * count(llm), 0) AS llm_sum
FROM trajectory_forensics
WHERE list_contains($runs, run_id)
GROUP BY ALL
ORDER BY run_id, category
