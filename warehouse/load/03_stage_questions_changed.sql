-- The batch's question keys whose stored row it restates with any other fact (gold, hop order, hop entities...): stored trajectories asking them get their evidence funnel facts recomputed with the batch's.
CREATE OR REPLACE TEMP TABLE stage_question_changes AS
SELECT s.dataset, s.question_id
FROM stage_questions s
JOIN questions q ON q.dataset = s.dataset AND q.question_id = s.question_id
WHERE row(s.text, s.gold_answer, s.aliases, s.question_type, s.hop_count, s.gold_chunk_ids, s.gold_match,
          s.gold_paragraphs, s.gold_order, s.gold_hops)
      IS DISTINCT FROM
      row(q.text, q.gold_answer, q.aliases, q.question_type, q.hop_count, q.gold_chunk_ids, q.gold_match,
          q.gold_paragraphs, q.gold_order, q.gold_hops)
