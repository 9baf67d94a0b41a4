-- Two runs' funnels paired by question: per (scope, hop, stage) the pairs where it applies to both, each run's share, the discordant cells.
WITH a AS (
    UNPIVOT (SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_a)
    ON queried, retrieved, snippet_shown, read, used INTO NAME stage VALUE reached
), b AS (
    UNPIVOT (SELECT question_id, dataset, scope, hop, queried, retrieved, snippet_shown, read, used FROM evidence_funnel_question WHERE run_id = $run_b)
    ON queried, retrieved, snippet_shown, read, used INTO NAME stage VALUE reached
)
SELECT a.scope, a.hop, a.stage, count(*) AS n_pairs,
       avg(a.reached::INTEGER) AS share_a, avg(b.reached::INTEGER) AS share_b,
       count(*) FILTER (a.reached AND NOT b.reached) AS a_only,
       count(*) FILTER (b.reached AND NOT a.reached) AS b_only
FROM a JOIN b ON a.question_id = b.question_id AND a.dataset = b.dataset AND a.scope = b.scope
              AND a.hop IS NOT DISTINCT FROM b.hop AND a.stage = b.stage
GROUP BY a.scope, a.hop, a.stage;
