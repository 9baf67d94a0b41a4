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
COMMENT ON COLUMN audit_cells.cell IS 'Audit cell: the (reader, compiler, dataset) suite, e.g. S1; the audit id when the log names none.';
COMMENT ON COLUMN audit_cells.audit_ids IS 'Audit ids in the cell, comma-separated.';
COMMENT ON COLUMN audit_cells.dataset IS 'Datasets in the cell, comma-separated (NULL: none recorded).';
COMMENT ON COLUMN audit_cells.reader_model IS 'Reader models in the cell, comma-separated (NULL: none recorded).';
COMMENT ON COLUMN audit_cells.compiler_a IS 'MA compilers in the cell, comma-separated (NULL: none recorded).';
COMMENT ON COLUMN audit_cells.compiler_b IS 'MB compilers in the cell, comma-separated (NULL: none recorded).';
COMMENT ON COLUMN audit_cells.n_records IS 'Audit records in the cell.';
COMMENT ON COLUMN audit_cells.n_excluded_short_gold IS 'Records excluded for a trimmed gold under 2 characters.';
COMMENT ON COLUMN audit_cells.n_failed IS 'Records not excluded whose pipeline or any call failed.';
COMMENT ON COLUMN audit_cells.n_analysable IS 'Records that enter the analysis (not excluded, no failure, a b1 context).';
