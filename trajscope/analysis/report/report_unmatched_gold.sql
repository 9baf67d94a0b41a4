-- Over the distinct questions of the chosen runs ($runs): supporting paragraphs the sources name and how many matched no corpus chunk (ER App. E's 87.9% match rate, here).
WITH q AS (
    SELECT DISTINCT dataset, question_id, n_gold, gold_paragraphs
    FROM trajectory_forensics
    WHERE list_contains($runs, run_id)
)
SELECT CAST(coalesce(sum(coalesce(gold_paragraphs, n_gold)), 0) AS BIGINT)                     AS n_paragraphs,
       CAST(coalesce(sum(greatest(coalesce(gold_paragraphs, n_gold) - n_gold, 0)), 0) AS BIGINT) AS n_unmatched
FROM q
