-- The measure definitions every view calls, rendered from trajscope.format's constants (warehouse/_definitions.py substitutes each dollar-brace slot).
-- Read-Gate §3: a final is low-evidence below this share of question entities found in read passages.
CREATE OR REPLACE MACRO low_evidence_threshold() AS ${low_evidence_threshold};
-- Read-Gate low-evidence: coverage is NULL when the question has no entities, and then nothing is low.
CREATE OR REPLACE MACRO is_low_evidence(coverage) AS coalesce(coverage < low_evidence_threshold(), false);
-- One verdict in [0, 1] read as right or wrong: at or above the threshold (a judge tie of 0.5 is right).
CREATE OR REPLACE MACRO says_correct(verdict) AS verdict >= ${correct_at};
-- The correctness rule: the LLM verdict (averaged over judge models) decides when it exists, else Contain-Acc.
CREATE OR REPLACE MACRO answer_correct(llm, contain) AS
    CASE WHEN llm IS NOT NULL THEN says_correct(llm)
         WHEN contain IS NOT NULL THEN says_correct(contain) END;
-- LLM-Acc (an aggregate): the share of LLM-judged trajectories whose verdict (averaged over judge models) says correct; NULL when none is judged.
CREATE OR REPLACE MACRO llm_acc(llm) AS
    avg(CASE WHEN says_correct(llm) THEN 1.0 WHEN NOT says_correct(llm) THEN 0.0 END);
-- Which verdict answer_correct used: 'llm', 'contain', or NULL when the trajectory is unjudged.
CREATE OR REPLACE MACRO answer_correct_by(llm, contain) AS
    CASE WHEN llm IS NOT NULL THEN 'llm' WHEN contain IS NOT NULL THEN 'contain' END;
-- The entity extractors the low-evidence label is computed with, one row each.
CREATE OR REPLACE MACRO entity_extractors() AS TABLE SELECT unnest(${entity_extractors}) AS extractor;
-- The extractor the +lowev gate uses at run time (trajscope.format.GATE_EXTRACTOR); its label rows need no spaCy.
CREATE OR REPLACE MACRO gate_extractor() AS '${gate_extractor}';
-- The environment forced the answer (loop cap, context budget, or a cause the log does not say).
CREATE OR REPLACE MACRO is_forced_end(end_reason) AS coalesce(list_contains(${forced_end_reasons}, end_reason), false);
-- ExecutionRAG App. B: forced at the context budget (or for an unstated cause) is Gave Up; at the loop cap it is not.
CREATE OR REPLACE MACRO is_gave_up_end(end_reason) AS coalesce(list_contains(${gave_up_end_reasons}, end_reason), false);
-- Read-Gate's voluntary zero-read final: the agent itself ended on a final with no read that returned a passage
-- (a forced or failed end is not one). The one rule for run_summary, type_breakdown, Tables 1 / 5 / 17, compare.
CREATE OR REPLACE MACRO is_zero_read_final(end_reason, read_count) AS end_reason = 'final' AND read_count = 0;
-- The trajectory gave no answer at all: it failed or was forced and returned no text; wrong under every judge.
CREATE OR REPLACE MACRO gave_no_answer(final_answer, end_reason) AS
    nullif(trim(final_answer), '') IS NULL AND (end_reason = 'error' OR is_forced_end(end_reason));
-- A read step counts as a read only when it returned a passage (trajscope.format.counts_as_read, the same rule).
CREATE OR REPLACE MACRO is_counted_read(kind, passages) AS kind = 'read' AND coalesce(len(passages), 0) > 0;
-- An audit record's trimmed gold is too short to audit (engine.audit.gold_is_auditable: trajscope.format.MIN_GOLD_CHARS).
CREATE OR REPLACE MACRO gold_too_short(gold_trimmed) AS length(gold_trimmed) < ${min_gold_chars};
-- A reason a measure is NULL, said once: 'does not apply: ' before a reason that does not already start with it.
CREATE OR REPLACE MACRO not_applicable(reason) AS
    CASE WHEN starts_with(reason, 'does not apply') THEN reason ELSE 'does not apply: ' || reason END;
-- Step kinds that are searches (Read-Gate search, A-RAG keyword_search / semantic_search).
CREATE OR REPLACE MACRO search_kinds() AS ${search_kinds};
-- Step kinds that are the agent's own actions (searches, read, final, other tools), not the environment's.
CREATE OR REPLACE MACRO agent_action_kinds() AS ${agent_action_kinds};
-- A question can be judged: it has a non-empty gold answer or alias (trajscope.format.has_gold_answer, the same rule).
CREATE OR REPLACE MACRO has_gold_answer(gold_answer, aliases) AS
    coalesce(trim(gold_answer), '') <> '' OR len(list_filter(coalesce(aliases, []), lambda a: trim(a) <> '')) > 0;
-- A text in the evidence funnel's word form: lowercased, every run of non-letters/digits one space, padded with a space each side, so a contains() is a whole-word match.
CREATE OR REPLACE MACRO funnel_words(text) AS ' ' || trim(regexp_replace(lower(coalesce(text, '')), '[^\p{L}\p{N}]+', ' ', 'g')) || ' ';
-- The evidence funnel's naming rule on funnel_words forms: a text (a query, a final answer) names an entity when the entity's words occur in it as whole words; an entity under 2 characters names nothing.
CREATE OR REPLACE MACRO names_words(text_words, entity_words) AS
    length(trim(entity_words)) >= 2 AND contains(text_words, entity_words);
-- names_words on raw texts (views that compare many pairs put funnel_words in a CTE once per text and call names_words).
CREATE OR REPLACE MACRO names_entity(text, entity) AS names_words(funnel_words(text), funnel_words(entity));
-- An evidence-funnel stage of one gold passage: true when the step it first happened at is set; false only where the log could have shown it (log_shows, the run's capability); else NULL, the stage does not apply.
CREATE OR REPLACE MACRO funnel_stage(step, log_shows) AS CASE WHEN step IS NOT NULL THEN true WHEN log_shows THEN false END;
-- funnel_stage over all of a trajectory's gold passages (bool_and, which skips NULLs), from how many reached the stage: where the log shows the stage, whether all did; elsewhere true if any did, else NULL.
CREATE OR REPLACE MACRO funnel_stage_all(n_reached, n_passages, log_shows) AS
    CASE WHEN log_shows THEN n_reached = n_passages WHEN n_reached > 0 THEN true END;
-- An em / f1 / contain score the importer computed from the log's gold and final answer (trajscope.format.SCORED_AT_IMPORT), not a verdict the log carried.
CREATE OR REPLACE MACRO scored_at_import(rationale) AS coalesce(rationale = '${scored_at_import}', false);
