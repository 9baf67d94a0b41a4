-- One row per trajectory: every signal the failure taxonomies use (correctness, reads, gold reach, abstention, snippet-only answer, register resolution); gold-reach signals are NULL for a question without gold passages, and correct is NULL with correct_reason when there is no verdict.
CREATE OR REPLACE VIEW trajectory_forensics AS
-- Every taxonomy view and page query reads this view, so it is written to scan each table once:
-- the verdicts (judgment_scores, as trajectory_scores reads them) are joined once and correctness
-- uses the rule of trajectory_correctness (the macro answer_correct) on them,
-- and gold reach and register resolution are the load-time columns of trajectories (summed there
-- from gold_evidence_facts and register_events, as trajectory_evidence reads them). A false
-- resolution is per register item (register_item_resolution); NULL for runs without a register.
WITH base AS (
    SELECT t.trajectory_id, t.run_id, t.question_id, t.dataset, t.record_hash,
           q.question_type, q.hop_count, q.gold_paragraphs, t.final_answer, t.end_reason,
           t.search_count, t.read_count,
           coalesce(t.total_tokens_in, t.step_tokens_in)    AS tokens_in,
           coalesce(t.total_tokens_out, t.step_tokens_out)  AS tokens_out,
           coalesce(t.total_cost_usd, t.step_cost_usd)      AS cost_usd,
           s.contain, s.llm, has_gold_answer(q.gold_answer, q.aliases) AS has_gold_answer,
           t.n_gold, t.n_gold_retrieved, t.n_gold_read, t.n_gold_reached,
           t.n_register_items, t.n_register_resolved, t.register_complete
    FROM trajectories t
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
    LEFT JOIN judgment_scores s USING (trajectory_id)
)
SELECT b.trajectory_id, b.run_id, b.question_id, b.dataset, b.record_hash,
       b.question_type, b.hop_count, b.final_answer, b.end_reason,
       b.search_count, b.read_count, b.tokens_in, b.tokens_out, b.cost_usd,
       answer_correct(b.llm, b.contain)                                       AS correct,
       answer_correct_by(b.llm, b.contain)                                    AS correct_by,
       CASE WHEN b.llm IS NULL AND b.contain IS NULL THEN
            CASE WHEN NOT b.has_gold_answer THEN 'no gold answer for this question: correctness does not apply'
                 ELSE 'not judged yet: run trajscope judge' END END              AS correct_reason,
       b.contain, b.llm,
       b.n_gold, b.n_gold_retrieved, b.n_gold_read,
       -- ER App. E: a supporting paragraph that matched no chunk was never retrieved, so "every
       -- supporting passage retrieved / reached" needs every paragraph the source names matched
       -- (gold_paragraphs <= n_gold) as well as every matched chunk found; hop recall uses the same rule.
       CASE WHEN b.n_gold > 0 THEN b.n_gold_retrieved = b.n_gold
                                   AND coalesce(b.gold_paragraphs, b.n_gold) <= b.n_gold END AS all_gold_retrieved,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_read > 0 END                      AS any_gold_read,
       b.n_gold_reached,
       -- ExecutionRAG App. E: the share of supporting paragraphs reached, over every paragraph the source
       -- names (an unmatched one counts as not reached); the matched chunks when the source counts none.
       CASE WHEN coalesce(b.gold_paragraphs, b.n_gold) > 0
            THEN least(b.n_gold_reached / coalesce(b.gold_paragraphs, b.n_gold), 1.0) END AS hop_evidence_recall,
       b.gold_paragraphs,
       CASE WHEN b.n_gold > 0 THEN b.n_gold_reached = b.n_gold
                                   AND coalesce(b.gold_paragraphs, b.n_gold) <= b.n_gold END AS all_gold_reached,
       greatest(coalesce(b.gold_paragraphs, b.n_gold) - b.n_gold, 0)          AS n_gold_unmatched,
       CASE WHEN b.n_gold = 0 THEN 'no gold passages for this question: gold-evidence measures do not apply' END
                                                                              AS evidence_reason,
       a.trajectory_id IS NOT NULL                                            AS answer_checked,
       a.abstained, a.answer_in_snippets, a.answer_in_reads,
       a.echoed, a.hedged,
       b.n_register_items, b.n_register_resolved, b.register_complete,
       fr.n_false_resolved,
       CASE WHEN b.n_gold > 0 THEN fr.n_false_resolved > 0 END                AS false_resolution
FROM base b
LEFT JOIN answer_checks a ON a.trajectory_id = b.trajectory_id AND a.record_hash = b.record_hash
LEFT JOIN (SELECT trajectory_id, count(*) FILTER (false_resolution) AS n_false_resolved
           FROM register_item_resolution GROUP BY trajectory_id) fr ON fr.trajectory_id = b.trajectory_id;
COMMENT ON COLUMN trajectory_forensics.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_forensics.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_forensics.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_forensics.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_forensics.record_hash IS 'Hash of the trajectory version loaded; forensic rows of an older version are ignored.';
COMMENT ON COLUMN trajectory_forensics.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_forensics.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_forensics.final_answer IS 'The answer the trajectory ended with (NULL: none).';
COMMENT ON COLUMN trajectory_forensics.end_reason IS 'How the trajectory ended: final, loop_cap (forced at the loop cap), context_budget (forced at the context budget), budget / forced_answer (forced, cause not recorded) or error.';
COMMENT ON COLUMN trajectory_forensics.search_count IS 'Search steps (search, keyword_search, semantic_search).';
COMMENT ON COLUMN trajectory_forensics.read_count IS 'Read steps that returned a passage (the engine''s rule; a re-read counts).';
COMMENT ON COLUMN trajectory_forensics.tokens_in IS 'Prompt tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_forensics.tokens_out IS 'Completion tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_forensics.cost_usd IS 'Cost in USD: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_forensics.correct IS 'Correct by the papers'' criterion: LLM verdict >= 0.5 when one exists, else Contain-Acc >= 0.5; NULL without a verdict (see correct_reason).';
COMMENT ON COLUMN trajectory_forensics.correct_by IS 'Which verdict decided correct: llm or contain (NULL: unjudged).';
COMMENT ON COLUMN trajectory_forensics.correct_reason IS 'Why correct is NULL: no gold answer for the question, or not judged yet.';
COMMENT ON COLUMN trajectory_forensics.contain IS 'Contain-Acc in {0, 1} (newest verdict; NULL: not judged, see correct_reason).';
COMMENT ON COLUMN trajectory_forensics.llm IS 'LLM-judge verdict in [0, 1], averaged over judge models (NULL: no LLM verdict).';
COMMENT ON COLUMN trajectory_forensics.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN trajectory_forensics.n_gold_retrieved IS 'Gold passages that appeared among search candidates.';
COMMENT ON COLUMN trajectory_forensics.n_gold_read IS 'Gold passages opened by a read step.';
COMMENT ON COLUMN trajectory_forensics.all_gold_retrieved IS 'Every supporting paragraph was retrieved: each matched gold chunk appeared among search candidates and no paragraph the source names is unmatched (ER App. E: an unmatched paragraph was never retrieved); NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_forensics.any_gold_read IS 'A read step opened at least one gold passage; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_forensics.n_gold_reached IS 'Gold passages that reached the agent at all: retrieved, read or injected.';
COMMENT ON COLUMN trajectory_forensics.hop_evidence_recall IS 'ExecutionRAG hop-level evidence recall: gold passages reached / supporting paragraphs the source names (gold_paragraphs, else n_gold), capped at 1; NULL when the question has neither (see evidence_reason).';
COMMENT ON COLUMN trajectory_forensics.gold_paragraphs IS 'Supporting paragraphs the source names, matched to a chunk or not: the hop_evidence_recall denominator (NULL: the source counts none, then n_gold is used).';
COMMENT ON COLUMN trajectory_forensics.all_gold_reached IS 'Every supporting paragraph reached the agent (retrieved, read or injected): each matched gold chunk did and none is unmatched (ER App. E); NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_forensics.n_gold_unmatched IS 'Supporting paragraphs the source names that matched no chunk (gold_paragraphs - n_gold, at least 0; 0 when the source counts none): each counts as never retrieved.';
COMMENT ON COLUMN trajectory_forensics.evidence_reason IS 'Why the gold-evidence measures are NULL: the question has no gold passages.';
COMMENT ON COLUMN trajectory_forensics.answer_checked IS 'trajscope judge has checked the answer of this trajectory version (abstention, answer in snippets / reads).';
COMMENT ON COLUMN trajectory_forensics.abstained IS 'The final answer is empty, an abstention word or a give-up phrase, or echoes a controller message (echoed); NULL: answer not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_forensics.echoed IS 'The final answer repeats a controller message (gate rejection, budget nudge, force-answer prompt, error notice): abstained, and 0 under every judge; NULL: not checked (see answer_checked).';
COMMENT ON COLUMN trajectory_forensics.hedged IS 'The final answer names every option of a comparison question ("..., A or B?"): 0 under every judge; NULL: not checked (see answer_checked).';
COMMENT ON COLUMN trajectory_forensics.answer_in_snippets IS 'The normalised final answer occurs in a search snippet; NULL: not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_forensics.answer_in_reads IS 'The normalised final answer occurs in a passage opened by a read step; NULL: not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_forensics.n_register_items IS 'Requirement-register items with any event (0: no register).';
COMMENT ON COLUMN trajectory_forensics.n_register_resolved IS 'Register items whose last status is resolved.';
COMMENT ON COLUMN trajectory_forensics.register_complete IS 'Every register item ended resolved or retired and at least one resolved (false without a register).';
COMMENT ON COLUMN trajectory_forensics.n_false_resolved IS 'Register items falsely resolved: last status resolved, citing no gold passage that reached the agent (0 without gold passages; NULL: no register item).';
COMMENT ON COLUMN trajectory_forensics.false_resolution IS 'At least one register item falsely resolved (ExecutionRAG App. E); NULL without gold passages (see evidence_reason) or without a register.';
