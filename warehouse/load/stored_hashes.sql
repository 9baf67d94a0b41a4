-- Which of a chunk's line hashes the warehouse holds, and for which trajectory.
SELECT t.record_hash, t.trajectory_id FROM trajectories t SEMI JOIN chunk_hashes c USING (record_hash)
