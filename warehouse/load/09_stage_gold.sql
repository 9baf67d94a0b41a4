-- Per (trajectory, gold chunk): first step that retrieved, showed (within top-k), read or injected it, and its order of first appearance; fixed by the record, so computed once per batch rather than by every query.
CREATE OR REPLACE TEMP TABLE stage_gold AS
WITH gold AS (
    SELECT trajectory_id, chunk_id, min(position) AS position
    FROM (SELECT trajectory_id, unnest(question.gold_chunk_ids) AS chunk_id,
                 generate_subscripts(question.gold_chunk_ids, 1) AS position
          FROM stage WHERE len(question.gold_chunk_ids) > 0)
    GROUP BY trajectory_id, chunk_id
),
top_k AS (
    SELECT DISTINCT trajectory_id, run.retriever.top_k AS top_k FROM stage
),
seen AS (
    -- Shown: listed within the run's top-k (every listed candidate when the run records none).
    SELECT c.trajectory_id, c.chunk_id, min(c.step_index) AS first_retrieved_step, min(c.rank) AS best_rank,
           min(c.step_index) FILTER (c.rank <= coalesce(k.top_k, c.rank)) AS first_shown_step
    FROM stage_candidates c LEFT JOIN top_k k USING (trajectory_id)
    WHERE (c.trajectory_id, c.chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
    GROUP BY ALL
),
got AS (
    SELECT trajectory_id, chunk_id,
           min(step_index) FILTER (via = 'read')              AS first_read_step,
           min(step_index) FILTER (via = 'context_injection') AS first_injected_step
    FROM stage_reads WHERE (trajectory_id, chunk_id) IN (SELECT (trajectory_id, chunk_id) FROM gold)
    GROUP BY ALL
)
SELECT g.trajectory_id, g.chunk_id, s.first_retrieved_step, s.best_rank, s.first_shown_step,
       r.first_read_step, r.first_injected_step,
       -- The evidence funnel's hop for a question without a stated order: order of first appearance
       -- (first step that listed, read or injected it; never-seen ones last, in list order).
       row_number() OVER (PARTITION BY g.trajectory_id
                          ORDER BY least(s.first_retrieved_step, r.first_read_step, r.first_injected_step) NULLS LAST,
                                   g.position) AS appearance_hop
FROM gold g
LEFT JOIN seen s USING (trajectory_id, chunk_id)
LEFT JOIN got r USING (trajectory_id, chunk_id)
