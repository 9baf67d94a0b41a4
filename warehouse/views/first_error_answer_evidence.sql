-- One row per trajectory with a gold answer but no gold passages (chat logs of search agents), right or wrong: the first error by the answer-evidence rules (rule, step_index), or none named, with the capabilities a rule lacked.
CREATE OR REPLACE VIEW first_error_answer_evidence AS
-- docs/definitions.md, "First error from the answer evidence". The rules first_decisive_error cannot
-- run without gold passages, over what such a log does carry: the step texts, the observations and the
-- gold answer. In order, the first that holds names the step:
--   unexecuted_call    (any verdict)  the first step that writes a tool call in its text yet made none
--                                     (no tool ran: the harness answered with a complaint, not a result);
--   run_error          (wrong)        the run ended in an error: its first error step, else the last;
--   gold_seen_unused   (wrong)        the gold (or an alias) was in an observation and the agent went on
--                                     without it: the step after that observation;
--   repeated_query     (wrong)        the second search whose query nearly repeats an earlier one (word
--                                     Jaccard >= 0.8): a retry had already come back empty-handed;
--   wrong_answer_taken (wrong)        the wrong final answer first appeared in an observation: the first
--                                     later step whose query or text names it (the commitment);
--   answered_wrong     (wrong)        none of these: the final (else last) step.
-- A rule whose capability the log lacks is passed over and named in not_checked; a right answer with
-- no unexecuted call names no error.
WITH scope AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.final_answer, t.end_reason, t.n_steps,
           c.correct, list_filter([q.gold_answer] || coalesce(q.aliases, []), lambda g: length(trim(g)) >= 2) AS golds,
           rc.snippets AS log_observations, rc.snippets_reason
    FROM trajectories t
    JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    JOIN trajectory_correctness c USING (trajectory_id)
    LEFT JOIN run_capabilities rc ON rc.run_id = t.run_id
    WHERE coalesce(t.n_gold, 0) = 0 AND has_gold_answer(q.gold_answer, q.aliases) AND c.correct IS NOT NULL
),
step_facts AS (
    SELECT s.trajectory_id, s.step_index, s.kind, s.query,
           funnel_words(s.observation) AS observed,
           funnel_words(coalesce(s.query, '') || ' ' || coalesce(s.thought, s.raw, '')) AS said,
           -- A call written as text (Search-R1's <tool_call>, a JSON "arguments" object) by a step that ran no tool.
           s.tool_name IS NULL AND s.observation IS NULL AND s.kind <> 'final'
               AND regexp_matches(coalesce(s.raw, s.thought, ''), '<tool_call>|<function_call>|"arguments"\s*:')
                                                                                      AS unexecuted,
           coalesce(s.raw, s.thought) IS NOT NULL                                   AS has_text
    FROM steps s JOIN scope USING (trajectory_id)
),
query_words AS (
    SELECT trajectory_id, step_index,
           list_distinct(string_split(trim(regexp_replace(lower(query), '[^\p{L}\p{N}]+', ' ', 'g')), ' ')) AS words
    FROM step_facts WHERE nullif(trim(query), '') IS NOT NULL
),
near_repeats AS (
    -- A query whose word set overlaps an earlier query's by Jaccard >= 0.8; the second such step is the rule's.
    SELECT trajectory_id, step_index, row_number() OVER (PARTITION BY trajectory_id ORDER BY step_index) AS nth
    FROM (SELECT DISTINCT b.trajectory_id, b.step_index
          FROM query_words a JOIN query_words b ON a.trajectory_id = b.trajectory_id AND a.step_index < b.step_index
          WHERE len(list_intersect(a.words, b.words)) >= 0.8 * len(list_distinct(a.words || b.words)))
),
facts AS (
    SELECT sc.trajectory_id,
           max(f.step_index) FILTER (f.kind = 'final')                                       AS final_step,
           bool_or(f.has_text)                                                               AS any_text,
           min(f.step_index) FILTER (f.unexecuted)                                           AS unexecuted_step,
           min(f.step_index) FILTER (f.kind = 'error')                                       AS error_step,
           min(f.step_index) FILTER (list_bool_or([names_words(f.observed, funnel_words(g)) FOR g IN sc.golds]))
                                                                                             AS gold_seen_step,
           min(f.step_index) FILTER (names_words(f.observed, funnel_words(sc.final_answer)))  AS wrong_seen_step
    FROM scope sc JOIN step_facts f USING (trajectory_id)
    GROUP BY sc.trajectory_id
),
committed AS (
    SELECT fa.trajectory_id, min(f.step_index) AS committed_step
    FROM facts fa JOIN scope sc USING (trajectory_id) JOIN step_facts f USING (trajectory_id)
    WHERE f.step_index > fa.wrong_seen_step AND names_words(f.said, funnel_words(sc.final_answer))
    GROUP BY fa.trajectory_id
),
decided AS (
    SELECT sc.*, fa.* EXCLUDE (trajectory_id), cm.committed_step, nr.step_index AS repeat_step, coalesce(fa.final_step, sc.n_steps - 1) AS last_step,
           CASE WHEN fa.unexecuted_step IS NOT NULL THEN 'unexecuted_call'
                WHEN sc.correct THEN NULL
                WHEN sc.end_reason = 'error' THEN 'run_error'
                WHEN sc.log_observations AND fa.gold_seen_step < coalesce(fa.final_step, sc.n_steps - 1)
                    THEN 'gold_seen_unused'
                WHEN nr.step_index IS NOT NULL THEN 'repeated_query'
                WHEN sc.log_observations AND cm.committed_step IS NOT NULL THEN 'wrong_answer_taken'
                ELSE 'answered_wrong' END AS rule
    FROM scope sc JOIN facts fa USING (trajectory_id) LEFT JOIN committed cm USING (trajectory_id)
    LEFT JOIN near_repeats nr ON nr.trajectory_id = sc.trajectory_id AND nr.nth = 2
)
SELECT trajectory_id, run_id, question_id, correct, rule,
       CASE rule WHEN 'unexecuted_call' THEN unexecuted_step
                 WHEN 'run_error' THEN coalesce(error_step, last_step)
                 WHEN 'gold_seen_unused' THEN gold_seen_step + 1
                 WHEN 'repeated_query' THEN repeat_step
                 WHEN 'wrong_answer_taken' THEN committed_step
                 WHEN 'answered_wrong' THEN last_step END                         AS step_index,
       gold_seen_step, CASE WHEN NOT correct THEN wrong_seen_step END AS wrong_seen_step,
       list_filter([CASE WHEN NOT any_text THEN 'unexecuted_call: step_text (no step keeps its message text)' END,
                    CASE WHEN NOT coalesce(log_observations, false) AND NOT correct
                         THEN 'gold_seen_unused, wrong_answer_taken: snippets (' || coalesce(snippets_reason,
                              'no capability profile') || ')' END],
                   lambda x: x IS NOT NULL)                                        AS not_checked
FROM decided;
COMMENT ON COLUMN first_error_answer_evidence.trajectory_id IS 'Trajectory id: one with a gold answer, no gold passages and a verdict (trajectory_correctness.correct).';
COMMENT ON COLUMN first_error_answer_evidence.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN first_error_answer_evidence.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN first_error_answer_evidence.correct IS 'trajscope''s verdict on the answer; the rules run on right answers too (only unexecuted_call can fire there).';
COMMENT ON COLUMN first_error_answer_evidence.rule IS 'The first rule that holds: unexecuted_call, run_error, gold_seen_unused, repeated_query, wrong_answer_taken, answered_wrong; NULL: a right answer with no error named.';
COMMENT ON COLUMN first_error_answer_evidence.step_index IS 'The first error: the unexecuted call; the first error step (run_error); the step after the gold was seen; the second near-repeated query; the step that committed to the wrong answer; the final (else last) step. NULL when rule is NULL.';
COMMENT ON COLUMN first_error_answer_evidence.gold_seen_step IS 'First step whose observation names the gold answer or an alias as whole words (NULL: never seen).';
COMMENT ON COLUMN first_error_answer_evidence.wrong_seen_step IS 'First step whose observation names the final answer (NULL: never, or the answer is right).';
COMMENT ON COLUMN first_error_answer_evidence.not_checked IS 'Rules passed over because the log lacks their capability, each with the capability and why (empty: every rule could run).';
