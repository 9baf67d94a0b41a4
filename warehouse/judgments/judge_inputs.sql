-- Every trajectory of run $run with its question, gold, answer, existing judgments, snippets seen, passages read, controller messages and end reason.
WITH snippets AS (
    SELECT trajectory_id, list(snippet) FILTER (snippet IS NOT NULL) AS snippets
    FROM candidates WHERE trajectory_id IN (SELECT trajectory_id FROM trajectories WHERE run_id = $run)
    GROUP BY trajectory_id
),
read_texts AS (
    SELECT r.trajectory_id, list(coalesce(r.text, c.text)) FILTER (coalesce(r.text, c.text) IS NOT NULL) AS texts
    FROM reads r
    JOIN trajectories t ON t.trajectory_id = r.trajectory_id AND t.run_id = $run
    LEFT JOIN chunks c ON c.dataset = t.dataset AND c.chunk_id = r.chunk_id
    WHERE r.via = 'read'
    GROUP BY r.trajectory_id
),
messages AS (
    -- The environment's own texts (trajscope.format.CONTROLLER_MESSAGE_KINDS): an answer echoing one is no answer.
    SELECT s.trajectory_id,
           list(m ORDER BY s.step_index) FILTER (m IS NOT NULL) AS texts
    FROM steps s
    JOIN trajectories t ON t.trajectory_id = s.trajectory_id AND t.run_id = $run,
         unnest([s.observation, s.message]) AS u(m)
    WHERE s.kind IN ('gate_rejection', 'budget_nudge', 'forced_answer', 'error')
    GROUP BY s.trajectory_id
),
judged AS (
    SELECT trajectory_id, list(DISTINCT judge) AS judges,
           list(DISTINCT judge_model) FILTER (judge = 'llm' AND judge_model IS NOT NULL) AS llm_models
    FROM judgments GROUP BY trajectory_id
)
SELECT t.trajectory_id, t.record_hash, q.text, q.gold_answer, coalesce(q.aliases, []),
       t.final_answer, coalesce(j.judges, []), coalesce(j.llm_models, []),
       coalesce(s.snippets, []), coalesce(r.texts, []), coalesce(m.texts, []), t.end_reason
FROM trajectories t
LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
LEFT JOIN snippets s USING (trajectory_id)
LEFT JOIN read_texts r USING (trajectory_id)
LEFT JOIN judged j USING (trajectory_id)
LEFT JOIN messages m USING (trajectory_id)
WHERE t.run_id = $run
ORDER BY t.trajectory_id
