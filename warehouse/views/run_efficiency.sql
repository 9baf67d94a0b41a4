-- One row per run: accuracy (papers' criterion), retrieved tokens per question (new read passages, full texts the register's prompts showed, snippets; about 4 characters a token), model tokens and cost per question.
CREATE OR REPLACE VIEW run_efficiency AS
WITH read_chars AS (
    SELECT r.trajectory_id, sum(length(coalesce(r.text, c.text))) AS n_chars
    FROM reads r
    JOIN trajectories t ON t.trajectory_id = r.trajectory_id
    LEFT JOIN chunks c ON c.dataset = t.dataset AND c.chunk_id = r.chunk_id
    WHERE r.is_new IS NULL OR r.is_new
    GROUP BY r.trajectory_id
),
snippet_chars AS (
    SELECT trajectory_id, sum(length(snippet)) AS n_chars FROM candidates GROUP BY trajectory_id
),
-- ER §4.7: the register "reads more tokens ... because it builds and updates the register": full texts its
-- prompts showed (args shown_chunk_ids / shown_chars), each chunk once, unless a read already counted it.
shown AS (
    SELECT trajectory_id, unnest(from_json(args->'shown_chunk_ids', '["VARCHAR"]')) AS chunk_id,
           unnest(from_json(args->'shown_chars', '["BIGINT"]')) AS n_chars
    FROM steps
    WHERE json_exists(args, '$.shown_chunk_ids')
),
prompt_chars AS (
    SELECT s.trajectory_id, sum(s.n_chars) AS n_chars
    FROM (SELECT trajectory_id, chunk_id, max(n_chars) AS n_chars FROM shown GROUP BY ALL) s
    WHERE NOT EXISTS (SELECT 1 FROM reads r WHERE r.trajectory_id = s.trajectory_id AND r.chunk_id = s.chunk_id)
    GROUP BY s.trajectory_id
)
SELECT f.run_id,
       count(*)                                                          AS n,
       avg(CASE WHEN f.correct THEN 1.0 WHEN NOT f.correct THEN 0.0 END) AS accuracy,
       avg(f.contain)                                                    AS contain_acc,
       llm_acc(f.llm)                                                    AS llm_acc,
       avg(coalesce(rc.n_chars, 0) + coalesce(pc.n_chars, 0) + coalesce(sc.n_chars, 0)) / 4.0
                                                                         AS retrieved_tokens,
       avg(coalesce(f.tokens_in, 0) + coalesce(f.tokens_out, 0))         AS tokens_per_question,
       avg(f.cost_usd)                                                   AS cost_per_question,
       sum(f.cost_usd)                                                   AS total_cost_usd
FROM trajectory_forensics f
LEFT JOIN read_chars rc USING (trajectory_id)
LEFT JOIN snippet_chars sc USING (trajectory_id)
LEFT JOIN prompt_chars pc USING (trajectory_id)
GROUP BY f.run_id;
COMMENT ON COLUMN run_efficiency.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN run_efficiency.n IS 'Trajectories of the run.';
COMMENT ON COLUMN run_efficiency.accuracy IS 'Share correct by the papers'' criterion (LLM verdict, else Contain-Acc) over judged trajectories; NULL: none judged (see trajectory_correctness.correct_reason).';
COMMENT ON COLUMN run_efficiency.contain_acc IS 'Mean Contain-Acc over trajectories with a contain verdict; NULL: none.';
COMMENT ON COLUMN run_efficiency.llm_acc IS 'LLM-Acc (macro llm_acc): share of LLM-judged trajectories whose verdict, averaged over judge models, says correct (says_correct); NULL: none judged.';
COMMENT ON COLUMN run_efficiency.retrieved_tokens IS 'Mean retrieved tokens per trajectory: characters of newly read or injected passages, of full passage texts the register''s own prompts showed (each chunk once, not already read), and of all snippets, / 4 (about 4 characters a token).';
COMMENT ON COLUMN run_efficiency.tokens_per_question IS 'Mean model prompt + completion tokens per trajectory (an unreported count counts 0).';
COMMENT ON COLUMN run_efficiency.cost_per_question IS 'Mean cost in USD over trajectories that report a cost (NULL: none does).';
COMMENT ON COLUMN run_efficiency.total_cost_usd IS 'Cost in USD summed over the run''s trajectories (NULL: none reported).';
