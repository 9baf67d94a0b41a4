-- One row per (trajectory, scope): whether every gold passage (scope all) or hop k's passage (scope hop) reached each funnel stage; the unit that two runs are paired on (one row per question and scope).
CREATE OR REPLACE VIEW evidence_funnel_question AS
-- scope 'all': a stage holds when it holds for every gold passage of the question (bool_and; NULL
-- when the stage does not apply to the log). scope 'hop': the hop's own passage. One row per
-- question and scope, so a paired test across runs counts independent questions, not passages.
-- The all-hops row is funnel_stage_all of the trajectory's stored stage counts (trajectory_funnel_facts,
-- computed at load from evidence_funnel_facts) under the run's capabilities: the bool_and of evidence_funnel's
-- own stages, without grouping every hop of the runs a page pairs.
SELECT s.trajectory_id, s.run_id, s.question_id, s.dataset, s.question_type, 'all' AS scope, NULL::BIGINT AS hop,
       funnel_stage_all(s.funnel_queried, s.funnel_hops, true)                     AS queried,
       funnel_stage_all(s.funnel_retrieved, s.funnel_hops, rc.search_candidates)   AS retrieved,
       funnel_stage_all(s.funnel_shown, s.funnel_hops, rc.search_candidates)       AS snippet_shown,
       funnel_stage_all(s.funnel_read, s.funnel_hops, rc.read_action)              AS read,
       funnel_stage_all(s.funnel_used, s.funnel_hops, true)                        AS used
FROM trajectory_funnel_facts s
LEFT JOIN run_capabilities rc ON rc.run_id = s.run_id
WHERE s.funnel_hops > 0
UNION ALL
SELECT trajectory_id, run_id, question_id, dataset, question_type, 'hop' AS scope, hop,
       queried, retrieved, snippet_shown, read, used
FROM evidence_funnel;
COMMENT ON COLUMN evidence_funnel_question.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN evidence_funnel_question.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN evidence_funnel_question.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN evidence_funnel_question.dataset IS 'Dataset key of the trajectory.';
COMMENT ON COLUMN evidence_funnel_question.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN evidence_funnel_question.scope IS 'all: every gold passage of the question; hop: one hop''s passage (hop says which).';
COMMENT ON COLUMN evidence_funnel_question.hop IS 'Hop position for scope hop (evidence_funnel.hop); NULL for scope all.';
COMMENT ON COLUMN evidence_funnel_question.queried IS 'Queried for (every passage, for scope all); NULL: does not apply.';
COMMENT ON COLUMN evidence_funnel_question.retrieved IS 'Retrieved (every passage, for scope all); NULL: no candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel_question.snippet_shown IS 'Shown within the top-k (every passage, for scope all); NULL: no candidate chunk ids.';
COMMENT ON COLUMN evidence_funnel_question.read IS 'Read or injected (every passage, for scope all); NULL: no read action.';
COMMENT ON COLUMN evidence_funnel_question.used IS 'Used (every passage, for scope all).';
