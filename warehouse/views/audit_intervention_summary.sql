-- Per (cell, baseline, intervention, sentinel, stratum = bucket or 'all'): n, reader F1 mean and paired delta vs the unperturbed context, in F1 points (CIs: audit-report).
CREATE OR REPLACE VIEW audit_intervention_summary AS
SELECT cell, baseline, intervention, coalesce(sentinel_label, '') AS sentinel,
       CASE WHEN grouping(bucket) = 1 THEN 'all' ELSE bucket END AS stratum,
       count(*) AS n,
       100 * avg(f1) AS f1_pts,
       100 * avg(f1_base) AS f1_base_pts,
       100 * avg(delta) AS delta_pts
FROM audit_paired
WHERE on_target
GROUP BY GROUPING SETS ((cell, baseline, intervention, sentinel_label, bucket),
                        (cell, baseline, intervention, sentinel_label))
ORDER BY cell, baseline, intervention, sentinel, stratum;
COMMENT ON COLUMN audit_intervention_summary.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_intervention_summary.baseline IS 'Compiled setting: b2 MA compile, b3 MB compile, b4 MA compile + MB verify (b4s, b4lr: other verify modes).';
COMMENT ON COLUMN audit_intervention_summary.intervention IS 'remove, placebo, insert_prepend, insert_mid or identity.';
COMMENT ON COLUMN audit_intervention_summary.sentinel IS 'Sentinel label of remove / placebo (MASK, REMOVED, NATURAL, WORD, SYMBOL); '''' for the other edits.';
COMMENT ON COLUMN audit_intervention_summary.stratum IS 'Transition bucket (0->0, 0->1, 1->1, 1->0) or all.';
COMMENT ON COLUMN audit_intervention_summary.n IS 'On-target intervened outputs in the group.';
COMMENT ON COLUMN audit_intervention_summary.f1_pts IS 'Mean reader F1 under the intervention, in points (100 x F1).';
COMMENT ON COLUMN audit_intervention_summary.f1_base_pts IS 'Mean reader F1 on the same contexts unperturbed, in points.';
COMMENT ON COLUMN audit_intervention_summary.delta_pts IS 'Mean paired delta (intervened - unperturbed F1), in points; confidence intervals in audit-report.';
