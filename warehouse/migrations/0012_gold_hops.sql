-- Hop order and hop entities of a question's gold passages (evidence funnel); NULL / empty for rows loaded before, and the funnel then orders hops by first appearance.
ALTER TABLE questions ADD COLUMN IF NOT EXISTS gold_order VARCHAR;
ALTER TABLE questions ADD COLUMN IF NOT EXISTS gold_hops STRUCT(chunk_id VARCHAR, entity VARCHAR, answers VARCHAR[])[];
COMMENT ON COLUMN questions.gold_order IS 'Where the reasoning order of gold_chunk_ids comes from: decomposition (MuSiQue), evidence (2Wiki triples), supporting_facts (HotpotQA), chain (the writer lists its gold chain in order); NULL: no order stated, hops ordered by first appearance.';
COMMENT ON COLUMN questions.gold_hops IS 'Per gold chunk, in gold_chunk_ids order: the bridge entity a query names it by and the entities it yields (answers); empty when the dataset names none.';
