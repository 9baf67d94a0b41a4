-- The discipline indicator per trajectory by the regex and by the spaCy extractor over $runs (NULL: every run): the regex-vs-spaCy kappa's input.
SELECT x.trajectory_id, x.is_discipline AS regex_discipline, y.is_discipline AS spacy_discipline
FROM failure_rg x
JOIN failure_rg y ON y.trajectory_id = x.trajectory_id AND y.extractor = 'spacy'
WHERE x.extractor = 'regex' AND x.coverage_computed AND y.coverage_computed AND x.read_action
  AND x.is_discipline IS NOT NULL AND y.is_discipline IS NOT NULL
  AND ($runs IS NULL OR list_contains($runs, x.run_id))
ORDER BY x.trajectory_id
