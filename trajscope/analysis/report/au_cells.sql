-- The audit cells chosen by audit id or cell name ($selection; empty: all): reader, dataset, records and analysable records.
SELECT cell, string_agg(DISTINCT audit_id, ', ') AS audit_ids, string_agg(DISTINCT dataset, ', ') AS dataset,
       string_agg(DISTINCT reader_model, ', ') AS reader_model, count(*) AS n_records,
       count(*) FILTER (analysable) AS n_analysable
FROM audit_record_status
WHERE len($selection) = 0 OR list_contains($selection, audit_id) OR list_contains($selection, cell)
GROUP BY cell
ORDER BY cell
