-- The batch's verdicts (10_stage_judgment_rows.sql); created_at takes its default, the transaction's start.
INSERT INTO judgments BY NAME SELECT * FROM stage_judgment_rows
