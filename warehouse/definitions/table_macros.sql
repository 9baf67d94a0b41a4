-- Table macros over the base tables, read by fact fills and views alike; installed after the migrations and the measure macros (DuckDB binds a table macro's tables when it is created).
-- Per (trajectory, register item): its last status, every chunk cited for it, how many are gold passages that reached the agent, and whether it is a false resolution; read by the view register_item_resolution and the stored trajectory_signals.
-- ExecutionRAG App. E counts a false resolution when "the register marks the question sufficiently answered despite
-- remaining evidence gaps"; trajscope judges it per item: an item whose last status is resolved while none of the
-- evidence it cites is a gold passage the agent retrieved, read or was given. An item that cites its gold passage is
-- not falsely resolved even if another hop's gold passage is missing, so a wrong answer with every item properly
-- resolved but a gold passage never retrieved stays missing evidence. Undefined (NULL) when the question has no gold
-- passages.
CREATE OR REPLACE MACRO register_item_resolution_rows() AS TABLE
WITH items AS (
    SELECT trajectory_id, item_id,
           arg_max(to_status, event_index) FILTER (to_status IS NOT NULL)       AS status,
           arg_max(sub_question, event_index) FILTER (sub_question IS NOT NULL) AS sub_question,
           list_distinct(flatten(list(supporting_chunk_ids)))                   AS supporting_chunk_ids
    FROM register_events
    GROUP BY trajectory_id, item_id
),
cited_gold AS (
    SELECT c.trajectory_id, c.item_id, count(DISTINCT c.chunk_id) AS n_gold_cited
    FROM (SELECT trajectory_id, item_id, unnest(supporting_chunk_ids) AS chunk_id FROM items) c
    JOIN gold_evidence_facts g ON g.trajectory_id = c.trajectory_id AND g.chunk_id = c.chunk_id
    WHERE g.first_retrieved_step IS NOT NULL OR g.first_read_step IS NOT NULL OR g.first_injected_step IS NOT NULL
    GROUP BY ALL
)
SELECT i.trajectory_id, t.run_id, i.item_id, i.sub_question, i.status, i.supporting_chunk_ids,
       coalesce(c.n_gold_cited, 0)                                   AS n_gold_cited,
       CASE WHEN t.n_gold > 0 THEN i.status = 'resolved' AND coalesce(c.n_gold_cited, 0) = 0 END
                                                                     AS false_resolution
FROM items i
JOIN trajectories t USING (trajectory_id)
LEFT JOIN cited_gold c USING (trajectory_id, item_id);
