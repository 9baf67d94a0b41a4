-- One row per trajectory of the chosen runs ($runs): correctness by the papers' rule (LLM-Acc, else Contain-Acc), Contain-Acc, LLM-Acc, reads, read exposure (0-4+), end reason.
SELECT f.run_id, f.question_id, f.dataset, f.question_type, f.hop_count,
       CAST(f.correct AS DOUBLE) AS correct,
       f.contain, f.llm, f.read_count, least(t.passages_read, 4) AS read_exposure, f.end_reason,
       is_zero_read_final(f.end_reason, f.read_count) AS voluntary_zero_read
FROM trajectory_forensics f
JOIN trajectories t USING (trajectory_id)
WHERE list_contains($runs, f.run_id)
