-- Wrong trajectories of the chosen runs ($runs) with a read action that both extractors covered: the regex and spaCy discipline indicators side by side (for kappa).
SELECT x.trajectory_id, x.is_discipline AS regex_discipline, y.is_discipline AS spacy_discipline
FROM failure_rg x
JOIN failure_rg y ON y.trajectory_id = x.trajectory_id AND y.extractor = 'spacy'
WHERE x.extractor = 'regex' AND x.coverage_computed AND y.coverage_computed AND x.read_action
  AND list_contains($runs, x.run_id)
ORDER BY x.trajectory_id
