-- Every search candidate's step, chunk id and rank, and whether it showed a snippet: what the gold reach facts and the trajectory counts read (13 writes the candidates themselves from stage).
CREATE OR REPLACE TEMP TABLE stage_candidates AS
SELECT trajectory_id, step_index, c.chunk_id AS chunk_id, c.rank AS rank,
       coalesce(c.snippet, '') <> '' AS has_snippet
FROM (SELECT trajectory_id, step_index, unnest(st.candidates) AS c
      FROM (SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st FROM stage)
      WHERE len(st.candidates) > 0)
