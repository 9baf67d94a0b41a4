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
COMMENT ON COLUMN audit_identity.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_identity.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_identity.n IS 'Identity reruns on contexts without the gold (ans_in_compile = 0).';
COMMENT ON COLUMN audit_identity.f1_original_pts IS 'Mean reader F1 of the original unperturbed output, in points (100 x F1).';
COMMENT ON COLUMN audit_identity.f1_rerun_pts IS 'Mean reader F1 of the identity rerun on the unchanged context, in points.';
COMMENT ON COLUMN audit_identity.mean_delta_pts IS 'Mean rerun - original F1, in points.';
COMMENT ON COLUMN audit_identity.median_abs_delta_pts IS 'Median |rerun - original| F1, in points (near 0 when the reader is deterministic).';
COMMENT ON COLUMN audit_identity.identical_answer_rate IS 'Share of reruns whose answer is exactly the original''s (a missing answer counts as '''').';
