-- Read-Gate multi-label table per run and extractor: wrong trajectories that are discipline only, post-gold-read only, both, or neither (NULL where the run has no read action, with the reason).
CREATE OR REPLACE VIEW failure_rg_cooccurrence AS
-- A trajectory whose discipline or post-gold test does not apply (NULL) is in none of the cells.
WITH cells AS (
    SELECT run_id, extractor,
           count(*)                                                         AS n_wrong,
           count(is_discipline)                                             AS n_discipline_known,
           count(*) FILTER (is_discipline AND NOT is_post_gold_read)        AS discipline_only,
           count(*) FILTER (is_post_gold_read AND NOT is_discipline)        AS post_only,
           count(*) FILTER (is_discipline AND is_post_gold_read)            AS discipline_and_post,
           count(*) FILTER (NOT is_discipline AND NOT is_post_gold_read)    AS neither,
           any_value(does_not_apply) FILTER (read_action IS NOT TRUE)       AS does_not_apply
    FROM failure_rg
    GROUP BY run_id, extractor
)
SELECT run_id, extractor, n_wrong,
       CASE WHEN n_discipline_known > 0 THEN discipline_only END             AS discipline_only,
       CASE WHEN n_discipline_known > 0 THEN post_only END                   AS post_only,
       CASE WHEN n_discipline_known > 0 THEN discipline_and_post END         AS discipline_and_post,
       CASE WHEN n_discipline_known > 0 THEN neither END                     AS neither,
       CASE WHEN n_discipline_known > 0 THEN discipline_only / n_wrong END     AS discipline_only_share,
       CASE WHEN n_discipline_known > 0 THEN post_only / n_wrong END           AS post_only_share,
       CASE WHEN n_discipline_known > 0 THEN discipline_and_post / n_wrong END AS discipline_and_post_share,
       CASE WHEN n_discipline_known > 0 THEN neither / n_wrong END             AS neither_share,
       CASE WHEN n_discipline_known = 0 THEN coalesce(does_not_apply, 'no wrong answer the discipline test applies to') END AS does_not_apply
FROM cells;
COMMENT ON COLUMN failure_rg_cooccurrence.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN failure_rg_cooccurrence.extractor IS 'Entity extractor of the low-evidence test: regex or spacy (Read-Gate reports both).';
COMMENT ON COLUMN failure_rg_cooccurrence.n_wrong IS 'Wrong trajectories of the run (rows of failure_rg for this extractor): the denominator of the shares.';
COMMENT ON COLUMN failure_rg_cooccurrence.discipline_only IS 'Wrong trajectories that are discipline failures and did not read a gold passage; NULL when no discipline test applies in the run (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.post_only IS 'Wrong trajectories that read a gold passage and are no discipline failure; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.discipline_and_post IS 'Wrong trajectories that are both a discipline failure and post-gold-read; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.neither IS 'Wrong trajectories that are neither; NULL when no discipline test applies (see does_not_apply). One with a NULL test is in no cell.';
COMMENT ON COLUMN failure_rg_cooccurrence.discipline_only_share IS 'discipline_only / n_wrong; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.post_only_share IS 'post_only / n_wrong; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.discipline_and_post_share IS 'discipline_and_post / n_wrong; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.neither_share IS 'neither / n_wrong; NULL when no discipline test applies (see does_not_apply).';
COMMENT ON COLUMN failure_rg_cooccurrence.does_not_apply IS 'Why the cells are NULL: no read action in the log, or no wrong answer the discipline test applies to.';
