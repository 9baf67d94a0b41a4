-- Read-Gate taxonomy: one row per wrong trajectory and entity extractor, labelled discipline > post_gold_read > retrieval > ambiguity with the discipline sub-type; a trajectory that did not end on a final is labelled by how it ended (ended_budget, ended_forced_answer, ended_error), and a measure the log cannot support is NULL with its reason (does_not_apply, label_reason).
-- Runs without a known read action (vanilla RAG, direct answer, web agents whose search returns pages) have no discipline branch; their post-gold test is the gold placed in the prompt or the results.
CREATE OR REPLACE VIEW failure_rg AS
WITH signals AS (
    SELECT f.* REPLACE (CASE WHEN f.n_gold = 0 THEN NULL
                             WHEN c.read_action THEN f.any_gold_read
                             ELSE f.n_gold_reached > 0 END AS any_gold_read),
           x.extractor, c.read_action, ec.coverage AS entity_coverage, ec.n_entities,
           is_low_evidence(ec.coverage)                                                  AS below_coverage,
           ec.trajectory_id IS NOT NULL                                                  AS coverage_computed,
           -- Discipline judges a voluntary final of an agent that could read.
           c.read_action IS TRUE AND f.end_reason = 'final'                               AS discipline_applies,
           CASE WHEN c.read_action IS NOT TRUE THEN 'no read action in this log: discipline metrics do not apply'
                WHEN f.end_reason IS DISTINCT FROM 'final'
                THEN 'ended by ' || coalesce(f.end_reason, 'an unknown reason')
                     || ', not a final answer: discipline sub-types do not apply' END     AS does_not_apply
    FROM trajectory_forensics f
    JOIN run_capabilities c USING (run_id)
    CROSS JOIN entity_extractors() x
    LEFT JOIN entity_coverage ec
           ON ec.trajectory_id = f.trajectory_id AND ec.record_hash = f.record_hash
          AND ec.extractor = x.extractor
    WHERE f.correct = false
),
flags AS (
    SELECT *,
           CASE WHEN discipline_applies THEN read_count = 0 END                                    AS no_read,
           CASE WHEN discipline_applies THEN coalesce(answer_in_snippets AND NOT answer_in_reads, false) END AS snippet_only,
           CASE WHEN discipline_applies THEN below_coverage END            AS low_evidence
    FROM signals
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count, extractor,
       CASE WHEN end_reason IS DISTINCT FROM 'final' THEN 'ended_' || coalesce(end_reason, 'unknown')
            WHEN no_read OR snippet_only OR low_evidence THEN 'discipline'
            WHEN n_gold = 0 THEN NULL
            WHEN any_gold_read THEN 'post_gold_read'
            WHEN NOT all_gold_retrieved THEN 'retrieval'
            ELSE 'ambiguity' END                                     AS label,
       CASE WHEN no_read THEN 'no_read_final'
            WHEN snippet_only THEN 'snippet_only_final'
            WHEN low_evidence THEN 'low_evidence_final' END          AS discipline_subtype,
       no_read OR snippet_only OR low_evidence                       AS is_discipline,
       any_gold_read                                                 AS is_post_gold_read,
       does_not_apply,
       CASE WHEN end_reason = 'final' AND NOT coalesce(no_read OR snippet_only OR low_evidence, false) AND n_gold = 0
            THEN 'no gold passages for this question: post-gold-read, retrieval and ambiguity do not apply' END
                                                                     AS label_reason,
       end_reason,
       no_read, snippet_only, low_evidence, read_action, entity_coverage, n_entities,
       read_count, n_gold, n_gold_retrieved, n_gold_read,
       coverage_computed, answer_checked, correct_by
FROM flags;
COMMENT ON COLUMN failure_rg.label IS 'discipline > post_gold_read > retrieval > ambiguity; ended_budget / ended_forced_answer / ended_error when the trajectory did not end on a final; NULL (see label_reason) without gold passages.';
COMMENT ON COLUMN failure_rg.discipline_subtype IS 'no_read_final, snippet_only_final or low_evidence_final; only for a voluntary final of an agent with a read action.';
COMMENT ON COLUMN failure_rg.is_discipline IS 'Any discipline test fires (multi-label); NULL where discipline does not apply (see does_not_apply).';
COMMENT ON COLUMN failure_rg.is_post_gold_read IS 'A gold passage was read (or, without a read action, placed in the prompt or results); NULL without gold passages.';
COMMENT ON COLUMN failure_rg.does_not_apply IS 'Why the discipline tests are NULL: no read action in the log, or the trajectory did not end on a final.';
COMMENT ON COLUMN failure_rg.label_reason IS 'Why label is NULL: the question has no gold passages.';
COMMENT ON COLUMN failure_rg.read_count IS 'Read steps that returned a passage.';
