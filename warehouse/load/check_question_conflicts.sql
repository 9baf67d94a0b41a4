-- Question keys whose facts (text, gold answer, aliases, type, hops, gold chunks) differ between the batch's runs or between the batch and a question another stored run uses: one row per side, among the keys question_conflict_keys.sql found.
WITH incoming AS (
    SELECT key_dataset AS dataset, question.question_id AS question_id, run.run_id AS run_id,
           question.text AS text, question.gold_answer AS gold_answer,
           list_sort(coalesce(question.aliases, [])) AS aliases, question.question_type AS question_type,
           question.hop_count AS hop_count, list_sort(coalesce(question.gold_chunk_ids, [])) AS gold_chunk_ids,
           question.gold_paragraphs AS gold_paragraphs
    FROM stage
    WHERE (key_dataset, question.question_id) IN (SELECT (dataset, question_id) FROM question_conflict_keys)
),
incoming_facts AS (
    SELECT dataset, question_id, text, gold_answer, aliases, question_type, hop_count, gold_chunk_ids,
           gold_paragraphs, list(DISTINCT run_id ORDER BY run_id) AS run_ids, [$source_file] AS files,
           'incoming' AS side
    FROM incoming GROUP BY ALL
),
-- A stored question counts only while a stored trajectory uses it: the batch's own earlier
-- versions were deleted before staging, so what is left belongs to other runs.
stored_facts AS (
    SELECT q.dataset, q.question_id, q.text, q.gold_answer, list_sort(coalesce(q.aliases, [])) AS aliases,
           q.question_type, q.hop_count, list_sort(coalesce(q.gold_chunk_ids, [])) AS gold_chunk_ids,
           q.gold_paragraphs, list(DISTINCT t.run_id ORDER BY t.run_id) AS run_ids,
           list(DISTINCT coalesce(t.source_file, '?') ORDER BY coalesce(t.source_file, '?')) AS files,
           'stored' AS side
    FROM questions q
    JOIN trajectories t ON t.dataset = q.dataset AND t.question_id = q.question_id
    WHERE (q.dataset, q.question_id) IN (SELECT (dataset, question_id) FROM incoming_facts)
    GROUP BY q.dataset, q.question_id, q.text, q.gold_answer, q.aliases, q.question_type, q.hop_count,
             q.gold_chunk_ids, q.gold_paragraphs
),
sides AS (
    SELECT * FROM incoming_facts
    UNION ALL
    SELECT * FROM stored_facts
),
conflicting AS (
    SELECT dataset, question_id FROM sides
    GROUP BY dataset, question_id
    HAVING count(DISTINCT (text, gold_answer, aliases, question_type, hop_count, gold_chunk_ids, gold_paragraphs)) > 1
)
SELECT s.dataset, s.question_id, s.side, s.run_ids, s.files, s.text, s.gold_answer, s.aliases,
       s.question_type, s.hop_count, s.gold_chunk_ids, s.gold_paragraphs,
       count(*) OVER () AS n_sides
FROM sides s
JOIN conflicting c USING (dataset, question_id)
ORDER BY s.dataset, s.question_id, s.side DESC, s.run_ids
