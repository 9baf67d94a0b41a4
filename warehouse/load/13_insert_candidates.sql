-- The batch's search candidates.
INSERT INTO candidates BY NAME SELECT * FROM stage_candidates
