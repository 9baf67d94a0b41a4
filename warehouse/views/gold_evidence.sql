-- One row per (trajectory, gold chunk): was it retrieved, read, injected, or seen only as a snippet, and when first.
CREATE OR REPLACE VIEW gold_evidence AS
WITH gold AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, unnest(q.gold_chunk_ids) AS chunk_id
    FROM trajectories t
    JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
),
seen AS (
    SELECT trajectory_id, chunk_id, min(step_index) AS first_retrieved_step, min(rank) AS best_rank
    FROM candidates GROUP BY ALL
),
got AS (
    SELECT trajectory_id, chunk_id,
           min(step_index) FILTER (via = 'read')              AS first_read_step,
           min(step_index) FILTER (via = 'context_injection') AS first_injected_step
    FROM reads GROUP BY ALL
)
SELECT g.trajectory_id, g.run_id, g.question_id, g.dataset, g.chunk_id,
       s.chunk_id IS NOT NULL                 AS retrieved,
       r.first_read_step IS NOT NULL          AS read,
       r.first_injected_step IS NOT NULL      AS injected,
       s.chunk_id IS NOT NULL AND r.first_read_step IS NULL AND r.first_injected_step IS NULL AS snippet_only,
       s.first_retrieved_step, s.best_rank, r.first_read_step, r.first_injected_step
FROM gold g
LEFT JOIN seen s USING (trajectory_id, chunk_id)
LEFT JOIN got r USING (trajectory_id, chunk_id);
