-- Steps whose model response came from a response cache (format field Step.cached), and per
-- trajectory how many there were and what they cost when first made, so run views can tell the
-- cost a trajectory represents from the cost a re-run actually incurred. NULL on rows loaded
-- before this migration: re-ingest to fill them.
ALTER TABLE steps ADD COLUMN cached BOOLEAN;
ALTER TABLE trajectories ADD COLUMN cached_calls INTEGER;
ALTER TABLE trajectories ADD COLUMN cached_cost_usd DOUBLE;
