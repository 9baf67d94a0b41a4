-- One row per (method, trajectory): the step, agent and category a method names as the first decisive error; the trivial baselines, trajscope's rules, model attributions and stored rows, in one shape.
CREATE OR REPLACE VIEW step_attributions AS
-- docs/definitions.md, "Agreement with people". A producer adds its method as rows in these seven
-- columns: a branch here for a view (rules from first_decisive_error, models from
-- model_step_attributions), or rows in the step_attribution_rows table; an imported method's label
-- map (method_step_labels) gives its first error. A method that names a
-- step but no agent gets the agent that took the step (NULL in a single-agent log).
WITH last AS (
    SELECT trajectory_id, max(step_index) AS step_index FROM steps GROUP BY trajectory_id
),
speakers AS (
    SELECT trajectory_id, agent, count(*) AS n, min(step_index) AS first_at
    FROM steps WHERE agent IS NOT NULL GROUP BY trajectory_id, agent
),
named AS (
    SELECT 'rules' AS method, f.trajectory_id, f.step_index, CAST(NULL AS VARCHAR) AS agent,
           CAST(NULL AS VARCHAR) AS category, 'rule ' || f.rule AS reason
    FROM first_decisive_error f WHERE f.rule IS NOT NULL
    UNION ALL
    -- Without gold passages the answer-evidence rules name the step, on right answers too.
    SELECT 'rules', a.trajectory_id, a.step_index, NULL, NULL, 'rule ' || a.rule
    FROM first_error_answer_evidence a
    WHERE a.rule IS NOT NULL AND NOT EXISTS (SELECT 1 FROM first_decisive_error f
                                             WHERE f.trajectory_id = a.trajectory_id AND f.rule IS NOT NULL)
    UNION ALL
    SELECT method, trajectory_id, step_index, agent, category, reason FROM model_step_attributions
    UNION ALL
    SELECT method, trajectory_id, step_index, agent, category, reason FROM step_attribution_rows
    UNION ALL
    -- An imported method's label map names its first -1 (trajscope ingest --labels FILE --method NAME).
    SELECT method, trajectory_id, min(step_index), arg_min(agent, step_index), arg_min(category, step_index),
           arg_min(reason, step_index)
    FROM method_step_labels WHERE label = 'error' AND step_index IS NOT NULL GROUP BY method, trajectory_id
)
SELECT 'baseline:first_step' AS method, s.trajectory_id, s.step_index, s.source_ref, s.agent,
       CAST(NULL AS VARCHAR) AS category, 'always the first step' AS reason
FROM steps s WHERE s.step_index = 0
UNION ALL
SELECT 'baseline:final_step', s.trajectory_id, s.step_index, s.source_ref, s.agent, NULL, 'always the final step'
FROM steps s JOIN last l ON l.trajectory_id = s.trajectory_id AND l.step_index = s.step_index
UNION ALL
SELECT 'baseline:most_frequent_agent', trajectory_id, NULL, NULL, first(agent ORDER BY n DESC, first_at), NULL,
       'the agent that took the most steps (ties: the one who spoke first)'
FROM speakers GROUP BY trajectory_id
UNION ALL
SELECT n.method, n.trajectory_id, n.step_index, s.source_ref, coalesce(n.agent, s.agent), n.category, n.reason
FROM named n LEFT JOIN steps s ON s.trajectory_id = n.trajectory_id AND s.step_index = n.step_index;

COMMENT ON COLUMN step_attributions.method IS 'Who names the step: baseline:first_step, baseline:final_step, baseline:most_frequent_agent, rules (first_decisive_error, else first_error_answer_evidence), llm:<protocol>:<model> (trajscope attribute), or a stored method.';
COMMENT ON COLUMN step_attributions.trajectory_id IS 'Trajectory attributed.';
COMMENT ON COLUMN step_attributions.step_index IS 'Step named as the first decisive error (NULL: the method names an agent only).';
COMMENT ON COLUMN step_attributions.source_ref IS 'That step''s position in the source log (NULL: none recorded, or no step named).';
COMMENT ON COLUMN step_attributions.agent IS 'Agent held responsible: the method''s own, else the agent that took the named step (NULL: none).';
COMMENT ON COLUMN step_attributions.category IS 'Error category the method names (NULL: it names none; the baselines and rules never do).';
COMMENT ON COLUMN step_attributions.reason IS 'Why: the baseline''s rule, the trajscope rule that fired, or the model''s explanation.';
