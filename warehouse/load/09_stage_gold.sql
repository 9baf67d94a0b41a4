-- Per (trajectory, gold chunk): first step that retrieved, read or injected it; fixed by the record, so computed once per batch rather than by every query.
CREATE OR REPLACE TEMP TABLE stage_gold AS
WITH gold AS (
    SELECT DISTINCT trajectory_id, unnest(question.gold_chunk_ids) AS chunk_id
    FROM stage WHERE len(question.gold_chunk_ids) > 0
),
seen AS (
    SELECT trajectory_id, chunk_id, min(step_index) AS first_retrieved_step, min(rank) AS best_rank
    FROM stage_candidates WHERE (trajectory_id, chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
    GROUP BY ALL
),
got AS (
    SELECT trajectory_id, chunk_id,
           min(step_index) FILTER (via = 'read')              AS first_read_step,
           min(step_index) FILTER (via = 'context_injection') AS first_injected_step
    FROM stage_reads WHERE (trajectory_id, chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
    GROUP BY ALL
)
SELECT g.trajectory_id, g.chunk_id, s.first_retrieved_step, s.best_rank,
       r.first_read_step, r.first_injected_step
FROM gold g
LEFT JOIN seen s USING (trajectory_id, chunk_id)
LEFT JOIN got r USING (trajectory_id, chunk_id)
