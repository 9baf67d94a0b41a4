-- Alias spot-check per (cell, baseline): masked records, how many the detector flags, and the masked-vs-B1 lift on the clean and flagged subsets (F1 points).
CREATE OR REPLACE VIEW audit_alias_summary AS
SELECT cell, baseline,
       count(*) AS n,
       count(*) FILTER (flagged) AS n_flagged,
       avg(flagged::INTEGER) AS flagged_rate,
       count(*) FILTER (fired_the) AS n_fired_the,
       count(*) FILTER (fired_last_token) AS n_fired_last_token,
       count(*) FILTER (fired_acronym) AS n_fired_acronym,
       count(*) FILTER (fired_year) AS n_fired_year,
       100 * avg(f1_masked - f1_b1) AS lift_vs_b1_all_pts,
       100 * avg(f1_masked - f1_b1) FILTER (NOT flagged) AS lift_vs_b1_clean_pts,
       100 * avg(f1_masked - f1_b1) FILTER (flagged) AS lift_vs_b1_flagged_pts
FROM audit_alias_check
GROUP BY cell, baseline
ORDER BY cell, baseline;
COMMENT ON COLUMN audit_alias_summary.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_alias_summary.baseline IS 'Compiled setting (b2, b3, b4, ...).';
COMMENT ON COLUMN audit_alias_summary.n IS '[MASK] remove outputs on contexts that contained the gold.';
COMMENT ON COLUMN audit_alias_summary.n_flagged IS 'Of those, flagged by the alias detector.';
COMMENT ON COLUMN audit_alias_summary.flagged_rate IS 'n_flagged / n.';
COMMENT ON COLUMN audit_alias_summary.n_fired_the IS 'Records where the leading-the variant survived.';
COMMENT ON COLUMN audit_alias_summary.n_fired_last_token IS 'Records where the last-token variant survived.';
COMMENT ON COLUMN audit_alias_summary.n_fired_acronym IS 'Records where the acronym variant survived.';
COMMENT ON COLUMN audit_alias_summary.n_fired_year IS 'Records where the year variant survived.';
COMMENT ON COLUMN audit_alias_summary.lift_vs_b1_all_pts IS 'Mean masked - b1 F1 over all records, in points (NULL: no b1 F1).';
COMMENT ON COLUMN audit_alias_summary.lift_vs_b1_clean_pts IS 'Mean masked - b1 F1 over records not flagged, in points (NULL: none).';
COMMENT ON COLUMN audit_alias_summary.lift_vs_b1_flagged_pts IS 'Mean masked - b1 F1 over flagged records, in points (NULL: none flagged).';
