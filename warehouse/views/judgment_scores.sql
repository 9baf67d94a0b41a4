-- One row per judged trajectory: its newest verdict per judge side by side (llm averaged over judge models); 0 under every judge for an answer that echoes a controller message or names every option (answer_checks).
CREATE OR REPLACE VIEW judgment_scores AS
-- Stored per trajectory at load and after each judge pass (judgment_score_facts, defined in
-- warehouse/facts/judgment_score_facts/fill.sql): every taxonomy query and page reads these verdicts, and
-- grouping the judgments anew took most of a page's time at a million trajectories.
SELECT trajectory_id, em, f1, contain, llm
FROM judgment_score_facts;
COMMENT ON COLUMN judgment_scores.trajectory_id IS 'Trajectory id; only judged trajectories have a row.';
COMMENT ON COLUMN judgment_scores.em IS 'Newest exact-match verdict in {0, 1}; 0 for an echo or hedge (answer_checks.echoed / hedged); NULL: no em verdict.';
COMMENT ON COLUMN judgment_scores.f1 IS 'Newest token-F1 verdict in [0, 1]; 0 for an echo or hedge; NULL: no f1 verdict.';
COMMENT ON COLUMN judgment_scores.contain IS 'Newest Contain-Acc verdict in {0, 1}; 0 for an echo or hedge; NULL: no contain verdict.';
COMMENT ON COLUMN judgment_scores.llm IS 'LLM-judge verdict in [0, 1]: the newest per judge model, averaged over models; 0 for an echo or hedge; NULL: no LLM verdict.';
