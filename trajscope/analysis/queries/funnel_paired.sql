-- Two runs' funnels paired by question: per (scope, hop, stage) the pairs where it applies to both, each run's share, the discordant cells.
-- The questions are paired first, then each pair's stages unpivoted: pairing unpivoted rows joined five times as many.
WITH a AS (
    SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_a
), b AS (
    SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_b
), pairs AS (
    -- Pairs with the same stage outcomes are counted once (a few hundred groups, not a row per question), so the
    -- unpivot below spreads a handful of rows instead of five per pair.
    SELECT a.scope, a.hop,
           a.queried AS a_queried, b.queried AS b_queried, a.retrieved AS a_retrieved, b.retrieved AS b_retrieved,
           a.snippet_shown AS a_snippet_shown, b.snippet_shown AS b_snippet_shown,
           a.read AS a_read, b.read AS b_read, a.used AS a_used, b.used AS b_used, count(*) AS n
    FROM a JOIN b ON a.question_id = b.question_id AND a.dataset = b.dataset AND a.scope = b.scope
                  AND a.hop IS NOT DISTINCT FROM b.hop
    GROUP BY ALL
)
SELECT scope, hop, stage, CAST(sum(n) AS BIGINT) AS n_pairs,
       sum(n * reached_a::INTEGER) / sum(n) AS share_a, sum(n * reached_b::INTEGER) / sum(n) AS share_b,
       CAST(coalesce(sum(n) FILTER (reached_a AND NOT reached_b), 0) AS BIGINT) AS a_only,
       CAST(coalesce(sum(n) FILTER (reached_b AND NOT reached_a), 0) AS BIGINT) AS b_only
FROM pairs UNPIVOT INCLUDE NULLS ((reached_a, reached_b) FOR stage IN (
    (a_queried, b_queried) AS queried, (a_retrieved, b_retrieved) AS retrieved,
    (a_snippet_shown, b_snippet_shown) AS snippet_shown, (a_read, b_read) AS read, (a_used, b_used) AS used))
-- A stage that does not apply to one run's log (NULL there) has no pair.
WHERE reached_a IS NOT NULL AND reached_b IS NOT NULL
GROUP BY scope, hop, stage;
