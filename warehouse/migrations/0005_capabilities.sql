-- Capability profiles per run, failed reads, and the load-time facts the profile inference reads; rows loaded before this migration are backfilled from the stored tables.
-- A run's profile as its log recorded it (Run.capabilities); NULL where the log said nothing, and
-- then the run_capabilities view infers the capability from the run's stored data.
ALTER TABLE runs ADD COLUMN cap_search_candidates BOOLEAN;
ALTER TABLE runs ADD COLUMN cap_snippets BOOLEAN;
ALTER TABLE runs ADD COLUMN cap_read_action BOOLEAN;
ALTER TABLE runs ADD COLUMN cap_gold_answers BOOLEAN;
ALTER TABLE runs ADD COLUMN cap_gold_passages BOOLEAN;
ALTER TABLE runs ADD COLUMN cap_judgments BOOLEAN;
ALTER TABLE runs ADD COLUMN capabilities_declared VARCHAR[];
ALTER TABLE runs ADD COLUMN capability_reasons JSON;

-- One read rule for engine and warehouse: read_count counts read steps that returned a passage,
-- failed_read_count the read steps that returned none (an unknown chunk id, say).
ALTER TABLE trajectories ADD COLUMN failed_read_count INTEGER;
ALTER TABLE trajectories ADD COLUMN n_candidates BIGINT;
ALTER TABLE trajectories ADD COLUMN n_snippets BIGINT;
ALTER TABLE trajectories ADD COLUMN n_search_observations INTEGER;
ALTER TABLE trajectories ADD COLUMN n_record_judgments INTEGER;

UPDATE trajectories SET read_count = a.ok, failed_read_count = a.n_read_steps - a.ok
FROM (
    SELECT s.trajectory_id, count(*) AS n_read_steps,
           count(*) FILTER ((s.trajectory_id, s.step_index) IN
                            (SELECT (trajectory_id, step_index) FROM reads WHERE via = 'read')) AS ok
    FROM steps s WHERE s.kind = 'read' GROUP BY s.trajectory_id
) a
WHERE trajectories.trajectory_id = a.trajectory_id;
UPDATE trajectories SET n_candidates = a.n, n_snippets = a.n_snippets
FROM (
    SELECT trajectory_id, count(*) AS n, count(*) FILTER (coalesce(snippet, '') <> '') AS n_snippets
    FROM candidates GROUP BY trajectory_id
) a
WHERE trajectories.trajectory_id = a.trajectory_id;
-- n_search_observations (search steps whose observation carries text) stays NULL on rows loaded
-- before this migration: the step kinds that are searches are macros installed after migrations.
UPDATE trajectories SET n_record_judgments = a.n
FROM (SELECT trajectory_id, count(*) AS n FROM judgments WHERE origin = 'record' GROUP BY trajectory_id) a
WHERE trajectories.trajectory_id = a.trajectory_id;
UPDATE trajectories SET failed_read_count = coalesce(failed_read_count, 0), n_candidates = coalesce(n_candidates, 0),
                        n_snippets = coalesce(n_snippets, 0), n_record_judgments = coalesce(n_record_judgments, 0);
