"""Language-model scanners over stored trajectories: rubric search, step attribution, failure clustering."""
from ._attribute import DEFAULT_WHERE, PROTOCOLS, AttributeReport, Attribution, attribute, attribute_view
from ._cluster import METHODS, OTHER, ClusterReport, action_text, cluster, embedding_clusters
from ._inputs import SLICE_RELATION, read_rule_hints, read_views, select_slice, slice_sql
from ._render import CHARS_PER_TOKEN, GOLD_MARK, Rendered, StepView, TrajectoryView, estimate_tokens, render_trajectory
from ._rubric import (
    DEFAULT_TOKEN_BUDGET,
    PROMPT_VERSION,
    RUBRIC_SCHEMA,
    ScanReport,
    parse_rubric_reply,
    rubric_messages,
    rubric_verdicts,
    scan,
)
from ._session import model_session

__all__ = [
    "METHODS", "OTHER", "ClusterReport", "action_text", "cluster", "embedding_clusters",
    "DEFAULT_WHERE", "PROTOCOLS", "AttributeReport", "Attribution", "attribute", "attribute_view", "read_rule_hints",
    "CHARS_PER_TOKEN", "DEFAULT_TOKEN_BUDGET", "GOLD_MARK", "PROMPT_VERSION", "RUBRIC_SCHEMA", "SLICE_RELATION",
    "Rendered", "ScanReport", "StepView", "TrajectoryView", "estimate_tokens", "model_session", "parse_rubric_reply",
    "read_views", "render_trajectory", "rubric_messages", "rubric_verdicts", "scan", "select_slice", "slice_sql",
]
