-- The logs the warehouse was built from (trajectories' and audit records' source_file): what no export may overwrite.
SELECT source_file FROM trajectories WHERE source_file IS NOT NULL
UNION
SELECT source_file FROM audit_records WHERE source_file IS NOT NULL
ORDER BY source_file
