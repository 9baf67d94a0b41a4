-- Read-Gate multi-label table per run and extractor: wrong trajectories that are discipline only, post-gold-read only, both, or neither.
CREATE OR REPLACE VIEW failure_rg_cooccurrence AS
SELECT run_id, extractor,
       count(*)                                                         AS n_wrong,
       count(*) FILTER (is_discipline AND NOT is_post_gold_read)        AS discipline_only,
       count(*) FILTER (is_post_gold_read AND NOT is_discipline)        AS post_only,
       count(*) FILTER (is_discipline AND is_post_gold_read)            AS discipline_and_post,
       count(*) FILTER (NOT is_discipline AND NOT is_post_gold_read)    AS neither,
       count(*) FILTER (is_discipline AND NOT is_post_gold_read) / count(*) AS discipline_only_share,
       count(*) FILTER (is_post_gold_read AND NOT is_discipline) / count(*) AS post_only_share,
       count(*) FILTER (is_discipline AND is_post_gold_read) / count(*)     AS discipline_and_post_share,
       count(*) FILTER (NOT is_discipline AND NOT is_post_gold_read) / count(*) AS neither_share
FROM failure_rg
GROUP BY run_id, extractor;
