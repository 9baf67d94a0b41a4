-- One row per (trajectory, decoy of its question that reached it: a near-namesake of a gold passage, or a paragraph the dataset marks as its distractor): when the agent first retrieved and read it, and whether its final answer came from it.
CREATE OR REPLACE VIEW trajectory_decoys AS
-- A decoy is one of decoy_passages: a near-namesake of one of the question's gold passages, or a
-- paragraph the question's dataset marks as its distractor. The final answer came from the decoy when
-- the decoy's text names it and the gold text does not (names_entity: the imitated gold passage's for a
-- near-namesake, any of the question's gold passages' for a dataset distractor), and the decoy had
-- reached the agent (retrieved or read) before.
WITH decoys AS MATERIALIZED (
    SELECT * FROM decoy_passages
),
met AS (
    SELECT g.trajectory_id, t.run_id, t.question_id, t.dataset, g.chunk_id AS gold_chunk_id, d.decoy_chunk_id,
           d.gold_title, d.decoy_title, t.final_answer, d.kind
    FROM gold_evidence_facts g
    JOIN trajectories t USING (trajectory_id)
    JOIN decoys d ON d.kind = 'near_namesake' AND d.dataset = t.dataset AND d.gold_chunk_id = g.chunk_id
    UNION ALL
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, NULL AS gold_chunk_id, d.decoy_chunk_id,
           NULL AS gold_title, d.decoy_title, t.final_answer, d.kind
    FROM trajectories t
    JOIN decoys d ON d.kind = 'dataset_distractor' AND d.dataset = t.dataset AND d.question_id = t.question_id
),
seen AS (
    SELECT c.trajectory_id, c.chunk_id, min(c.step_index) AS retrieved_step, min(c.rank) AS best_rank
    FROM candidates c WHERE (c.trajectory_id, c.chunk_id) IN (SELECT (trajectory_id, decoy_chunk_id) FROM met)
    GROUP BY ALL
),
got AS (
    SELECT r.trajectory_id, r.chunk_id, min(r.step_index) AS read_step
    FROM reads r WHERE (r.trajectory_id, r.chunk_id) IN (SELECT (trajectory_id, decoy_chunk_id) FROM met)
    GROUP BY ALL
),
gold_names AS (
    -- For dataset distractors: does any gold passage of the question name the final answer?
    SELECT m.trajectory_id, bool_or(names_entity(c.text, m.final_answer)) AS named
    FROM (SELECT DISTINCT trajectory_id, dataset, final_answer FROM met
          WHERE kind = 'dataset_distractor' AND coalesce(trim(final_answer), '') <> '') m
    JOIN gold_evidence_facts g ON g.trajectory_id = m.trajectory_id
    JOIN chunks c ON c.dataset = m.dataset AND c.chunk_id = g.chunk_id
    GROUP BY m.trajectory_id
)
SELECT m.trajectory_id, m.run_id, m.question_id, m.dataset, m.gold_chunk_id, m.gold_title,
       list_position(q.gold_chunk_ids, m.gold_chunk_id)                   AS gold_hop,
       m.decoy_chunk_id, m.decoy_title, s.retrieved_step, s.best_rank, r.read_step,
       r.read_step IS NOT NULL                                            AS read_decoy,
       coalesce(s.retrieved_step IS NOT NULL OR r.read_step IS NOT NULL, false)
           AND coalesce(trim(m.final_answer), '') <> ''
           AND names_entity(dc.text, m.final_answer)
           AND NOT coalesce(CASE WHEN m.kind = 'near_namesake' THEN names_entity(gc.text, m.final_answer)
                                 ELSE gn.named END, false)               AS answered_from_decoy,
       m.kind                                                             AS decoy_kind
FROM met m
LEFT JOIN seen s ON s.trajectory_id = m.trajectory_id AND s.chunk_id = m.decoy_chunk_id
LEFT JOIN got r ON r.trajectory_id = m.trajectory_id AND r.chunk_id = m.decoy_chunk_id
LEFT JOIN questions q ON q.dataset = m.dataset AND q.question_id = m.question_id
LEFT JOIN chunks dc ON dc.dataset = m.dataset AND dc.chunk_id = m.decoy_chunk_id
LEFT JOIN chunks gc ON gc.dataset = m.dataset AND gc.chunk_id = m.gold_chunk_id
LEFT JOIN gold_names gn ON gn.trajectory_id = m.trajectory_id
WHERE s.retrieved_step IS NOT NULL OR r.read_step IS NOT NULL;
COMMENT ON COLUMN trajectory_decoys.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_decoys.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_decoys.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_decoys.dataset IS 'Dataset key of the trajectory.';
COMMENT ON COLUMN trajectory_decoys.gold_chunk_id IS 'The gold passage a near-namesake imitates (NULL for a dataset distractor, which imitates none).';
COMMENT ON COLUMN trajectory_decoys.gold_title IS 'Its title (NULL for a dataset distractor).';
COMMENT ON COLUMN trajectory_decoys.gold_hop IS 'The gold passage''s position in the question''s gold list (its hop where the dataset states an order); NULL for a dataset distractor.';
COMMENT ON COLUMN trajectory_decoys.decoy_chunk_id IS 'The decoy passage (decoy_passages).';
COMMENT ON COLUMN trajectory_decoys.decoy_title IS 'The decoy''s title.';
COMMENT ON COLUMN trajectory_decoys.retrieved_step IS 'First search step that listed the decoy (NULL: never).';
COMMENT ON COLUMN trajectory_decoys.best_rank IS 'Best rank the decoy reached (NULL: never listed).';
COMMENT ON COLUMN trajectory_decoys.read_step IS 'First step that read or injected the decoy (NULL: never).';
COMMENT ON COLUMN trajectory_decoys.read_decoy IS 'The agent read (or was given) the decoy.';
COMMENT ON COLUMN trajectory_decoys.answered_from_decoy IS 'The final answer is named in the decoy''s text and not in the gold text (the imitated gold passage''s; for a dataset distractor, any gold passage''s of the question), and the decoy had reached the agent.';
COMMENT ON COLUMN trajectory_decoys.decoy_kind IS 'Which decoy: near_namesake (a title within two edits of the gold passage''s) or dataset_distractor (the dataset marks the paragraph as the question''s distractor).';
