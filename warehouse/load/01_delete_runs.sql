-- Runs of the batch are replaced whole: the newest settings seen for a run id win.
DELETE FROM runs WHERE run_id IN (SELECT DISTINCT run.run_id FROM stage)
