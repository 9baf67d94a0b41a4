-- One row per run of the batch: its settings and the capability profile its log recorded (NULL fields: inferred by run_capabilities).
INSERT INTO runs BY NAME
SELECT r.run_id AS run_id, r.source AS source, r.dataset AS dataset, r.controller AS controller,
       r.condition AS condition, r.intervention AS intervention, r.model AS model,
       r.model_settings.temperature AS temperature, r.model_settings.max_tokens AS max_tokens,
       r.model_settings.reasoning_effort AS reasoning_effort, r.model_settings.protocol AS protocol,
       r.model_settings.base_url AS base_url,
       r.retriever.kind AS retriever_kind, r.retriever.top_k AS top_k, r.retriever.rrf_k AS rrf_k,
       r.retriever.embedding_model AS embedding_model, r.retriever.bm25_k1 AS bm25_k1,
       r.retriever.bm25_b AS bm25_b, r.seed AS seed, r.code_version AS code_version,
       r.started_at AS started_at, r.config AS config,
       r.capabilities.search_candidates AS cap_search_candidates, r.capabilities.snippets AS cap_snippets,
       r.capabilities.read_action AS cap_read_action, r.capabilities.gold_answers AS cap_gold_answers,
       r.capabilities.gold_passages AS cap_gold_passages, r.capabilities.judgments AS cap_judgments,
       r.capabilities.declared AS capabilities_declared, r.capabilities.reasons AS capability_reasons,
       r.forked_from AS forked_from
FROM (SELECT any_value(run) AS r FROM stage GROUP BY run.run_id)
