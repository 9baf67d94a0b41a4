-- Per chosen cell ($cells) and compiled baseline: answer-string containment (%) of the compile output; a baseline named <b>_blind is <b> with the question withheld.
SELECT cell, baseline, count(*) AS n, 100 * avg(ans_in_compile::INTEGER) AS containment_pts
FROM audit_buckets
WHERE analysable AND ans_in_compile IS NOT NULL AND list_contains($cells, cell)
GROUP BY cell, baseline
ORDER BY cell, baseline
