-- Per trajectory, its evidence funnel summed without any run capability: how many gold passages reached each stage, and the first-decisive-error walk's first unread hop and answered bridge entity; recomputed for the trajectories listed in the temp table walk_refresh (after their evidence_funnel_facts).
DELETE FROM trajectory_funnel_facts WHERE trajectory_id IN (SELECT trajectory_id FROM walk_refresh);
INSERT INTO trajectory_funnel_facts BY NAME
-- A table of its own, not columns of trajectory_signals: a lake computes each derived table per query, and
-- every page reads the signals, while only first_decisive_error and evidence_funnel_question read this.
-- A passage is read exactly when its read_step is set, on any log, so the first lost hop of the walk is the
-- first unread one; first_decisive_error decides its verdict from the run's capabilities (funnel_stage), and
-- evidence_funnel_question its all-hops stages from the counts (funnel_stage_all).
WITH scope AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.n_steps, t.final_answer, q.question_type,
           q.gold_answer, q.aliases
    FROM trajectories t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    WHERE t.trajectory_id IN (SELECT trajectory_id FROM walk_refresh)
),
hops AS (
    SELECT f.trajectory_id, f.hop, f.chunk_id, f.queried, f.queried_step, f.retrieved_step,
           f.snippet_shown_step, f.read_step, f.used, f.final_step,
           -- Entities of the gold chain other than the answer: the hop's title, bridge entity and what it
           -- yields; the first the final answer names while no gold answer or alias names it or is named by
           -- it (names_entity both ways). (The CASE spares the lambdas a hop that names nothing, or a
           -- trajectory with no final.)
           CASE WHEN s.final_answer IS NOT NULL
                     AND (f.title IS NOT NULL OR f.bridge_entity IS NOT NULL OR len(f.answer_entities) > 0) THEN
           list_filter(list_distinct([f.title, f.bridge_entity] || f.answer_entities),
                       lambda e: names_entity(s.final_answer, e)
                                 AND NOT list_bool_or(list_transform([s.gold_answer] || coalesce(s.aliases, []),
                                                                     lambda a: names_entity(a, e) OR names_entity(e, a))))[1]
           END AS named_entity
    FROM evidence_funnel_facts f
    JOIN scope s ON s.trajectory_id = f.trajectory_id
    WHERE f.trajectory_id IN (SELECT trajectory_id FROM walk_refresh)
),
walked AS (
    SELECT trajectory_id, count(*) AS funnel_hops, count(*) FILTER (queried) AS funnel_queried,
           count(retrieved_step) AS funnel_retrieved, count(snippet_shown_step) AS funnel_shown,
           count(read_step) AS funnel_read, count(*) FILTER (used) AS funnel_used, max(final_step) AS funnel_final_step,
           arg_min({'hop': hop, 'chunk_id': chunk_id, 'queried': queried, 'queried_step': queried_step,
                    'retrieved_step': retrieved_step, 'shown_step': snippet_shown_step}, {'hop': hop, 'chunk_id': chunk_id})
               FILTER (read_step IS NULL)                                   AS first_unread,
           arg_min({'hop': hop, 'chunk_id': chunk_id, 'entity': named_entity}, {'hop': hop, 'chunk_id': chunk_id})
               FILTER (named_entity IS NOT NULL)                            AS answered_hop
    FROM hops
    GROUP BY trajectory_id
)
-- One row per trajectory, with or without gold passages (first_decisive_error reads n_steps for every one).
SELECT s.trajectory_id, s.run_id, s.question_id, s.dataset, s.question_type, s.n_steps,
       w.funnel_hops, w.funnel_queried, w.funnel_retrieved, w.funnel_shown, w.funnel_read, w.funnel_used,
       w.funnel_final_step, w.first_unread, w.answered_hop
FROM scope s
LEFT JOIN walked w ON w.trajectory_id = s.trajectory_id;
