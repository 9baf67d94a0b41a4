-- Identity sanity check per (cell, baseline): the reader re-run on unchanged contexts (ans_in_compile = 0); median |delta| and share of identical answers.
CREATE OR REPLACE VIEW audit_identity AS
SELECT cell, baseline,
       count(*) AS n,
       100 * avg(f1_base) AS f1_original_pts,
       100 * avg(f1) AS f1_rerun_pts,
       100 * avg(delta) AS mean_delta_pts,
       100 * median(abs(delta)) AS median_abs_delta_pts,
       avg(CASE WHEN coalesce(answer, '') = coalesce(answer_base, '') THEN 1.0 ELSE 0.0 END) AS identical_answer_rate
FROM audit_paired
WHERE intervention = 'identity' AND NOT ans_in_compile
GROUP BY cell, baseline
ORDER BY cell, baseline;
