-- Wrong trajectories of the chosen runs ($runs) with a read action, per extractor whose coverage was computed: discipline only, post-gold-read only, both, neither.
SELECT extractor,
       count(*)                                                      AS n_wrong,
       count(*) FILTER (is_discipline AND NOT is_post_gold_read)     AS discipline_only,
       count(*) FILTER (is_post_gold_read AND NOT is_discipline)     AS post_only,
       count(*) FILTER (is_discipline AND is_post_gold_read)         AS both_cooccur,
       count(*) FILTER (NOT is_discipline AND NOT is_post_gold_read) AS neither
FROM failure_rg
WHERE list_contains($runs, run_id) AND read_action AND coverage_computed
GROUP BY extractor
ORDER BY extractor
