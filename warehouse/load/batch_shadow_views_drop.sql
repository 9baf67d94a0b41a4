-- The stored tables visible again once the batch's facts are refreshed.
DROP VIEW IF EXISTS temp.main.trajectories;
DROP VIEW IF EXISTS temp.main.steps;
DROP VIEW IF EXISTS temp.main.judgments;
DROP VIEW IF EXISTS temp.main.gold_evidence_facts;
