-- While a batch's derived facts are refreshed for its own trajectories alone: temp views named after the stored trajectories, steps, judgments and gold_evidence_facts (a temp view shadows the table of its name) hold the batch's rows, so the derived SQL reads those instead of scanning every stored row (a semi-join on a string id skips no row group); a judgment's created_at is the transaction's start, as its insert stored it.
CREATE OR REPLACE TEMP VIEW trajectories AS SELECT * FROM stage_trajectories;
CREATE OR REPLACE TEMP VIEW steps AS SELECT * FROM stage_step_rows;
CREATE OR REPLACE TEMP VIEW judgments AS SELECT *, current_timestamp AS created_at FROM stage_judgment_rows;
CREATE OR REPLACE TEMP VIEW gold_evidence_facts AS SELECT * FROM stage_gold;
