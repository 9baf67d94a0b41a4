"""The SQL text of every page's tables and figures, built from warehouse views with literal values."""
from ._breakdowns import failure_breakdown_sql, hop_breakdown_sql, type_breakdown_sql
from ._funnel import (
    decisive_error_summary_sql,
    funnel_summary_sql,
    replay_decisive_sql,
    replay_funnel_sql,
    replay_human_labels_sql,
)
from ._overview import (
    overview_contents_sql,
    overview_gate_rejections_sql,
    overview_pairs_sql,
    overview_plane_moves_sql,
)
from ._plane import failure_plane_sql, plane_arrows_sql, plane_failures_sql
from ._replay import (
    question_choices_sql,
    replay_candidates_sql,
    replay_evidence_sql,
    replay_header_sql,
    replay_judgments_sql,
    replay_labels_sql,
    replay_peers_sql,
    replay_reads_sql,
    replay_register_sql,
    replay_steps_sql,
    run_choices_sql,
)
from ._runs import (
    CAPABILITIES,
    RunFilters,
    run_capabilities_sql,
    run_filter_options_sql,
    run_trajectories_sql,
    runs_sql,
    transition_questions_sql,
)
from ._schema import schema_columns_sql, schema_relations_sql
from ._search import cluster_sizes_sql, rubric_choices_sql, trajectory_verdicts_sql, verdict_steps_sql, verdicts_sql
from ._step_methods import replay_step_methods_sql

__all__ = [
    "replay_step_methods_sql",
    "cluster_sizes_sql", "rubric_choices_sql", "trajectory_verdicts_sql", "verdict_steps_sql", "verdicts_sql",
    "CAPABILITIES", "RunFilters", "decisive_error_summary_sql", "failure_breakdown_sql",
    "funnel_summary_sql", "replay_decisive_sql", "replay_funnel_sql", "replay_human_labels_sql", "failure_plane_sql",
    "hop_breakdown_sql",
    "overview_contents_sql", "overview_gate_rejections_sql", "overview_pairs_sql", "overview_plane_moves_sql",
    "plane_arrows_sql", "plane_failures_sql", "question_choices_sql", "replay_candidates_sql", "replay_evidence_sql",
    "replay_header_sql", "replay_judgments_sql", "replay_labels_sql", "replay_peers_sql", "replay_reads_sql",
    "replay_register_sql", "replay_steps_sql", "run_capabilities_sql", "run_choices_sql", "run_filter_options_sql",
    "run_trajectories_sql",
    "runs_sql", "schema_columns_sql", "schema_relations_sql", "transition_questions_sql", "type_breakdown_sql",
]
