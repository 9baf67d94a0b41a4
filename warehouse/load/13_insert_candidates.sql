-- The batch's search candidates (chunk id, rank, score, retriever, snippet), straight from the staged records.
INSERT INTO candidates BY NAME
SELECT trajectory_id, step_index, c.chunk_id AS chunk_id, c.rank AS rank, c.score AS score,
       c.retriever AS retriever, c.snippet AS snippet
FROM (SELECT trajectory_id, step_index, unnest(st.candidates) AS c
      FROM (SELECT trajectory_id, unnest(range(len(steps))) AS step_index, unnest(steps) AS st FROM stage)
      WHERE len(st.candidates) > 0)
