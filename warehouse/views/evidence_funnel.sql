-- One row per (trajectory, gold passage), in hop order: was it queried for, retrieved (best rank), shown in the top-k, read, used, and the step where each first happened; a stage the log cannot show is NULL with stage_reason.
CREATE OR REPLACE VIEW evidence_funnel AS
-- Hop order is the dataset's (questions.gold_order: MuSiQue decomposition, 2Wiki evidence triples,
-- HotpotQA supporting facts, a writer's gold chain); a question without one orders its passages by
-- first appearance (gold_evidence_facts.appearance_hop, fixed at load: first step that listed, read
-- or injected it; never-seen ones last, in list order).
-- Texts are put in funnel_words form once per text, then compared pairwise with names_words.
WITH qgold AS (
    -- Per question and gold passage, once (not once per trajectory): position, title, hop facts.
    SELECT p.dataset, p.question_id, p.chunk_id, p.position, p.n_hops, p.gold_order, c.title, h.entity AS bridge_entity,
           -- What the hop yields: the dataset's hop answers; else the gold answer for the last hop of a
           -- stated order, or, without an order, for a passage whose text names the gold answer.
           CASE WHEN len(coalesce(h.answers, [])) > 0 THEN h.answers
                WHEN p.gold_order IS NOT NULL AND p.position = p.n_hops THEN p.gold_names
                WHEN p.gold_order IS NULL AND c.text IS NOT NULL
                     AND list_bool_or(list_transform(p.gold_names, lambda a: names_entity(c.text, a))) THEN p.gold_names
                ELSE [] END                                                    AS answer_entities
    FROM (
        -- A chunk listed twice counts once, at its first position (positions counted over distinct chunks).
        SELECT dataset, question_id, chunk_id, gold_order, gold_names, len(list_distinct(gold_chunk_ids)) AS n_hops,
               CASE WHEN i = 1 THEN 1 ELSE len(list_distinct(gold_chunk_ids[1:i - 1])) + 1 END AS position
        FROM (SELECT dataset, question_id, unnest(gold_chunk_ids) AS chunk_id,
                     generate_subscripts(gold_chunk_ids, 1) AS i, gold_chunk_ids, gold_order,
                     list_filter([gold_answer] || coalesce(aliases, []), lambda a: coalesce(trim(a), '') <> '')
                         AS gold_names
              FROM questions WHERE len(gold_chunk_ids) > 0)
        WHERE list_position(gold_chunk_ids, chunk_id) = i) p
    LEFT JOIN (SELECT dataset, question_id, h.chunk_id, h.entity, h.answers
               FROM (SELECT dataset, question_id, unnest(gold_hops) AS h FROM questions WHERE len(gold_hops) > 0)) h
           ON h.dataset = p.dataset AND h.question_id = p.question_id AND h.chunk_id = p.chunk_id
    LEFT JOIN chunks c ON c.dataset = p.dataset AND c.chunk_id = p.chunk_id
),
qwords AS (
    SELECT *, CASE WHEN title IS NOT NULL THEN funnel_words(title) END         AS title_words,
           CASE WHEN bridge_entity IS NOT NULL THEN funnel_words(bridge_entity) END AS entity_words,
           CASE WHEN len(answer_entities) > 0 THEN list_transform(answer_entities, lambda a: funnel_words(a)) END
                                                                               AS answer_words
    FROM qgold
),
words AS NOT MATERIALIZED (
    SELECT g.trajectory_id, t.run_id, t.question_id, t.dataset, q.question_type, g.chunk_id, w.position, w.n_hops,
           w.gold_order, w.title, w.bridge_entity, coalesce(w.answer_entities, []) AS answer_entities,
           w.title_words, w.entity_words, w.answer_words,
           -- Only passages something can be named by are matched against the trajectory's queries.
           w.title_words IS NOT NULL OR w.entity_words IS NOT NULL OR w.answer_words IS NOT NULL AS nameable,
           t.final_answer, g.first_retrieved_step, g.best_rank, g.first_shown_step, g.appearance_hop, g.first_read_step,
           g.first_injected_step, least(g.first_read_step, g.first_injected_step) AS read_step
    FROM gold_evidence_facts g
    JOIN trajectories t USING (trajectory_id)
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN qwords w ON w.dataset = t.dataset AND w.question_id = t.question_id AND w.chunk_id = g.chunk_id
),
final_step AS (
    SELECT trajectory_id, max(step_index) AS final_step
    FROM steps WHERE kind IN ('final', 'forced_answer')
      AND trajectory_id IN (SELECT trajectory_id FROM gold_evidence_facts)
    GROUP BY trajectory_id
),
query_steps AS (
    SELECT trajectory_id, step_index, funnel_words(query) AS query_words
    FROM steps
    WHERE list_contains(search_kinds(), kind) AND query IS NOT NULL
      AND trajectory_id IN (SELECT trajectory_id FROM words WHERE nameable)
),
query_hits AS (
    SELECT w.trajectory_id, w.chunk_id,
           min(s.step_index) FILTER (names_words(s.query_words, w.title_words)
                                     OR names_words(s.query_words, w.entity_words)) AS queried_step,
           -- Used by the next hop: a later query names what this passage yields (its bridge onward).
           min(s.step_index) FILTER (s.step_index > least(w.read_step, w.first_retrieved_step)
                                     AND list_bool_or(list_transform(w.answer_words,
                                                                     lambda a: names_words(s.query_words, a)))) AS next_query_step
    FROM words w
    JOIN query_steps s ON s.trajectory_id = w.trajectory_id
    WHERE w.nameable
    GROUP BY w.trajectory_id, w.chunk_id
),
resolved AS (
    SELECT trajectory_id, chunk_id, min(step_index) AS resolved_step, count(*) AS n_resolutions
    FROM (SELECT trajectory_id, step_index, unnest(supporting_chunk_ids) AS chunk_id
          FROM register_events WHERE to_status = 'resolved')
    GROUP BY trajectory_id, chunk_id
),
staged AS (
    SELECT w.*, rc.search_candidates, rc.read_action, rc.search_candidates_reason, rc.read_action_reason,
           qh.queried_step, qh.next_query_step, w.first_shown_step AS shown_step, rs.resolved_step, rs.n_resolutions,
           fs.final_step, f.final_names_answer,
           least(rs.resolved_step, qh.next_query_step, CASE WHEN f.final_names_answer THEN fs.final_step END) AS used_step
    FROM words w
    LEFT JOIN run_capabilities rc ON rc.run_id = w.run_id
    LEFT JOIN query_hits qh ON qh.trajectory_id = w.trajectory_id AND qh.chunk_id = w.chunk_id
    LEFT JOIN resolved rs ON rs.trajectory_id = w.trajectory_id AND rs.chunk_id = w.chunk_id
    LEFT JOIN final_step fs ON fs.trajectory_id = w.trajectory_id
    -- The final answer names what the passage yields (only for passages that yield something).
    LEFT JOIN (SELECT trajectory_id, chunk_id,
                      list_bool_or(list_transform(answer_words,
                                                  lambda a: names_words(funnel_words(final_answer), a))) AS final_names_answer
               FROM words WHERE answer_words IS NOT NULL AND final_answer IS NOT NULL) f
           ON f.trajectory_id = w.trajectory_id AND f.chunk_id = w.chunk_id
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, chunk_id, title,
       CASE WHEN gold_order IS NOT NULL THEN position ELSE appearance_hop END AS hop,
       n_hops,
       coalesce(gold_order, 'first_appearance')                               AS hop_order,
       bridge_entity, answer_entities,
       queried_step IS NOT NULL                                               AS queried,
       queried_step,
       CASE WHEN first_retrieved_step IS NOT NULL THEN true
            WHEN search_candidates THEN false END                             AS retrieved,
       first_retrieved_step                                                   AS retrieved_step,
       best_rank,
       CASE WHEN shown_step IS NOT NULL THEN true
            WHEN search_candidates THEN false END                             AS snippet_shown,
       shown_step                                                             AS snippet_shown_step,
       CASE WHEN read_step IS NOT NULL THEN true
            WHEN read_action THEN false END                                   AS read,
       read_step,
       CASE WHEN first_read_step IS NOT NULL AND first_read_step <= coalesce(first_injected_step, first_read_step) THEN 'read'
            WHEN first_injected_step IS NOT NULL THEN 'context_injection' END AS read_via,
       coalesce(n_resolutions, 0) > 0 OR next_query_step IS NOT NULL
           OR coalesce(final_names_answer, false)                             AS used,
       used_step,
       CASE WHEN used_step IS NULL THEN CASE WHEN n_resolutions > 0 THEN 'register' END
            WHEN used_step = resolved_step THEN 'register'
            WHEN used_step = next_query_step THEN 'next_query'
            ELSE 'final' END                                                  AS used_via,
       final_step,
       concat_ws('; ',
           CASE WHEN search_candidates IS NOT true THEN 'retrieved, snippet_shown do not apply: ' || search_candidates_reason END,
           CASE WHEN read_action IS NOT true AND read_step IS NULL THEN 'read does not apply: ' || read_action_reason END) AS stage_reason
FROM staged;
COMMENT ON COLUMN evidence_funnel.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN evidence_funnel.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN evidence_funnel.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN evidence_funnel.dataset IS 'Dataset key of the trajectory (trajectories.dataset).';
COMMENT ON COLUMN evidence_funnel.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN evidence_funnel.chunk_id IS 'The gold passage (a chunk of the question''s gold_chunk_ids).';
COMMENT ON COLUMN evidence_funnel.title IS 'The gold passage''s title (NULL: the corpus is not loaded or the chunk has none).';
COMMENT ON COLUMN evidence_funnel.hop IS 'Hop position from 1: the dataset''s reasoning order, else order of first appearance in the trajectory (hop_order says which).';
COMMENT ON COLUMN evidence_funnel.n_hops IS 'Gold passages of the question (matched chunks).';
COMMENT ON COLUMN evidence_funnel.hop_order IS 'Where hop comes from: decomposition (MuSiQue), evidence (2Wiki triples), supporting_facts (HotpotQA), chain (the writer''s gold chain), or first_appearance (no order stated).';
COMMENT ON COLUMN evidence_funnel.bridge_entity IS 'The entity a query names this hop by besides its title (2Wiki triple subject, MuSiQue previous answer; NULL: the dataset names none).';
COMMENT ON COLUMN evidence_funnel.answer_entities IS 'What the hop yields: the dataset''s hop answers, else the gold answer and aliases for the last hop of a stated order (or, without an order, a passage whose text names the gold answer); [] otherwise.';
COMMENT ON COLUMN evidence_funnel.queried IS 'A search query names the passage''s title or its bridge entity (names_entity).';
COMMENT ON COLUMN evidence_funnel.queried_step IS 'First search step whose query names it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.retrieved IS 'It was listed among search candidates; NULL when the log has no candidate chunk ids (stage_reason).';
COMMENT ON COLUMN evidence_funnel.retrieved_step IS 'First search step that listed it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.best_rank IS 'Best (lowest) candidate rank it reached, from 1 (NULL: never retrieved).';
COMMENT ON COLUMN evidence_funnel.snippet_shown IS 'It was listed within the run''s shown top-k (runs.top_k; every listed candidate when none is recorded), so its snippet was before the agent; NULL without candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel.snippet_shown_step IS 'First search step that listed it within the top-k (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read IS 'Its full text entered the context: a read step, or a context injection; NULL when the log has no read action and it was not injected (stage_reason).';
COMMENT ON COLUMN evidence_funnel.read_step IS 'First step that read or injected it (NULL: never).';
COMMENT ON COLUMN evidence_funnel.read_via IS 'How it first entered the context: read or context_injection (NULL: never).';
COMMENT ON COLUMN evidence_funnel.used IS 'The agent used it: a register item was resolved citing it, a later query names what it yields (answer_entities), or the final answer names what it yields.';
COMMENT ON COLUMN evidence_funnel.used_step IS 'First step of that use (a register event''s step, the later query, or the final step; NULL: not used, or the register event has no step).';
COMMENT ON COLUMN evidence_funnel.used_via IS 'The first use: register, next_query or final (NULL: not used).';
COMMENT ON COLUMN evidence_funnel.final_step IS 'The trajectory''s last final or forced_answer step (NULL: it has none).';
COMMENT ON COLUMN evidence_funnel.stage_reason IS 'Which stages do not apply to this log and why (the run_capabilities reason); NULL when every stage applies.';
