-- Every search candidate of the batch (chunk id, rank, score, retriever, snippet).
CREATE OR REPLACE TEMP TABLE stage_candidates AS
SELECT trajectory_id, step_index, c.chunk_id AS chunk_id, c.rank AS rank, c.score AS score,
       c.retriever AS retriever, c.snippet AS snippet
FROM (SELECT trajectory_id, step_index, unnest(st.candidates) AS c FROM stage_steps
      WHERE len(st.candidates) > 0)
