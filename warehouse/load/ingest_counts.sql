-- New, unchanged and all distinct ids of an ingest: each id's hash before its first batch against the one stored now.
WITH first_met AS (
    SELECT trajectory_id, arg_min(before_hash, seq) AS before_hash FROM ingest_ids GROUP BY trajectory_id
)
SELECT count(*) FILTER (WHERE f.before_hash = ''),
       count(*) FILTER (WHERE f.before_hash = t.record_hash),
       count(*)
FROM first_met f JOIN trajectories t USING (trajectory_id)
