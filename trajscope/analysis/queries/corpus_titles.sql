-- The warehouse's titled chunks, text left out: what an import matches passages known only by title against (unique titles).
SELECT dataset, chunk_id, title FROM chunks WHERE title IS NOT NULL ORDER BY dataset, chunk_id
