-- The batch's question keys that may conflict: its runs state different facts for one, or the stored question row states others (used by a stored trajectory or not: check_question_conflicts.sql decides, for these keys only, so a batch with none never joins the stored trajectories).
CREATE OR REPLACE TEMP TABLE question_conflict_keys AS
WITH incoming AS (
    SELECT DISTINCT key_dataset AS dataset, question.question_id AS question_id, question.text AS text,
           question.gold_answer AS gold_answer, list_sort(coalesce(question.aliases, [])) AS aliases,
           question.question_type AS question_type, question.hop_count AS hop_count,
           list_sort(coalesce(question.gold_chunk_ids, [])) AS gold_chunk_ids,
           question.gold_paragraphs AS gold_paragraphs
    FROM stage
)
SELECT dataset, question_id FROM incoming GROUP BY dataset, question_id HAVING count(*) > 1
UNION
SELECT i.dataset, i.question_id
FROM incoming i
JOIN questions q ON q.dataset = i.dataset AND q.question_id = i.question_id
WHERE i.text IS DISTINCT FROM q.text OR i.gold_answer IS DISTINCT FROM q.gold_answer
   OR i.aliases IS DISTINCT FROM list_sort(coalesce(q.aliases, [])) OR i.question_type IS DISTINCT FROM q.question_type
   OR i.hop_count IS DISTINCT FROM q.hop_count
   OR i.gold_chunk_ids IS DISTINCT FROM list_sort(coalesce(q.gold_chunk_ids, []))
   OR i.gold_paragraphs IS DISTINCT FROM q.gold_paragraphs
