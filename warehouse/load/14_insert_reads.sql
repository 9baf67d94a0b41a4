-- The batch's read and injected passages (via: the step's kind), straight from the staged records.
INSERT INTO reads BY NAME
SELECT trajectory_id, step_index, passage_index, p.chunk_id AS chunk_id, p.text AS text, p.is_new AS is_new,
       kind AS via
FROM (SELECT trajectory_id, step_index, st.kind AS kind,
             unnest(range(len(st.passages))) AS passage_index, unnest(st.passages) AS p
      FROM (SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st FROM stage)
      WHERE len(st.passages) > 0)
