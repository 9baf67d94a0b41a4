-- Supporting paragraphs a question's source names, matched to a corpus chunk or not (ExecutionRAG App. E's denominator of hop-level evidence recall); NULL for rows loaded before.
ALTER TABLE questions ADD COLUMN gold_paragraphs INTEGER;
COMMENT ON COLUMN questions.gold_paragraphs IS 'Supporting paragraphs the source names, matched to a chunk or not: the denominator of hop-level evidence recall (NULL: the source counts none).';
