-- The swept parameter's value per chosen run ($runs): a runs column, else the key of the run's config JSON ($param).
SELECT run_id,
       coalesce(CASE $param
                    WHEN 'model' THEN model WHEN 'reasoning_effort' THEN reasoning_effort
                    WHEN 'temperature' THEN CAST(temperature AS VARCHAR) WHEN 'max_tokens' THEN CAST(max_tokens AS VARCHAR)
                    WHEN 'top_k' THEN CAST(top_k AS VARCHAR) WHEN 'embedding_model' THEN embedding_model
                    WHEN 'retriever_kind' THEN retriever_kind WHEN 'seed' THEN CAST(seed AS VARCHAR) END,
                json_extract_string(config, '$.' || $param),
                json_extract_string(config, '$.params.' || $param)) AS value
FROM runs
WHERE list_contains($runs, run_id)
