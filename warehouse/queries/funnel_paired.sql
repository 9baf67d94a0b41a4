-- Two runs' funnels paired by question: per (scope, hop, stage) the pairs where it applies to both, each run's share, the discordant cells.
-- The questions are paired first, then each pair's stages unpivoted: pairing unpivoted rows joined five times as many.
WITH a AS (
    SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_a
), b AS (
    SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_b
), pairs AS (
    SELECT a.scope, a.hop,
           a.queried AS a_queried, b.queried AS b_queried, a.retrieved AS a_retrieved, b.retrieved AS b_retrieved,
           a.snippet_shown AS a_snippet_shown, b.snippet_shown AS b_snippet_shown,
           a.read AS a_read, b.read AS b_read, a.used AS a_used, b.used AS b_used
    FROM a JOIN b ON a.question_id = b.question_id AND a.dataset = b.dataset AND a.scope = b.scope
                  AND a.hop IS NOT DISTINCT FROM b.hop
)
SELECT scope, hop, stage, count(*) AS n_pairs,
       avg(reached_a::INTEGER) AS share_a, avg(reached_b::INTEGER) AS share_b,
       count(*) FILTER (reached_a AND NOT reached_b) AS a_only,
       count(*) FILTER (reached_b AND NOT reached_a) AS b_only
FROM pairs UNPIVOT INCLUDE NULLS ((reached_a, reached_b) FOR stage IN (
    (a_queried, b_queried) AS queried, (a_retrieved, b_retrieved) AS retrieved,
    (a_snippet_shown, b_snippet_shown) AS snippet_shown, (a_read, b_read) AS read, (a_used, b_used) AS used))
-- A stage that does not apply to one run's log (NULL there) has no pair.
WHERE reached_a IS NOT NULL AND reached_b IS NOT NULL
GROUP BY scope, hop, stage;
