-- Wrong trajectories of the chosen runs ($runs) per run, extractor, read exposure (distinct passages read, 0-4+) and coverage computed: Read-Gate labels and multi-label indicators (failure_rg).
SELECT f.run_id, f.extractor, least(t.passages_read, 4) AS read_exposure, f.coverage_computed,
       coalesce(f.read_action, false) AS read_action,
       count(*)                                                          AS n_wrong,
       count(*) FILTER (f.label = 'discipline')                          AS n_discipline,
       count(*) FILTER (f.label = 'post_gold_read')                      AS n_post,
       count(*) FILTER (f.is_discipline AND NOT f.is_post_gold_read)     AS discipline_only,
       count(*) FILTER (f.is_post_gold_read AND NOT f.is_discipline)     AS post_only,
       count(*) FILTER (f.is_discipline AND f.is_post_gold_read)         AS both_cooccur,
       count(*) FILTER (NOT f.is_discipline AND NOT f.is_post_gold_read) AS neither
FROM failure_rg f
JOIN trajectories t USING (trajectory_id)
WHERE list_contains($runs, f.run_id)
GROUP BY ALL
