-- Failure labels of both taxonomies per run and dataset, overall and sliced by question type and by hop count, with shares of each slice's failures.
CREATE OR REPLACE VIEW failure_breakdown AS
WITH labelled AS (
    SELECT run_id, dataset, question_type, hop_count, 'read_gate:' || extractor AS taxonomy, label
    FROM failure_rg
    UNION ALL
    SELECT run_id, dataset, question_type, hop_count, 'execution_rag' AS taxonomy, label
    FROM failure_erag
),
sliced AS (
    SELECT run_id, dataset, taxonomy, label, 'all' AS slice, 'all' AS slice_value FROM labelled
    UNION ALL
    SELECT run_id, dataset, taxonomy, label, 'question_type', coalesce(question_type, '(none)') FROM labelled
    UNION ALL
    SELECT run_id, dataset, taxonomy, label, 'hop_count', coalesce(CAST(hop_count AS VARCHAR), '(none)') FROM labelled
)
SELECT run_id, dataset, taxonomy, slice, slice_value, label,
       count(*)                                                                       AS n,
       sum(count(*)) OVER (PARTITION BY run_id, dataset, taxonomy, slice, slice_value) AS n_failures,
       count(*) / sum(count(*)) OVER (PARTITION BY run_id, dataset, taxonomy, slice, slice_value) AS share
FROM sliced
GROUP BY run_id, dataset, taxonomy, slice, slice_value, label;
