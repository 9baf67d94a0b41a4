-- One row per (gold passage, near-namesake passage) in a corpus: a non-gold chunk of the same dataset whose title is within two letter edits of a gold passage's title (the demo set's decoys, 2Wiki's Lothair I / Lothair II).
CREATE OR REPLACE VIEW decoy_passages AS
-- Near-namesake: case-folded titles of at least 5 characters, Levenshtein distance 1 or 2. Compared
-- only within a block of the same first letter and a length within 2, which every such pair shares.
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
       d.title AS decoy_title, levenshtein(g.folded, d.folded) AS distance
FROM gold g
JOIN corpus d ON d.dataset = g.dataset AND left(d.folded, 1) = left(g.folded, 1)
     AND abs(length(d.folded) - length(g.folded)) <= 2 AND d.chunk_id <> g.chunk_id
WHERE levenshtein(g.folded, d.folded) BETWEEN 1 AND 2
  AND (d.dataset, d.chunk_id) NOT IN (SELECT (dataset, chunk_id) FROM golds_of);
COMMENT ON COLUMN decoy_passages.dataset IS 'Dataset key (chunks.dataset).';
COMMENT ON COLUMN decoy_passages.gold_chunk_id IS 'A gold passage of some question of the dataset.';
COMMENT ON COLUMN decoy_passages.gold_title IS 'Its title.';
COMMENT ON COLUMN decoy_passages.decoy_chunk_id IS 'A chunk that is no question''s gold passage, with a near-namesake title.';
COMMENT ON COLUMN decoy_passages.decoy_title IS 'The decoy''s title.';
COMMENT ON COLUMN decoy_passages.distance IS 'Levenshtein distance of the case-folded titles (1 or 2).';
