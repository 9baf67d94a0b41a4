-- The chosen runs ($runs): the settings reports group and label them by, whether the agent had a read action, and their size.
SELECT r.run_id, coalesce(r.dataset, '(none)') AS dataset, r.controller, r.condition, r.model, r.seed,
       r.embedding_model, r.reasoning_effort, p.read_action,
       r.temperature, r.max_tokens, r.retriever_kind, r.top_k,
       (SELECT count(*) FROM trajectories t WHERE t.run_id = r.run_id) AS n_trajectories
FROM runs r
JOIN run_protocol p USING (run_id)
WHERE list_contains($runs, r.run_id)
