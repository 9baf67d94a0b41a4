-- The batch's trajectories (10_stage_trajectories.sql).
INSERT INTO trajectories BY NAME SELECT * FROM stage_trajectories
