-- Each trajectory's verdicts side by side stored at load and after each judge pass (warehouse/load/judgment_score_facts.sql), read by judgment_scores; an existing warehouse is filled on its next write open (no stored hash, so warehouse._derived recomputes every trajectory).
CREATE TABLE IF NOT EXISTS judgment_score_facts (
    trajectory_id VARCHAR NOT NULL,
    em            DOUBLE,
    f1            DOUBLE,
    contain       DOUBLE,
    llm           DOUBLE
);
COMMENT ON TABLE judgment_score_facts IS 'Per judged trajectory: its newest verdict per judge (llm averaged over judge models, 0 for an echo or hedge), computed at load and after trajscope judge; judgment_scores reads it.';
COMMENT ON COLUMN judgment_score_facts.trajectory_id IS 'Trajectory id; only judged trajectories have a row.';
COMMENT ON COLUMN judgment_score_facts.em IS 'Newest exact-match verdict in {0, 1}; 0 for an echo or hedge (answer_checks.echoed / hedged); NULL: no em verdict.';
COMMENT ON COLUMN judgment_score_facts.f1 IS 'Newest token-F1 verdict in [0, 1]; 0 for an echo or hedge; NULL: no f1 verdict.';
COMMENT ON COLUMN judgment_score_facts.contain IS 'Newest Contain-Acc verdict in {0, 1}; 0 for an echo or hedge; NULL: no contain verdict.';
COMMENT ON COLUMN judgment_score_facts.llm IS 'LLM-judge verdict in [0, 1]: the newest per judge model, averaged over models; 0 for an echo or hedge; NULL: no LLM verdict.';
COMMENT ON COLUMN derived_facts_state.name IS 'The derived table (evidence_funnel_facts or judgment_score_facts).';
