-- One row per (trajectory, decoy of one of its gold passages that reached it): when the agent first retrieved and read the near-namesake passage, and whether its final answer came from it.
CREATE OR REPLACE VIEW trajectory_decoys AS
-- A decoy is decoy_passages' near-namesake of one of the question's gold passages. The final answer
-- came from the decoy when the decoy's text names it and the imitated gold passage's text does not
-- (names_entity), and the decoy had reached the agent (retrieved or read) before.
WITH met AS (
    SELECT g.trajectory_id, t.run_id, t.question_id, t.dataset, g.chunk_id AS gold_chunk_id, d.decoy_chunk_id,
           d.gold_title, d.decoy_title, t.final_answer
    FROM gold_evidence_facts g
    JOIN trajectories t USING (trajectory_id)
    JOIN decoy_passages d ON d.dataset = t.dataset AND d.gold_chunk_id = g.chunk_id
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
)
SELECT m.trajectory_id, m.run_id, m.question_id, m.dataset, m.gold_chunk_id, m.gold_title,
       list_position(q.gold_chunk_ids, m.gold_chunk_id)                   AS gold_hop,
       m.decoy_chunk_id, m.decoy_title, s.retrieved_step, s.best_rank, r.read_step,
       r.read_step IS NOT NULL                                            AS read_decoy,
       coalesce(s.retrieved_step IS NOT NULL OR r.read_step IS NOT NULL, false)
           AND coalesce(trim(m.final_answer), '') <> ''
           AND names_entity(dc.text, m.final_answer)
           AND NOT coalesce(names_entity(gc.text, m.final_answer), false)  AS answered_from_decoy
FROM met m
LEFT JOIN seen s ON s.trajectory_id = m.trajectory_id AND s.chunk_id = m.decoy_chunk_id
LEFT JOIN got r ON r.trajectory_id = m.trajectory_id AND r.chunk_id = m.decoy_chunk_id
LEFT JOIN questions q ON q.dataset = m.dataset AND q.question_id = m.question_id
LEFT JOIN chunks dc ON dc.dataset = m.dataset AND dc.chunk_id = m.decoy_chunk_id
LEFT JOIN chunks gc ON gc.dataset = m.dataset AND gc.chunk_id = m.gold_chunk_id
WHERE s.retrieved_step IS NOT NULL OR r.read_step IS NOT NULL;
COMMENT ON COLUMN trajectory_decoys.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_decoys.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_decoys.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_decoys.dataset IS 'Dataset key of the trajectory.';
COMMENT ON COLUMN trajectory_decoys.gold_chunk_id IS 'The gold passage the decoy imitates.';
COMMENT ON COLUMN trajectory_decoys.gold_title IS 'Its title.';
COMMENT ON COLUMN trajectory_decoys.gold_hop IS 'The gold passage''s position in the question''s gold list (its hop where the dataset states an order).';
COMMENT ON COLUMN trajectory_decoys.decoy_chunk_id IS 'The near-namesake passage (decoy_passages).';
COMMENT ON COLUMN trajectory_decoys.decoy_title IS 'The decoy''s title.';
COMMENT ON COLUMN trajectory_decoys.retrieved_step IS 'First search step that listed the decoy (NULL: never).';
COMMENT ON COLUMN trajectory_decoys.best_rank IS 'Best rank the decoy reached (NULL: never listed).';
COMMENT ON COLUMN trajectory_decoys.read_step IS 'First step that read or injected the decoy (NULL: never).';
COMMENT ON COLUMN trajectory_decoys.read_decoy IS 'The agent read (or was given) the decoy.';
COMMENT ON COLUMN trajectory_decoys.answered_from_decoy IS 'The final answer is named in the decoy''s text and not in the imitated gold passage''s, and the decoy had reached the agent.';
