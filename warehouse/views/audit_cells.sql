-- One row per audit cell: models, records, how many were excluded for a gold shorter than 2 characters, failed, and analysable.
CREATE OR REPLACE VIEW audit_cells AS
SELECT cell,
       string_agg(DISTINCT audit_id, ', ') AS audit_ids,
       string_agg(DISTINCT dataset, ', ') AS dataset,
       string_agg(DISTINCT reader_model, ', ') AS reader_model,
       string_agg(DISTINCT compiler_a, ', ') AS compiler_a,
       string_agg(DISTINCT compiler_b, ', ') AS compiler_b,
       count(*) AS n_records,
       count(*) FILTER (excluded_short_gold) AS n_excluded_short_gold,
       count(*) FILTER (has_error AND NOT excluded_short_gold) AS n_failed,
       count(*) FILTER (analysable) AS n_analysable
FROM audit_record_status
GROUP BY cell
ORDER BY cell;
