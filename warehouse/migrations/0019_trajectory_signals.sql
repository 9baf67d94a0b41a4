-- Every per-trajectory signal the taxonomies and pages read, stored at load, after each judge pass and after a question upsert (warehouse/load/trajectory_signals.sql); an existing warehouse is filled on its next write open (no stored hash, so warehouse._derived recomputes every trajectory).
CREATE TABLE IF NOT EXISTS trajectory_signals (
    trajectory_id            VARCHAR NOT NULL,
    run_id                   VARCHAR,
    question_id              VARCHAR,
    dataset                  VARCHAR,
    record_hash              VARCHAR,
    question_type            VARCHAR,
    hop_count                INTEGER,
    final_answer             VARCHAR,
    end_reason               VARCHAR,
    search_count             INTEGER,
    read_count               INTEGER,
    failed_read_count        INTEGER,
    passages_read            INTEGER,
    turns                    INTEGER,
    gate_rejections          INTEGER,
    injections               INTEGER,
    errors                   INTEGER,
    zero_read_final          BOOLEAN,
    tokens_in                BIGINT,
    tokens_out               BIGINT,
    cost_usd                 DOUBLE,
    latency_ms               DOUBLE,
    cached_calls             INTEGER,
    cached_cost_usd          DOUBLE,
    n_candidates             BIGINT,
    n_snippets               BIGINT,
    n_search_observations    INTEGER,
    n_record_judgments       INTEGER,
    em                       DOUBLE,
    f1                       DOUBLE,
    has_gold_answer          BOOLEAN,
    correct                  BOOLEAN,
    correct_by               VARCHAR,
    correct_reason           VARCHAR,
    contain                  DOUBLE,
    llm                      DOUBLE,
    n_gold                   BIGINT,
    n_gold_retrieved         BIGINT,
    n_gold_read              BIGINT,
    all_gold_retrieved       BOOLEAN,
    any_gold_read            BOOLEAN,
    n_gold_reached           BIGINT,
    hop_evidence_recall      DOUBLE,
    gold_paragraphs          INTEGER,
    all_gold_reached         BOOLEAN,
    n_gold_unmatched         BIGINT,
    evidence_reason          VARCHAR,
    answer_checked           BOOLEAN,
    abstained                BOOLEAN,
    answer_in_snippets       BOOLEAN,
    answer_in_reads          BOOLEAN,
    echoed                   BOOLEAN,
    hedged                   BOOLEAN,
    n_register_items         BIGINT,
    n_register_resolved      BIGINT,
    register_complete        BOOLEAN,
    n_false_resolved         BIGINT,
    false_resolution         BOOLEAN
);
COMMENT ON TABLE trajectory_signals IS 'Per trajectory: every signal trajectory_forensics, trajectory_facts, trajectory_correctness, run_summary and run_capabilities read (its own columns, its question''s, its newest verdicts, answer checks and register resolution), computed at load, after trajscope judge and after a question upsert.';
COMMENT ON COLUMN trajectory_signals.trajectory_id IS 'Trajectory id (trajectories.trajectory_id).';
COMMENT ON COLUMN trajectory_signals.run_id IS 'Run id (runs.run_id).';
COMMENT ON COLUMN trajectory_signals.question_id IS 'Question id: the pairing key across runs.';
COMMENT ON COLUMN trajectory_signals.dataset IS 'Dataset key of the trajectory (trajectories.dataset: the question''s or run''s dataset, '''' when neither says).';
COMMENT ON COLUMN trajectory_signals.record_hash IS 'sha256 of the trajectory''s record when these signals were computed (trajectories.record_hash).';
COMMENT ON COLUMN trajectory_signals.question_type IS 'Question type from the dataset (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_signals.hop_count IS 'Reasoning hops the dataset assigns the question (NULL: the source gives none).';
COMMENT ON COLUMN trajectory_signals.final_answer IS 'The answer the trajectory ended with (NULL: none).';
COMMENT ON COLUMN trajectory_signals.search_count IS 'Search steps (search, keyword_search, semantic_search).';
COMMENT ON COLUMN trajectory_signals.read_count IS 'Read steps that returned a passage (the engine''s rule; a re-read counts).';
COMMENT ON COLUMN trajectory_signals.failed_read_count IS 'Read steps that returned no passage (an unknown chunk id).';
COMMENT ON COLUMN trajectory_signals.passages_read IS 'Distinct chunks opened by read steps.';
COMMENT ON COLUMN trajectory_signals.turns IS 'Turns: the agent''s own actions (searches, read, final, other tools) plus finals a gate refused.';
COMMENT ON COLUMN trajectory_signals.gate_rejections IS 'Finals the environment refused (gate_rejection steps).';
COMMENT ON COLUMN trajectory_signals.injections IS 'context_injection steps: passages the environment placed in the prompt.';
COMMENT ON COLUMN trajectory_signals.errors IS 'Error steps.';
COMMENT ON COLUMN trajectory_signals.zero_read_final IS 'Ended on a final with no read step that returned a passage.';
COMMENT ON COLUMN trajectory_signals.tokens_in IS 'Prompt tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_signals.tokens_out IS 'Completion tokens: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_signals.cost_usd IS 'Cost in USD: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_signals.latency_ms IS 'Latency in ms: the total the source reports, else the sum over steps (NULL: neither reported).';
COMMENT ON COLUMN trajectory_signals.cached_calls IS 'Steps whose model response came from the response cache (NULL: loaded before migration 0004).';
COMMENT ON COLUMN trajectory_signals.cached_cost_usd IS 'Cost in USD of the cached steps when first made (NULL: no cached step with a cost).';
COMMENT ON COLUMN trajectory_signals.n_candidates IS 'Search candidates with chunk ids, over all its searches.';
COMMENT ON COLUMN trajectory_signals.n_snippets IS 'Search candidates that carry snippet text.';
COMMENT ON COLUMN trajectory_signals.n_search_observations IS 'Search steps whose observation carries text (NULL on rows loaded before migration 0005).';
COMMENT ON COLUMN trajectory_signals.n_record_judgments IS 'Verdicts the record itself carried (origin record).';
COMMENT ON COLUMN trajectory_signals.em IS 'Exact match in {0, 1}, the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_signals.f1 IS 'Token F1 in [0, 1], the newest verdict (trajscope judge: best over gold answer and aliases); NULL: not judged.';
COMMENT ON COLUMN trajectory_signals.has_gold_answer IS 'The question has a gold answer (has_gold_answer over questions.gold_answer and aliases); false: correctness does not apply.';
COMMENT ON COLUMN trajectory_signals.correct IS 'Correct by the papers'' criterion: LLM verdict >= 0.5 when one exists, else Contain-Acc >= 0.5; NULL without a verdict (see correct_reason).';
COMMENT ON COLUMN trajectory_signals.correct_by IS 'Which verdict decided correct: llm or contain (NULL: unjudged).';
COMMENT ON COLUMN trajectory_signals.correct_reason IS 'Why correct is NULL: no gold answer for the question, or not judged yet.';
COMMENT ON COLUMN trajectory_signals.contain IS 'Contain-Acc in {0, 1} (newest verdict; NULL: not judged, see correct_reason).';
COMMENT ON COLUMN trajectory_signals.llm IS 'LLM-judge verdict in [0, 1], averaged over judge models (NULL: no LLM verdict).';
COMMENT ON COLUMN trajectory_signals.n_gold IS 'Gold supporting passages of the question matched to chunks (0: none, and gold measures are NULL).';
COMMENT ON COLUMN trajectory_signals.n_gold_retrieved IS 'Gold passages that appeared among search candidates.';
COMMENT ON COLUMN trajectory_signals.n_gold_read IS 'Gold passages opened by a read step.';
COMMENT ON COLUMN trajectory_signals.all_gold_retrieved IS 'Every supporting paragraph was retrieved: each matched gold chunk appeared among search candidates and no paragraph the source names is unmatched (ER App. E: an unmatched paragraph was never retrieved); NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_signals.any_gold_read IS 'A read step opened at least one gold passage; NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_signals.n_gold_reached IS 'Gold passages that reached the agent at all: retrieved, read or injected.';
COMMENT ON COLUMN trajectory_signals.hop_evidence_recall IS 'ExecutionRAG hop-level evidence recall: gold passages reached / supporting paragraphs the source names (gold_paragraphs, else n_gold), capped at 1; NULL when the question has neither (see evidence_reason).';
COMMENT ON COLUMN trajectory_signals.gold_paragraphs IS 'Supporting paragraphs the source names, matched to a chunk or not: the hop_evidence_recall denominator (NULL: the source counts none, then n_gold is used).';
COMMENT ON COLUMN trajectory_signals.all_gold_reached IS 'Every supporting paragraph reached the agent (retrieved, read or injected): each matched gold chunk did and none is unmatched (ER App. E); NULL without gold passages (see evidence_reason).';
COMMENT ON COLUMN trajectory_signals.n_gold_unmatched IS 'Supporting paragraphs the source names that matched no chunk (gold_paragraphs - n_gold, at least 0; 0 when the source counts none): each counts as never retrieved.';
COMMENT ON COLUMN trajectory_signals.evidence_reason IS 'Why the gold-evidence measures are NULL: the question has no gold passages.';
COMMENT ON COLUMN trajectory_signals.answer_checked IS 'trajscope judge has checked the answer of this trajectory version (abstention, answer in snippets / reads).';
COMMENT ON COLUMN trajectory_signals.abstained IS 'The final answer is empty, an abstention word or a give-up phrase, or echoes a controller message (echoed); NULL: answer not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_signals.answer_in_snippets IS 'The normalised final answer occurs in a search snippet; NULL: not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_signals.answer_in_reads IS 'The normalised final answer occurs in a passage opened by a read step; NULL: not checked yet (see answer_checked).';
COMMENT ON COLUMN trajectory_signals.echoed IS 'The final answer repeats a controller message (gate rejection, budget nudge, force-answer prompt, error notice): abstained, and 0 under every judge; NULL: not checked (see answer_checked).';
COMMENT ON COLUMN trajectory_signals.hedged IS 'The final answer names every option of a comparison question ("..., A or B?"): 0 under every judge; NULL: not checked (see answer_checked).';
COMMENT ON COLUMN trajectory_signals.n_register_items IS 'Requirement-register items with any event (0: no register).';
COMMENT ON COLUMN trajectory_signals.n_register_resolved IS 'Register items whose last status is resolved.';
COMMENT ON COLUMN trajectory_signals.register_complete IS 'Every register item ended resolved or retired and at least one resolved (false without a register).';
COMMENT ON COLUMN trajectory_signals.n_false_resolved IS 'Register items falsely resolved: last status resolved, citing no gold passage that reached the agent (0 without gold passages; NULL: no register item).';
COMMENT ON COLUMN trajectory_signals.false_resolution IS 'At least one register item falsely resolved (ExecutionRAG App. E); NULL without gold passages (see evidence_reason) or without a register.';
COMMENT ON COLUMN derived_facts_state.name IS 'The derived table (evidence_funnel_facts, judgment_score_facts or trajectory_signals).';
