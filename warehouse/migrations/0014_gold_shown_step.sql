-- Two more load-time reach facts per (trajectory, gold passage) for the evidence funnel: the first step that showed it within the run's top-k, and its order of first appearance; rows loaded before are backfilled from the stored candidates and reads.
ALTER TABLE gold_evidence_facts ADD COLUMN IF NOT EXISTS first_shown_step INTEGER;
ALTER TABLE gold_evidence_facts ADD COLUMN IF NOT EXISTS appearance_hop BIGINT;
COMMENT ON COLUMN gold_evidence_facts.first_shown_step IS 'First search step that listed it within the run''s top-k (runs.top_k; every listed candidate when none is recorded); NULL: never.';
COMMENT ON COLUMN gold_evidence_facts.appearance_hop IS 'Its hop by order of first appearance in the trajectory (first step that listed, read or injected it; never-seen ones last, in gold list order), from 1: the evidence funnel''s hop when the dataset states no order.';
UPDATE gold_evidence_facts SET first_shown_step = s.step
FROM (
    SELECT c.trajectory_id, c.chunk_id, min(c.step_index) AS step
    FROM candidates c
    JOIN trajectories t USING (trajectory_id)
    JOIN runs r ON r.run_id = t.run_id
    WHERE c.rank <= coalesce(r.top_k, c.rank)
    GROUP BY c.trajectory_id, c.chunk_id
) s
WHERE gold_evidence_facts.trajectory_id = s.trajectory_id AND gold_evidence_facts.chunk_id = s.chunk_id;
UPDATE gold_evidence_facts SET appearance_hop = a.hop
FROM (
    SELECT g.trajectory_id, g.chunk_id,
           row_number() OVER (PARTITION BY g.trajectory_id
                              ORDER BY least(g.first_retrieved_step, g.first_read_step, g.first_injected_step) NULLS LAST,
                                       list_position(q.gold_chunk_ids, g.chunk_id)) AS hop
    FROM gold_evidence_facts g
    JOIN trajectories t USING (trajectory_id)
    LEFT JOIN questions q ON q.dataset = t.dataset AND q.question_id = t.question_id
) a
WHERE gold_evidence_facts.trajectory_id = a.trajectory_id AND gold_evidence_facts.chunk_id = a.chunk_id;
