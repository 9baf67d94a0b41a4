-- One row per wrong trajectory: the first decisive error by trajscope's documented rules (rule, step_index, hop), or which capability the log lacks for a rule (missing_capability, never a guess).
CREATE OR REPLACE VIEW first_decisive_error AS
-- docs/definitions.md, "First decisive error". In order: a run error; then, hop by hop in hop order
-- (evidence_funnel), the first hop whose evidence was lost, by how far it got: never_queried,
-- never_retrieved, ranked_out, not_read; with every hop read: gave_up (trajectory_erag_label's
-- gave_up), other_passage_entity (the final names another passage's entity: a bridge or decoy),
-- else reasoning. A stage a rule needs that the log cannot show stops the walk: rule NULL,
-- missing_capability names it.
-- The walk's capability-free part is stored per trajectory at load (trajectory_funnel_facts.first_unread and
-- answered_hop, warehouse/facts/trajectory_funnel_facts/fill.sql). A passage is read
-- exactly when its read_step is set, whatever the log, so the first lost hop is the first unread one; only its
-- verdict needs the run's capabilities, decided here with the evidence funnel's own stage rule (funnel_stage).
-- The view reads one row per wrong trajectory, not all its hops, and a run or trajectory filter reaches the scan.
WITH wrong AS (
    SELECT l.trajectory_id, l.run_id, l.question_id, l.dataset, l.question_type, l.label AS erag_label,
           l.end_reason, l.n_gold, w.n_steps, w.funnel_final_step AS final_step, w.funnel_hops AS n_hops,
           w.first_unread AS u, w.answered_hop AS bridge,
           funnel_stage(w.first_unread.retrieved_step, rc.search_candidates) AS u_retrieved,
           funnel_stage(w.first_unread.shown_step, rc.search_candidates)     AS u_shown,
           funnel_stage(NULL, rc.read_action)                                AS u_read,
           rc.gold_passages_reason, rc.search_candidates_reason, rc.read_action_reason
    FROM trajectory_erag_label l
    -- run_id too (a trajectory has one): the run filter then prunes this scan as well.
    JOIN trajectory_funnel_facts w ON w.trajectory_id = l.trajectory_id AND w.run_id = l.run_id
    LEFT JOIN run_capabilities rc ON rc.run_id = l.run_id
    WHERE l.correct = false
),
walked AS (
    SELECT * EXCLUDE (u, u_retrieved, u_shown, u_read),
           CASE WHEN u IS NOT NULL THEN
           {'hop': u.hop,
            'verdict': CASE WHEN u_retrieved IS NULL THEN 'missing:search_candidates'
                            WHEN NOT u_retrieved AND NOT u.queried THEN 'never_queried'
                            WHEN NOT u_retrieved THEN 'never_retrieved'
                            WHEN NOT u_shown THEN 'ranked_out'
                            WHEN u_read IS NULL THEN 'missing:read_action'
                            ELSE 'not_read' END,
            'chunk_id': u.chunk_id, 'queried_step': u.queried_step, 'retrieved_step': u.retrieved_step,
            'shown_step': u.shown_step} END                                   AS lost
    FROM wrong
),
decoy_hit AS (
    -- The near-namesake of the earliest hop first, then a dataset-marked distractor (it imitates no hop).
    SELECT trajectory_id, arg_min({'chunk_id': decoy_chunk_id, 'entity': decoy_title, 'hop': gold_hop},
                                  {'no_hop': gold_hop IS NULL, 'hop': coalesce(gold_hop, 0), 'chunk_id': decoy_chunk_id}) AS hit
    FROM trajectory_decoys WHERE answered_from_decoy
    GROUP BY trajectory_id
),
first_error_step AS (
    SELECT trajectory_id, min(step_index) AS error_step FROM steps WHERE kind = 'error' GROUP BY trajectory_id
),
decided AS (
    SELECT w.*, coalesce(w.final_step, w.n_steps - 1) AS last_step, d.hit AS decoy, e.error_step,
           CASE WHEN w.end_reason = 'error' THEN 'run_error'
                WHEN coalesce(w.n_gold, 0) = 0 THEN NULL
                WHEN w.lost IS NOT NULL AND starts_with(w.lost.verdict, 'missing:') THEN NULL
                WHEN w.lost IS NOT NULL THEN w.lost.verdict
                WHEN w.erag_label = 'gave_up' THEN 'gave_up'
                WHEN w.bridge IS NOT NULL OR d.hit IS NOT NULL THEN 'other_passage_entity'
                ELSE 'reasoning' END AS rule
    FROM walked w
    LEFT JOIN decoy_hit d USING (trajectory_id)
    LEFT JOIN first_error_step e USING (trajectory_id)
)
SELECT trajectory_id, run_id, question_id, dataset, question_type, rule,
       CASE rule WHEN 'run_error' THEN coalesce(error_step, n_steps - 1)
                 WHEN 'never_queried' THEN last_step
                 WHEN 'never_retrieved' THEN lost.queried_step
                 WHEN 'ranked_out' THEN lost.retrieved_step
                 WHEN 'not_read' THEN lost.shown_step
                 WHEN 'gave_up' THEN last_step
                 WHEN 'other_passage_entity' THEN last_step
                 WHEN 'reasoning' THEN last_step END                               AS step_index,
       CASE WHEN rule IN ('never_queried', 'never_retrieved', 'ranked_out', 'not_read') OR rule IS NULL THEN lost.hop
            WHEN rule = 'other_passage_entity' THEN coalesce(bridge.hop, decoy.hop) END AS hop,
       n_hops,
       CASE WHEN rule IN ('never_queried', 'never_retrieved', 'ranked_out', 'not_read') OR rule IS NULL THEN lost.chunk_id
            WHEN rule = 'other_passage_entity' THEN coalesce(bridge.chunk_id, decoy.chunk_id) END AS chunk_id,
       CASE WHEN rule = 'other_passage_entity' THEN coalesce(bridge.entity, decoy.entity) END AS answered_entity,
       CASE WHEN rule = 'other_passage_entity' THEN CASE WHEN bridge IS NOT NULL THEN 'bridge' ELSE 'decoy' END END
                                                                                   AS confusion,
       CASE WHEN rule IS NOT NULL THEN NULL
            WHEN coalesce(n_gold, 0) = 0 THEN 'gold_passages'
            ELSE substr(lost.verdict, length('missing:') + 1) END                  AS missing_capability,
       CASE WHEN rule IS NOT NULL THEN NULL
            WHEN coalesce(n_gold, 0) = 0 THEN 'does not apply: no gold passages for this question ('
                                              || coalesce(gold_passages_reason, 'no capability profile') || ')'
            WHEN lost.verdict = 'missing:search_candidates' THEN not_applicable(search_candidates_reason)
            ELSE not_applicable(read_action_reason) END                      AS reason,
       erag_label
FROM decided;
COMMENT ON COLUMN first_decisive_error.trajectory_id IS 'Trajectory id (trajectories.trajectory_id); only wrong trajectories (correct = false).';
COMMENT ON COLUMN first_decisive_error.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN first_decisive_error.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN first_decisive_error.dataset IS 'Dataset key of the trajectory (trajectories.dataset).';
COMMENT ON COLUMN first_decisive_error.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN first_decisive_error.rule IS 'The first rule that holds, in order: run_error, never_queried, never_retrieved, ranked_out, not_read (first lost hop), gave_up, other_passage_entity, reasoning; NULL when the log lacks what a rule needs (missing_capability).';
COMMENT ON COLUMN first_decisive_error.step_index IS 'The decisive step: run_error the first error step; never_retrieved the first query naming the hop; ranked_out the first step listing it below the top-k; not_read the first step showing it; the other rules the final (else last) step. NULL when rule is NULL.';
COMMENT ON COLUMN first_decisive_error.hop IS 'Hop position of the lost passage (evidence_funnel.hop); for other_passage_entity the hop whose entity was answered (the imitated hop for a near-namesake decoy; NULL for a dataset-marked distractor); NULL for run_error, gave_up and reasoning.';
COMMENT ON COLUMN first_decisive_error.n_hops IS 'Gold passages of the question (NULL: none).';
COMMENT ON COLUMN first_decisive_error.chunk_id IS 'The lost gold passage, or the passage whose entity was answered (the decoy for a decoy confusion).';
COMMENT ON COLUMN first_decisive_error.answered_entity IS 'For other_passage_entity: the other passage''s entity the final answer names.';
COMMENT ON COLUMN first_decisive_error.confusion IS 'For other_passage_entity: bridge (an entity of the gold chain that is not the answer) or decoy (a near-namesake passage or a dataset-marked distractor, trajectory_decoys).';
COMMENT ON COLUMN first_decisive_error.missing_capability IS 'When rule is NULL: the capability the log lacks (gold_passages, search_candidates, read_action; run_capabilities).';
COMMENT ON COLUMN first_decisive_error.reason IS 'When rule is NULL: why the rules do not apply (the run_capabilities reason).';
COMMENT ON COLUMN first_decisive_error.erag_label IS 'The ExecutionRAG label of the same trajectory (trajectory_erag_label), for comparison.';
