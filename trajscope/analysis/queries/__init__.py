"""Typed query functions for the dashboard and CLI: each runs named views and returns a dataclass
carrying the SQL it ran (for a "Show SQL" expander)."""
from ._answer_agreement import AnswerVerdictAgreement, answer_verdict_agreement
from ._attribution import (
    CI_METHODS,
    LABELLED_RUNS_SQL,
    HumanAgreement,
    Measure,
    MethodAgreement,
    human_agreement,
    poisson_binomial_range,
)
from ._compare import Comparison, PairedStatistics, compare_runs, zero_read_rescue
from ._corpus import CORPUS_TITLES_SQL, corpus_titles
from ._forensics import (
    EXTRACTOR_AGREEMENT_SQL,
    JUDGE_ROBUSTNESS_SQL,
    POOLED_COOCCURRENCE_SQL,
    POST_READ_STRATA_SQL,
    EfficiencyFrontier,
    EfficiencyPoint,
    JudgeRobustness,
    JudgeRobustnessTable,
    LabelAgreement,
    PooledCooccurrence,
    StratifiedOddsRatio,
    efficiency_frontier,
    extractor_agreement,
    judge_agreement,
    judge_agreements,
    judge_robustness,
    pooled_cooccurrence,
    post_read_odds_ratio,
    table4_frame,
)
from ._funnel import FUNNEL_PAIRED_SQL, FUNNEL_STAGES, FunnelComparison, compare_funnels
from ._outcomes import DEFAULT_COMPARE_METRIC, METRICS, STRATA, QueryError, paired_outcomes_sql
from ._published_metrics import PublishedAgreement, PublishedMetrics, published_agreement
from ._rubric_agreement import ALWAYS_MATCH, RubricAgreement, ScannerAgreement, rubric_agreement
from ._step_label_agreement import BASELINES, StepLabelAgreement, StepLabelScores, step_label_agreement
from ._table import comparison_frame
from ._trail_agreement import TrailAgreement, TrailScores, trail_agreement

__all__ = [
    "ALWAYS_MATCH", "RubricAgreement", "ScannerAgreement", "rubric_agreement",
    "CI_METHODS", "LABELLED_RUNS_SQL", "HumanAgreement", "Measure", "MethodAgreement", "human_agreement",
    "poisson_binomial_range",
    "BASELINES", "StepLabelAgreement", "StepLabelScores", "step_label_agreement",
    "AnswerVerdictAgreement", "answer_verdict_agreement", "PublishedAgreement", "PublishedMetrics",
    "published_agreement", "TrailAgreement", "TrailScores", "trail_agreement",
    "EXTRACTOR_AGREEMENT_SQL", "JUDGE_ROBUSTNESS_SQL", "POOLED_COOCCURRENCE_SQL", "POST_READ_STRATA_SQL",
    "CORPUS_TITLES_SQL", "corpus_titles", "DEFAULT_COMPARE_METRIC", "FUNNEL_PAIRED_SQL",
    "FUNNEL_STAGES", "FunnelComparison", "METRICS", "STRATA", "Comparison", "EfficiencyFrontier", "EfficiencyPoint",
    "JudgeRobustness", "JudgeRobustnessTable", "LabelAgreement", "PairedStatistics", "PooledCooccurrence",
    "QueryError", "StratifiedOddsRatio", "compare_funnels", "compare_runs", "comparison_frame", "efficiency_frontier",
    "extractor_agreement", "judge_agreement", "judge_agreements", "judge_robustness", "paired_outcomes_sql",
    "pooled_cooccurrence", "post_read_odds_ratio", "table4_frame", "zero_read_rescue",
]
