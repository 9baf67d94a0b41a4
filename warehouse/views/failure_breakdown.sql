-- Failure labels of both taxonomies per run and dataset, overall and sliced by question type and by hop count, with shares of each slice's failures.
CREATE OR REPLACE VIEW failure_breakdown AS
-- Each taxonomy is a literal in its own branch and the slices are unnested from one scan, so a
-- query's filters on run_id, taxonomy and slice reach the label views and prune whole branches
-- (a page asking for one taxonomy computes only that one).
WITH labelled AS (
    SELECT run_id, dataset, question_type, hop_count, 'read_gate:regex' AS taxonomy, label
    FROM failure_rg WHERE extractor = 'regex'
    UNION ALL
    SELECT run_id, dataset, question_type, hop_count, 'read_gate:spacy' AS taxonomy, label
    FROM failure_rg WHERE extractor = 'spacy'
    UNION ALL
    SELECT run_id, dataset, question_type, hop_count, 'execution_rag' AS taxonomy, label
    FROM failure_erag
),
sliced AS (
    -- Parallel unnests pair up element by element: one row per slice of each failure.
    SELECT run_id, dataset, taxonomy, label,
           unnest(['all', 'question_type', 'hop_count'])                             AS slice,
           unnest(['all', coalesce(question_type, '(none)'),
                   coalesce(CAST(hop_count AS VARCHAR), '(none)')])                  AS slice_value
    FROM labelled
)
SELECT run_id, dataset, taxonomy, slice, slice_value, label,
       count(*)                                                                       AS n,
       sum(count(*)) OVER (PARTITION BY run_id, dataset, taxonomy, slice, slice_value) AS n_failures,
       count(*) / sum(count(*)) OVER (PARTITION BY run_id, dataset, taxonomy, slice, slice_value) AS share
FROM sliced
GROUP BY run_id, dataset, taxonomy, slice, slice_value, label;
COMMENT ON COLUMN failure_breakdown.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN failure_breakdown.dataset IS 'Dataset key of the failures (trajectories.dataset).';
COMMENT ON COLUMN failure_breakdown.taxonomy IS 'read_gate:regex, read_gate:spacy (Read-Gate labels by entity extractor) or execution_rag.';
COMMENT ON COLUMN failure_breakdown.slice IS 'all, question_type or hop_count.';
COMMENT ON COLUMN failure_breakdown.slice_value IS 'The slice''s value: all, the question type or hop count, or (none) when the dataset gives none.';
COMMENT ON COLUMN failure_breakdown.label IS 'The failure label of that taxonomy (failure_rg.label or failure_erag.label; NULL: a Read-Gate failure without gold passages, see failure_rg.label_reason).';
COMMENT ON COLUMN failure_breakdown.n IS 'Failures with this label in the slice.';
COMMENT ON COLUMN failure_breakdown.n_failures IS 'All failures of the taxonomy in the slice (wrong trajectories, every label): the denominator of share.';
COMMENT ON COLUMN failure_breakdown.share IS 'n / n_failures.';
