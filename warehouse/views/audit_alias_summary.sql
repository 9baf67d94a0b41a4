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
