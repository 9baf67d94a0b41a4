-- Every step's own fields (candidates and passages go to their own tables), straight from the staged records.
INSERT INTO steps BY NAME SELECT * FROM stage_step_rows
