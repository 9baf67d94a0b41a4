-- Per chosen run ($runs): gate corrections (finals the gate refused) per question, questions corrected at least once, turns per question and accuracy by the papers' rule (Read-Gate Figure 6).
SELECT x.run_id,
       count(*)                                                     AS n,
       avg(x.gate_rejections)                                       AS corrections,
       avg(CAST(x.gate_rejections > 0 AS DOUBLE))                   AS corrected_share,
       avg(x.turns)                                                 AS turns,
       count(f.correct)                                             AS n_judged,
       sum(CAST(f.correct AS DOUBLE))                               AS n_correct
FROM trajectory_facts x
JOIN trajectory_forensics f USING (trajectory_id)
WHERE list_contains($runs, x.run_id)
GROUP BY x.run_id
