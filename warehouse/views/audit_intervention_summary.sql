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
