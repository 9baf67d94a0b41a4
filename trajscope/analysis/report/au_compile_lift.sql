-- Per (chosen cell $cells, baseline) on ans_in_compile = 1 with a [MASK] remove output: the compile lift over raw retrieval, F1(Bk) - F1(B1), per record.
SELECT cell, baseline, record_id, f1_base - f1_b1 AS lift
FROM audit_paired
WHERE intervention = 'remove' AND sentinel = '[MASK]' AND ans_in_compile AND f1_b1 IS NOT NULL
  AND list_contains($cells, cell)
ORDER BY cell, baseline, record_id
