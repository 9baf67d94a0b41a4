-- Per chosen run ($runs) and question category (MuSiQue: hop count; otherwise question type): questions, Contain-Acc and LLM-Acc sums.
SELECT run_id,
       CASE WHEN dataset ILIKE '%musique%' THEN coalesce(CAST(hop_count AS VARCHAR) || '-hop', '(none)')
            ELSE coalesce(question_type, '(none)') END AS category,
       count(*) AS n, count(contain) AS n_contain, sum(contain) AS contain_sum,
       count(llm) AS n_llm, sum(llm) AS llm_sum
FROM trajectory_forensics
WHERE list_contains($runs, run_id)
GROUP BY ALL
ORDER BY run_id, category
