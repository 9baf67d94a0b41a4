-- One row per question key of the batch (the conflict check has made every copy of a key agree).
CREATE OR REPLACE TEMP TABLE stage_questions AS
SELECT key_dataset AS dataset, q.question_id AS question_id, q.text AS text, q.gold_answer AS gold_answer,
       q.aliases AS aliases, q.question_type AS question_type, q.hop_count AS hop_count,
       q.gold_chunk_ids AS gold_chunk_ids, q.gold_match AS gold_match, q.gold_paragraphs AS gold_paragraphs,
       q.gold_order AS gold_order, q.gold_hops AS gold_hops,
       q.distractor_chunk_ids AS distractor_chunk_ids
FROM (SELECT key_dataset, any_value(question) AS q FROM stage GROUP BY key_dataset, question.question_id)
