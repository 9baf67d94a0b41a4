-- Every passage that entered the agent's context (by a read action or by context injection: via), without its text: what the gold reach facts read (14 writes the passages themselves from stage).
CREATE OR REPLACE TEMP TABLE stage_reads AS
SELECT trajectory_id, step_index, p.chunk_id AS chunk_id, kind AS via
FROM (SELECT trajectory_id, step_index, st.kind AS kind, unnest(st.passages) AS p
      FROM (SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st FROM stage)
      WHERE len(st.passages) > 0)
