-- Read-Gate taxonomy: one row per wrong trajectory and entity extractor, labelled discipline > post_gold_read > retrieval > ambiguity (RG §3: the four classes partition every wrong trajectory, forced answers included) with the discipline sub-type and, for a trajectory that did not end on a final, how it ended (forced_end: ended_loop_cap, ended_context_budget, ...); a measure the log cannot support is NULL with its reason (does_not_apply, label_reason).
-- Runs without a known read action (vanilla RAG, direct answer, web agents whose search returns pages) have no discipline branch; their post-gold test is the gold placed in the prompt or the results.
CREATE OR REPLACE VIEW failure_rg AS
WITH ran AS (
    SELECT DISTINCT t.run_id, ec.extractor
    FROM entity_coverage ec
    JOIN trajectories t ON t.trajectory_id = ec.trajectory_id AND t.record_hash = ec.record_hash
    WHERE ec.extractor <> gate_extractor()
),
signals AS (
    SELECT f.* REPLACE (CASE WHEN f.n_gold = 0 THEN NULL
                             WHEN c.read_action THEN f.any_gold_read
                             ELSE f.n_gold_reached > 0 END AS any_gold_read),
           x.extractor, c.read_action, ec.coverage AS entity_coverage, ec.n_entities,
           is_low_evidence(ec.coverage)                                                  AS below_coverage,
           ec.trajectory_id IS NOT NULL                                                  AS coverage_computed,
           -- Discipline judges every answer of an agent that could read: an answer forced at the loop cap
           -- or context budget was still given without satisfying the inspection protocol (RG §3).
           c.read_action IS TRUE                                                          AS discipline_applies,
           CASE WHEN c.read_action IS NOT TRUE
                THEN 'no read action in this log: discipline metrics do not apply' END    AS does_not_apply,
           -- Shown: listed within the run's top-k in some search (gold_evidence_facts.first_shown_step), as the
           -- evidence funnel's snippet_shown; a candidate ranked below the top-k was never before the agent.
           coalesce(s.n_gold_shown, 0)                                                    AS n_gold_shown
    FROM trajectory_forensics f
    JOIN run_capabilities c USING (run_id)
    LEFT JOIN (SELECT trajectory_id, count(first_shown_step) AS n_gold_shown
               FROM gold_evidence_facts GROUP BY trajectory_id) s ON s.trajectory_id = f.trajectory_id
    CROSS JOIN entity_extractors() x
    LEFT JOIN entity_coverage ec
           ON ec.trajectory_id = f.trajectory_id AND ec.record_hash = f.record_hash
          AND ec.extractor = x.extractor
    WHERE f.correct = false
      -- A second extractor (spaCy) has rows only for runs it ran on: missing coverage would read as
      -- "not low-evidence" and print a spaCy row, and a kappa, for an extractor that never ran.
      AND (x.extractor = gate_extractor() OR (f.run_id, x.extractor) IN (SELECT (run_id, extractor) FROM ran))
),
flags AS (
    SELECT *,
           CASE WHEN discipline_applies THEN read_count = 0 END                                    AS no_read,
           CASE WHEN discipline_applies THEN coalesce(answer_in_snippets AND NOT answer_in_reads, false) END AS snippet_only,
           CASE WHEN discipline_applies THEN below_coverage END            AS low_evidence
    FROM signals
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, hop_count, extractor,
       CASE WHEN no_read OR snippet_only OR low_evidence THEN 'discipline'
            WHEN n_gold = 0 THEN NULL
            WHEN any_gold_read THEN 'post_gold_read'
            WHEN NOT (all_gold_retrieved AND n_gold_shown >= n_gold) THEN 'retrieval'
            ELSE 'ambiguity' END                                     AS label,
       CASE WHEN no_read THEN 'no_read_final'
            WHEN snippet_only THEN 'snippet_only_final'
            WHEN low_evidence THEN 'low_evidence_final' END          AS discipline_subtype,
       no_read OR snippet_only OR low_evidence                       AS is_discipline,
       any_gold_read                                                 AS is_post_gold_read,
       does_not_apply,
       CASE WHEN NOT coalesce(no_read OR snippet_only OR low_evidence, false) AND n_gold = 0
            THEN 'no gold passages for this question: post-gold-read, retrieval and ambiguity do not apply' END
                                                                     AS label_reason,
       end_reason,
       CASE WHEN end_reason IS DISTINCT FROM 'final' THEN 'ended_' || coalesce(end_reason, 'unknown') END AS forced_end,
       no_read, snippet_only, low_evidence, read_action, entity_coverage, n_entities,
       read_count, n_gold, n_gold_retrieved, n_gold_shown, n_gold_read,
       coverage_computed, answer_checked, correct_by
FROM flags;
COMMENT ON COLUMN failure_rg.label IS 'discipline > post_gold_read > retrieval > ambiguity for every wrong trajectory, a forced answer included (see forced_end); retrieval: some gold passage was never shown within the run''s top-k; NULL (see label_reason) without gold passages.';
COMMENT ON COLUMN failure_rg.discipline_subtype IS 'no_read_final, snippet_only_final or low_evidence_final (the answer, voluntary or forced, of an agent with a read action).';
COMMENT ON COLUMN failure_rg.forced_end IS 'How a trajectory that did not end on a final ended: ended_loop_cap, ended_context_budget, ended_budget, ended_forced_answer or ended_error (a flag beside the label, never a class); NULL for a voluntary final.';
COMMENT ON COLUMN failure_rg.n_gold_shown IS 'Gold passages listed within the run''s top-k by some search (runs.top_k; every listed candidate when none is recorded), as evidence_funnel.snippet_shown.';
COMMENT ON COLUMN failure_rg.is_discipline IS 'Any discipline test fires (multi-label); NULL where discipline does not apply (see does_not_apply).';
COMMENT ON COLUMN failure_rg.is_post_gold_read IS 'A gold passage was read (or, without a read action, placed in the prompt or results); NULL without gold passages.';
COMMENT ON COLUMN failure_rg.does_not_apply IS 'Why the discipline tests are NULL: no read action in the log.';
COMMENT ON COLUMN failure_rg.label_reason IS 'Why label is NULL: the question has no gold passages.';
COMMENT ON COLUMN failure_rg.read_count IS 'Read steps that returned a passage.';
COMMENT ON COLUMN failure_rg.trajectory_id IS 'Trajectory id; only wrong trajectories (correct = false) have rows, one per extractor (the gate''s regex always; spaCy only for runs whose spaCy coverage was computed).';
COMMENT ON COLUMN failure_rg.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN failure_rg.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN failure_rg.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN failure_rg.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN failure_rg.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN failure_rg.extractor IS 'Entity extractor of the low-evidence test: regex or spacy (Read-Gate reports both).';
COMMENT ON COLUMN failure_rg.no_read IS 'No-read final: the agent could read but answered with no read step that returned a passage; NULL where discipline does not apply (see does_not_apply).';
COMMENT ON COLUMN failure_rg.snippet_only IS 'Snippet-only final: the answer occurs in a snippet and in no read passage (false when the answer is unchecked, see answer_checked); NULL where discipline does not apply (see does_not_apply).';
COMMENT ON COLUMN failure_rg.low_evidence IS 'Low-evidence final: read passages cover less than low_evidence_threshold() of the question''s entities (false when coverage is unknown, see coverage_computed); NULL where discipline does not apply (see does_not_apply).';
COMMENT ON COLUMN failure_rg.read_action IS 'The run''s agent has a read action (run_capabilities.read_action; NULL: unknown).';
COMMENT ON COLUMN failure_rg.entity_coverage IS 'Share of the question''s entities found in read passages by this extractor, in [0, 1] (NULL: not computed, see coverage_computed, or the question has no entities).';
COMMENT ON COLUMN failure_rg.n_entities IS 'Entities this extractor found in the question (NULL: not computed, see coverage_computed).';
COMMENT ON COLUMN failure_rg.n_gold IS 'Gold supporting passages of the question (0: none, and the gold-based labels are NULL; see label_reason).';
COMMENT ON COLUMN failure_rg.n_gold_retrieved IS 'Gold passages that appeared among search candidates.';
COMMENT ON COLUMN failure_rg.n_gold_read IS 'Gold passages opened by a read step.';
COMMENT ON COLUMN failure_rg.coverage_computed IS 'trajscope judge has computed entity coverage for this trajectory version and extractor.';
COMMENT ON COLUMN failure_rg.answer_checked IS 'trajscope judge has checked the answer of this trajectory version (abstention, answer in snippets / reads).';
COMMENT ON COLUMN failure_rg.correct_by IS 'Which verdict made it wrong: llm or contain.';
