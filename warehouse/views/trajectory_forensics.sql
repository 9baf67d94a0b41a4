-- One row per trajectory: every signal the failure taxonomies use (correctness, reads, gold reach, abstention, snippet-only answer, register resolution); gold-reach signals are NULL for a question without gold passages, and correct is NULL with correct_reason when there is no verdict.
CREATE OR REPLACE VIEW trajectory_forensics AS
-- Every taxonomy view and page query reads this view: its signals are stored per trajectory at load,
-- after each judge pass and after a question upsert (trajectory_signals, defined in
-- warehouse/facts/trajectory_signals/fill.sql), so a page scans one table rather than joining five.
SELECT trajectory_id, run_id, question_id, dataset, record_hash,
       question_type, hop_count, final_answer, end_reason,
       search_count, read_count, tokens_in, tokens_out, cost_usd,
       correct, correct_by, correct_reason, contain, llm,
       n_gold, n_gold_retrieved, n_gold_read, all_gold_retrieved, any_gold_read, n_gold_reached,
       hop_evidence_recall, gold_paragraphs, all_gold_reached, n_gold_unmatched, evidence_reason,
       answer_checked, abstained, answer_in_snippets, answer_in_reads, echoed, hedged,
       n_register_items, n_register_resolved, register_complete, n_false_resolved, false_resolution
FROM trajectory_signals;
COMMENT ON COLUMN trajectory_forensics.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_forensics.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_forensics.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_forensics.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_forensics.record_hash IS 'Hash of the trajectory version loaded; forensic rows of an older version are ignored.';
COMMENT ON COLUMN trajectory_forensics.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_forensics.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_forensics.final_answer IS 'The answer the trajectory ended with (NULL: none).';
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
