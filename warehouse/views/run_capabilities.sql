-- Per run, what its log can be measured on (search candidates, snippets, a read action, gold answers, gold passages, judgments), each with where it came from and why; NULL read_action means unknown, and then discipline metrics do not apply.
CREATE OR REPLACE VIEW run_capabilities AS
-- A capability the log recorded (Run.capabilities, importers and the engine) is taken as is; one
-- it left unset is inferred from the run's stored trajectories, so a run loaded in several
-- batches is judged on all of them. read_action is inferred true only from read steps or the
-- controller's own word (config.read_action): an agent that never read could have lacked the tool.
WITH facts AS (
    SELECT t.run_id,
           count(*)                                                         AS n_trajectories,
           count(*) FILTER (t.read_count + coalesce(t.failed_read_count, 0) > 0) AS n_with_reads,
           count(*) FILTER (t.search_count > 0)                             AS n_with_search,
           coalesce(sum(t.n_candidates), 0)                                 AS n_candidates,
           coalesce(sum(t.n_snippets), 0) + coalesce(sum(t.n_search_observations), 0) AS n_snippets,
           count(*) FILTER (t.has_gold_answer)                              AS n_gold_answers,
           count(*) FILTER (t.n_gold > 0)                                   AS n_gold_passages,
           coalesce(sum(t.n_record_judgments), 0)                           AS n_judgments
    -- The trajectories' counts and their questions' gold answers, stored per trajectory at load.
    FROM trajectory_signals t
    GROUP BY t.run_id
),
profile AS (
    SELECT r.run_id, r.capabilities_declared, r.capability_reasons,
           r.cap_search_candidates, r.cap_snippets, r.cap_read_action, r.cap_gold_answers,
           r.cap_gold_passages, r.cap_judgments,
           TRY_CAST(json_extract_string(r.config, '$.read_action') AS BOOLEAN) AS config_read_action,
           coalesce(f.n_trajectories, 0) AS n, coalesce(f.n_with_reads, 0) AS n_with_reads,
           coalesce(f.n_with_search, 0) AS n_with_search, coalesce(f.n_candidates, 0) AS n_candidates,
           coalesce(f.n_snippets, 0) AS n_snippets, coalesce(f.n_gold_answers, 0) AS n_gold_answers,
           coalesce(f.n_gold_passages, 0) AS n_gold_passages, coalesce(f.n_judgments, 0) AS n_judgments
    FROM runs r
    LEFT JOIN facts f USING (run_id)
),
inferred AS (
    SELECT *,
           CASE WHEN n_candidates > 0 THEN true ELSE false END                     AS inf_search_candidates,
           CASE WHEN n_candidates > 0 THEN n_candidates || ' search candidates with chunk ids'
                WHEN n_with_search > 0 THEN 'search steps list no candidate chunk ids'
                ELSE 'no search steps in this log' END                             AS why_search_candidates,
           n_snippets > 0                                                          AS inf_snippets,
           CASE WHEN n_snippets > 0 THEN 'search results carry snippet text'
                ELSE 'no snippet text in any search result' END                    AS why_snippets,
           CASE WHEN config_read_action IS NOT NULL THEN config_read_action
                WHEN n_with_reads > 0 THEN true END                                AS inf_read_action,
           CASE WHEN config_read_action THEN 'the controller has a read action (config.read_action)'
                WHEN NOT config_read_action THEN 'no read action in this log: the controller has none (config.read_action = false)'
                WHEN n_with_reads > 0 THEN n_with_reads || ' of ' || n || ' trajectories have read steps'
                ELSE 'no read action in this log: no read step, and nothing declares one' END AS why_read_action,
           n_gold_answers > 0                                                      AS inf_gold_answers,
           CASE WHEN n_gold_answers > 0 THEN n_gold_answers || ' of ' || n || ' questions have a gold answer'
                ELSE 'no gold answers in this log: correctness, EM and F1 do not apply' END AS why_gold_answers,
           n_gold_passages > 0                                                     AS inf_gold_passages,
           CASE WHEN n_gold_passages > 0 THEN n_gold_passages || ' of ' || n || ' questions have gold passages'
                ELSE 'no gold passages in this log: gold-evidence and post-gold-read measures do not apply' END
                                                                                   AS why_gold_passages,
           n_judgments > 0                                                         AS inf_judgments,
           CASE WHEN n_judgments > 0 THEN n_judgments || ' verdicts carried by the log'
                ELSE 'the log carries no verdicts of its own' END                  AS why_judgments
    FROM profile
)
SELECT run_id,
       coalesce(cap_search_candidates, inf_search_candidates) AS search_candidates,
       coalesce(cap_snippets, inf_snippets)                   AS snippets,
       coalesce(cap_read_action, inf_read_action)            AS read_action,
       coalesce(cap_gold_answers, inf_gold_answers)          AS gold_answers,
       coalesce(cap_gold_passages, inf_gold_passages)        AS gold_passages,
       coalesce(cap_judgments, inf_judgments)                AS judgments,
       CASE WHEN cap_search_candidates IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.search_candidates'), 'recorded by the log') ELSE 'inferred: ' || why_search_candidates END AS search_candidates_reason,
       CASE WHEN cap_snippets IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.snippets'), 'recorded by the log') ELSE 'inferred: ' || why_snippets END AS snippets_reason,
       CASE WHEN cap_read_action IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.read_action'), 'recorded by the log') ELSE 'inferred: ' || why_read_action END AS read_action_reason,
       CASE WHEN cap_gold_answers IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.gold_answers'), 'recorded by the log') ELSE 'inferred: ' || why_gold_answers END AS gold_answers_reason,
       CASE WHEN cap_gold_passages IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.gold_passages'), 'recorded by the log') ELSE 'inferred: ' || why_gold_passages END AS gold_passages_reason,
       CASE WHEN cap_judgments IS NOT NULL THEN coalesce(json_extract_string(capability_reasons, '$.judgments'), 'recorded by the log') ELSE 'inferred: ' || why_judgments END AS judgments_reason,
       coalesce(capabilities_declared, [])                   AS declared,
       list_filter(['search_candidates', 'snippets', 'read_action', 'gold_answers', 'gold_passages', 'judgments'],
                   lambda c, i: [cap_search_candidates, cap_snippets, cap_read_action, cap_gold_answers,
                                 cap_gold_passages, cap_judgments][i] IS NULL) AS inferred,
       CASE WHEN capabilities_declared IS NULL THEN 'inferred at load (the log records no profile)'
            WHEN cap_search_candidates IS NULL OR cap_snippets IS NULL OR cap_read_action IS NULL
              OR cap_gold_answers IS NULL OR cap_gold_passages IS NULL OR cap_judgments IS NULL
            THEN 'recorded by the log, unset capabilities inferred'
            ELSE 'recorded by the log' END                    AS profile_source
FROM inferred;
COMMENT ON COLUMN run_capabilities.search_candidates IS 'Search steps list candidate chunk ids (recorded, else inferred from the stored candidates).';
COMMENT ON COLUMN run_capabilities.snippets IS 'Search results carry snippet text.';
COMMENT ON COLUMN run_capabilities.read_action IS 'A read opens a full passage; NULL: unknown (no read step and nothing declares one), and discipline metrics do not apply.';
COMMENT ON COLUMN run_capabilities.gold_answers IS 'Questions carry gold answers; without them correctness, EM and F1 are NULL.';
COMMENT ON COLUMN run_capabilities.gold_passages IS 'Questions carry gold passages; without them gold-evidence and post-gold-read measures are NULL.';
COMMENT ON COLUMN run_capabilities.judgments IS 'The log carries verdicts of its own.';
COMMENT ON COLUMN run_capabilities.read_action_reason IS 'Why read_action holds or not: the recorded reason, or inferred: and the evidence.';
COMMENT ON COLUMN run_capabilities.declared IS 'Capabilities a user, mapping or writer stated.';
COMMENT ON COLUMN run_capabilities.inferred IS 'Capabilities the log left unset, inferred here from the run''s stored trajectories.';
COMMENT ON COLUMN run_capabilities.profile_source IS 'Whether the profile was recorded by the log, partly inferred, or inferred at load.';
COMMENT ON COLUMN run_capabilities.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN run_capabilities.search_candidates_reason IS 'Why search_candidates holds or not: the log''s recorded reason, or inferred: and the evidence.';
COMMENT ON COLUMN run_capabilities.snippets_reason IS 'Why snippets holds or not: the log''s recorded reason, or inferred: and the evidence.';
COMMENT ON COLUMN run_capabilities.gold_answers_reason IS 'Why gold_answers holds or not; the reason shown beside a NULL correctness, EM or F1.';
COMMENT ON COLUMN run_capabilities.gold_passages_reason IS 'Why gold_passages holds or not; the reason shown beside a NULL gold-evidence or post-gold-read measure.';
COMMENT ON COLUMN run_capabilities.judgments_reason IS 'Why judgments holds or not: the log''s recorded reason, or inferred: and the evidence.';
