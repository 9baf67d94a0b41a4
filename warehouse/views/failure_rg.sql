-- Read-Gate taxonomy: one row per wrong trajectory and entity extractor, labelled discipline > post_gold_read > retrieval > ambiguity, with the discipline sub-type.
-- Runs without a read action (vanilla RAG, direct answer) have no discipline branch; their post-gold test is the gold placed in the prompt.
CREATE OR REPLACE VIEW failure_rg AS
WITH signals AS (
    SELECT f.* REPLACE (CASE WHEN p.read_action THEN f.any_gold_read
                             ELSE f.n_gold_reached > 0 END AS any_gold_read),
           x.extractor, p.read_action, ec.coverage AS entity_coverage, ec.n_entities,
           ec.trajectory_id IS NOT NULL                                                  AS coverage_computed,
           p.read_action AND f.read_count = 0                                            AS no_read,
           p.read_action AND coalesce(f.answer_in_snippets AND NOT f.answer_in_reads, false) AS snippet_only,
           p.read_action AND is_low_evidence(ec.coverage)                                AS low_evidence
    FROM trajectory_forensics f
    JOIN run_protocol p USING (run_id)
    CROSS JOIN entity_extractors() x
    LEFT JOIN entity_coverage ec
           ON ec.trajectory_id = f.trajectory_id AND ec.record_hash = f.record_hash
          AND ec.extractor = x.extractor
    WHERE f.correct = false
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count, extractor,
       CASE WHEN no_read OR snippet_only OR low_evidence THEN 'discipline'
            WHEN any_gold_read THEN 'post_gold_read'
            WHEN n_gold > 0 AND NOT all_gold_retrieved THEN 'retrieval'
            ELSE 'ambiguity' END                                     AS label,
       CASE WHEN no_read THEN 'no_read_final'
            WHEN snippet_only THEN 'snippet_only_final'
            WHEN low_evidence THEN 'low_evidence_final' END          AS discipline_subtype,
       no_read OR snippet_only OR low_evidence                       AS is_discipline,
       any_gold_read                                                 AS is_post_gold_read,
       no_read, snippet_only, low_evidence, read_action, entity_coverage, n_entities,
       read_count, n_gold, n_gold_retrieved, n_gold_read,
       coverage_computed, answer_checked, correct_by
FROM signals;
