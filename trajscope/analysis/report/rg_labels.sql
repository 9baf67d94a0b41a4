-- Wrong trajectories of the chosen runs ($runs) per run and extractor: how many carry the discipline label (failure_rg), for Table 3's baseline discipline error.
SELECT f.run_id, f.extractor,
       count(*)                                 AS n_wrong,
       count(*) FILTER (f.label = 'discipline') AS n_discipline
FROM failure_rg f
WHERE list_contains($runs, f.run_id)
GROUP BY ALL
