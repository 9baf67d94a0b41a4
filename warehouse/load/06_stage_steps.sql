-- Every step of the batch with its position.
CREATE OR REPLACE TEMP TABLE stage_steps AS
SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st
FROM stage
