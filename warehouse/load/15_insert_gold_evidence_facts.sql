-- The batch's per-gold-chunk reach facts.
INSERT INTO gold_evidence_facts BY NAME SELECT * FROM stage_gold
