-- One row per decoy: a near-namesake of a gold passage (a non-gold chunk of the same dataset whose title is within two letter edits of it: the demo set's decoys, 2Wiki's Lothair I / Lothair II), or a paragraph the dataset itself marks as a question's distractor (kind says which).
CREATE OR REPLACE VIEW decoy_passages AS
-- Near-namesake: case-folded titles of at least 5 characters, Levenshtein distance 1 or 2. Compared
-- only within a block of the same first letter and a length within 2, which every such pair shares.
-- Dataset distractor: a chunk of questions.distractor_chunk_ids (HotpotQA / 2Wiki context paragraphs
-- no supporting fact names, MuSiQue is_supporting false), kept as the source marked it, per question;
-- it imitates no one gold passage, so its gold columns are NULL.
WITH gold AS (
    SELECT DISTINCT g.dataset, g.chunk_id, c.title, lower(c.title) AS folded
    FROM (SELECT dataset, unnest(gold_chunk_ids) AS chunk_id FROM questions) g
    JOIN chunks c ON c.dataset = g.dataset AND c.chunk_id = g.chunk_id
    WHERE length(c.title) >= 5
),
golds_of AS (
    SELECT DISTINCT dataset, unnest(gold_chunk_ids) AS chunk_id FROM questions
),
corpus AS (
    SELECT c.dataset, c.chunk_id, c.title, lower(c.title) AS folded
    FROM chunks c
    WHERE length(c.title) >= 5 AND c.dataset IN (SELECT dataset FROM gold)
)
SELECT g.dataset, g.chunk_id AS gold_chunk_id, g.title AS gold_title, d.chunk_id AS decoy_chunk_id,
       d.title AS decoy_title, levenshtein(g.folded, d.folded) AS distance,
       'near_namesake' AS kind, NULL::VARCHAR AS question_id
FROM gold g
JOIN corpus d ON d.dataset = g.dataset AND left(d.folded, 1) = left(g.folded, 1)
     AND abs(length(d.folded) - length(g.folded)) <= 2 AND d.chunk_id <> g.chunk_id
WHERE levenshtein(g.folded, d.folded) BETWEEN 1 AND 2
  AND (d.dataset, d.chunk_id) NOT IN (SELECT (dataset, chunk_id) FROM golds_of)
UNION ALL
SELECT m.dataset, NULL AS gold_chunk_id, NULL AS gold_title, m.chunk_id AS decoy_chunk_id, c.title AS decoy_title,
       NULL AS distance, 'dataset_distractor' AS kind, m.question_id
FROM (SELECT DISTINCT dataset, question_id, unnest(distractor_chunk_ids) AS chunk_id
      FROM questions WHERE len(distractor_chunk_ids) > 0) m
LEFT JOIN chunks c ON c.dataset = m.dataset AND c.chunk_id = m.chunk_id;
COMMENT ON COLUMN decoy_passages.dataset IS 'Dataset key (chunks.dataset).';
COMMENT ON COLUMN decoy_passages.gold_chunk_id IS 'A gold passage of some question of the dataset, the one a near-namesake imitates (NULL for a dataset_distractor).';
COMMENT ON COLUMN decoy_passages.gold_title IS 'Its title (NULL for a dataset_distractor).';
COMMENT ON COLUMN decoy_passages.decoy_chunk_id IS 'The decoy: a chunk that is no question''s gold passage with a near-namesake title, or a paragraph the dataset marks as the question''s distractor.';
COMMENT ON COLUMN decoy_passages.decoy_title IS 'The decoy''s title (NULL: the corpus is not loaded or the chunk has none).';
COMMENT ON COLUMN decoy_passages.distance IS 'Levenshtein distance of the case-folded titles (1 or 2); NULL for a dataset_distractor.';
COMMENT ON COLUMN decoy_passages.kind IS 'near_namesake (a title within two edits of a gold passage''s) or dataset_distractor (the dataset marks it: a context paragraph that is not supporting).';
COMMENT ON COLUMN decoy_passages.question_id IS 'For a dataset_distractor, the question whose source marks it; NULL for a near_namesake (a decoy of every question with that gold passage).';
