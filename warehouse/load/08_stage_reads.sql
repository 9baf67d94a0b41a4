-- Every passage that entered the agent's context, by a read action or by context injection (via).
CREATE OR REPLACE TEMP TABLE stage_reads AS
SELECT trajectory_id, step_index, passage_index, p.chunk_id AS chunk_id, p.text AS text, p.is_new AS is_new,
       kind AS via
FROM (SELECT trajectory_id, step_index, st.kind AS kind,
             unnest(range(len(st.passages))) AS passage_index, unnest(st.passages) AS p
      FROM stage_steps WHERE len(st.passages) > 0)
