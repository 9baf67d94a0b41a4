-- A fork of an imported log counts the prefix steps replayed from the parent's own log: stored, so a fork record rebuilt from the warehouse is the logged one.
ALTER TABLE trajectory_forks ADD COLUMN IF NOT EXISTS prefix_log_replays INTEGER;
COMMENT ON COLUMN trajectory_forks.prefix_log_replays IS 'An imported parent: prefix steps answered from its own log (its agent''s calls are in no cache); NULL for a parent trajscope ran.';
