-- Read-Gate §5.1's multi-label table pooled over a set of runs (the paper pools its 12,000 trajectories):
-- sums of failure_rg_cooccurrence's cells per extractor, over the runs where the discipline test applies.
SELECT extractor, count(*) AS n_runs, sum(n_wrong) AS n_wrong,
       sum(discipline_only) AS discipline_only, sum(post_only) AS post_only,
       sum(discipline_and_post) AS discipline_and_post, sum(neither) AS neither,
       sum(discipline_only) / sum(n_wrong) AS discipline_only_share,
       sum(post_only) / sum(n_wrong) AS post_only_share,
       sum(discipline_and_post) / sum(n_wrong) AS discipline_and_post_share,
       sum(neither) / sum(n_wrong) AS neither_share
FROM failure_rg_cooccurrence
WHERE does_not_apply IS NULL AND ($runs IS NULL OR list_contains($runs, run_id))
GROUP BY extractor
ORDER BY extractor
