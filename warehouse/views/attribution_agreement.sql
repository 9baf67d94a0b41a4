-- Per run with human labels and per attribution method: how often the method names the people's first error (exactly, within 1 and 3 steps), the responsible agent, and how many category pairs there are; NULL with a reason where the method or the labels cannot say.
CREATE OR REPLACE VIEW attribution_agreement AS
-- docs/definitions.md, "Agreement with people". Denominator: the run's trajectories with a human first
-- error (human_first_error); a trajectory the method does not attribute counts as a miss (coverage says
-- how many it did). The uniform random baseline's hits are expected values, computed exactly: a step
-- drawn uniformly from the trajectory's n steps hits with probability 1/n, within k steps with
-- (steps in [g-k, g+k]) / n; an agent drawn from the trajectory's speakers with 1/n_agents.
-- Confidence intervals and Cohen's kappa are computed over these rows by analysis.queries.
WITH gold AS MATERIALIZED (SELECT * FROM human_first_error),
-- Each method's attributions of the labelled trajectories, read once (the view is costly over a whole
-- warehouse, and each reference of it was evaluated anew).
attributed AS MATERIALIZED (
    SELECT * FROM step_attributions WHERE trajectory_id IN (SELECT trajectory_id FROM gold)
),
speakers AS (
    SELECT trajectory_id, list(DISTINCT lower(agent)) AS agents FROM steps
    WHERE agent IS NOT NULL AND trajectory_id IN (SELECT trajectory_id FROM gold) GROUP BY trajectory_id
),
runs AS (
    SELECT run_id, count(*) AS n_labelled, count(agent) AS n_agent_labelled, count(category) AS n_category_labelled
    FROM gold GROUP BY run_id
),
methods AS (
    SELECT r.run_id, m.method FROM runs r CROSS JOIN (VALUES ('baseline:first_step'), ('baseline:final_step'),
        ('baseline:uniform_random'), ('baseline:most_frequent_agent'), ('rules')) m(method)
    UNION
    SELECT DISTINCT g.run_id, a.method FROM gold g JOIN attributed a USING (trajectory_id)
),
scored AS (
    SELECT g.run_id, a.method,
           count(a.step_index)                                                AS n_step_attributed,
           count(*) FILTER (a.step_index = g.step_index)                      AS step_hits,
           count(*) FILTER (abs(a.step_index - g.step_index) <= 1)            AS within1_hits,
           count(*) FILTER (abs(a.step_index - g.step_index) <= 3)            AS within3_hits,
           count(*) FILTER (g.agent IS NOT NULL AND a.agent IS NOT NULL)      AS n_agent_attributed,
           count(*) FILTER (lower(a.agent) = lower(g.agent))                  AS agent_hits,
           count(*) FILTER (g.category IS NOT NULL AND a.category IS NOT NULL) AS n_category_pairs
    FROM gold g JOIN attributed a USING (trajectory_id)
    GROUP BY g.run_id, a.method
),
uniform AS (
    SELECT g.run_id, 'baseline:uniform_random' AS method, count(*) AS n_step_attributed,
           sum(1.0 / g.n_steps) AS step_hits,
           sum((least(g.step_index + 1, g.n_steps - 1) - greatest(g.step_index - 1, 0) + 1) / g.n_steps) AS within1_hits,
           sum((least(g.step_index + 3, g.n_steps - 1) - greatest(g.step_index - 3, 0) + 1) / g.n_steps) AS within3_hits,
           count(*) FILTER (g.agent IS NOT NULL AND s.agents IS NOT NULL) AS n_agent_attributed,
           sum(CASE WHEN list_contains(s.agents, lower(g.agent)) THEN 1.0 / len(s.agents) ELSE 0 END)
               FILTER (g.agent IS NOT NULL AND s.agents IS NOT NULL) AS agent_hits,
           0 AS n_category_pairs
    FROM gold g LEFT JOIN speakers s USING (trajectory_id)
    GROUP BY g.run_id
),
rule_reasons AS (
    SELECT g.run_id, first(f.reason ORDER BY f.trajectory_id) FILTER (f.reason IS NOT NULL) AS reason
    FROM gold g JOIN first_decisive_error f USING (trajectory_id) GROUP BY g.run_id
),
counted AS (
    SELECT m.run_id, m.method, r.n_labelled, r.n_agent_labelled, r.n_category_labelled,
           coalesce(u.n_step_attributed, s.n_step_attributed, 0) AS n_step_attributed,
           CAST(coalesce(u.step_hits, s.step_hits, 0) AS DOUBLE) AS step_hits,
           CAST(coalesce(u.within1_hits, s.within1_hits, 0) AS DOUBLE) AS within1_hits,
           CAST(coalesce(u.within3_hits, s.within3_hits, 0) AS DOUBLE) AS within3_hits,
           coalesce(u.n_agent_attributed, s.n_agent_attributed, 0) AS n_agent_attributed,
           CAST(coalesce(u.agent_hits, s.agent_hits, 0) AS DOUBLE) AS agent_hits,
           coalesce(u.n_category_pairs, s.n_category_pairs, 0) AS n_category_pairs,
           CASE WHEN m.method = 'baseline:most_frequent_agent' THEN 'does not apply: the method names an agent, no step'
                WHEN coalesce(u.n_step_attributed, s.n_step_attributed, 0) > 0 THEN NULL
                WHEN m.method = 'rules' THEN not_applicable(coalesce(rr.reason,
                    CASE WHEN NOT coalesce(c.gold_passages, false)
                         THEN 'the rules need gold passages: ' || coalesce(c.gold_passages_reason, 'none recorded') END,
                    'no labelled trajectory is wrong by a verdict (the rules attribute wrong trajectories; run trajscope judge)'))
                ELSE 'does not apply: the method attributed none of the labelled trajectories' END AS step_reason
    FROM methods m JOIN runs r USING (run_id)
    LEFT JOIN scored s ON s.run_id = m.run_id AND s.method = m.method
    LEFT JOIN uniform u ON u.run_id = m.run_id AND u.method = m.method
    LEFT JOIN rule_reasons rr ON rr.run_id = m.run_id
    LEFT JOIN run_capabilities c ON c.run_id = m.run_id
)
SELECT run_id, method, n_labelled, n_step_attributed,
       n_step_attributed / n_labelled AS coverage,
       CASE WHEN step_reason IS NULL THEN step_hits END AS step_hits,
       CASE WHEN step_reason IS NULL THEN step_hits / n_labelled END AS step_accuracy,
       CASE WHEN step_reason IS NULL THEN within1_hits / n_labelled END AS within1_accuracy,
       CASE WHEN step_reason IS NULL THEN within3_hits / n_labelled END AS within3_accuracy,
       step_reason,
       n_agent_labelled,
       CASE WHEN n_agent_labelled > 0 AND n_agent_attributed > 0 THEN agent_hits END AS agent_hits,
       CASE WHEN n_agent_labelled > 0 AND n_agent_attributed > 0 THEN agent_hits / n_agent_labelled END AS agent_accuracy,
       CASE WHEN n_agent_labelled = 0 THEN 'does not apply: the human labels name no agent'
            WHEN n_agent_attributed = 0 THEN 'does not apply: the method names no agent (no step of the log names its agent)'
            END AS agent_reason,
       n_category_labelled, n_category_pairs,
       CASE WHEN n_category_labelled = 0 THEN 'does not apply: the human labels give no category'
            WHEN n_category_pairs = 0 THEN 'does not apply: the method names no category'
            END AS category_reason,
       within1_hits, within3_hits
FROM counted;

COMMENT ON COLUMN attribution_agreement.run_id IS 'Run whose trajectories carry human labels.';
COMMENT ON COLUMN attribution_agreement.method IS 'Attribution method (step_attributions.method), or baseline:uniform_random (a uniformly drawn step and agent, in expectation).';
COMMENT ON COLUMN attribution_agreement.n_labelled IS 'Trajectories of the run with a human first error (human_first_error): the denominator of every step accuracy.';
COMMENT ON COLUMN attribution_agreement.n_step_attributed IS 'Of those, how many the method names a step for.';
COMMENT ON COLUMN attribution_agreement.coverage IS 'n_step_attributed / n_labelled; an unattributed trajectory counts as a miss.';
COMMENT ON COLUMN attribution_agreement.step_hits IS 'Trajectories where the named step is the people''s first error (expected hits for the uniform baseline); NULL with step_reason.';
COMMENT ON COLUMN attribution_agreement.step_accuracy IS 'Step-level accuracy (Who&When): step_hits / n_labelled; NULL with step_reason.';
COMMENT ON COLUMN attribution_agreement.within1_accuracy IS 'Share of labelled trajectories whose named step is within 1 step of the first error; NULL with step_reason.';
COMMENT ON COLUMN attribution_agreement.within3_accuracy IS 'Share of labelled trajectories whose named step is within 3 steps of the first error; NULL with step_reason.';
COMMENT ON COLUMN attribution_agreement.step_reason IS 'Why the step measures are NULL (does not apply: ...); NULL when they are given.';
COMMENT ON COLUMN attribution_agreement.n_agent_labelled IS 'Labelled trajectories whose first error names an agent: the denominator of agent accuracy.';
COMMENT ON COLUMN attribution_agreement.agent_hits IS 'Trajectories where the method''s agent is the annotated one (case-insensitive; expected hits for the uniform baseline); NULL with agent_reason.';
COMMENT ON COLUMN attribution_agreement.agent_accuracy IS 'Agent-level accuracy (Who&When): agent_hits / n_agent_labelled; NULL with agent_reason.';
COMMENT ON COLUMN attribution_agreement.agent_reason IS 'Why agent accuracy is NULL (does not apply: ...); NULL when it is given.';
COMMENT ON COLUMN attribution_agreement.n_category_labelled IS 'Labelled trajectories whose first error has a category.';
COMMENT ON COLUMN attribution_agreement.n_category_pairs IS 'Of those, how many the method gives a category too: the n of Cohen''s kappa (computed by trajscope agreement --human).';
COMMENT ON COLUMN attribution_agreement.category_reason IS 'Why category agreement does not apply; NULL when there are pairs to compare.';
COMMENT ON COLUMN attribution_agreement.within1_hits IS 'Trajectories within 1 step of the first error (expected for the uniform baseline), whatever step_reason says.';
COMMENT ON COLUMN attribution_agreement.within3_hits IS 'Trajectories within 3 steps of the first error (expected for the uniform baseline), whatever step_reason says.';
