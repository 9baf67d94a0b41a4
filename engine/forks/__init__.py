"""Counterfactual re-runs: fork a logged trajectory at step k, change one thing, run the rest (docs/forks.md)."""
from ._episode import ForkController, ForkModel, ForkPlan, ForkProbe, comparable
from ._interventions import INTERVENTIONS, ForkError, Intervention, parse_intervention, placebo_chunk, resolve
from ._rules import STEP_RULES, WAREHOUSE_RULES, register_warehouse_rule, step_for
from ._run import (
    ForkSummary,
    ImportedSetup,
    fork_many,
    fork_one,
    fork_run_id,
    imported_reason,
    load_log,
    load_parent,
    parent_model_spec,
    plan_forks,
    refuse_reason,
    select_parents,
)

__all__ = [
    "ForkController", "ForkError", "ForkModel", "ForkPlan", "ForkProbe", "ForkSummary", "INTERVENTIONS",
    "ImportedSetup", "Intervention", "STEP_RULES", "WAREHOUSE_RULES", "comparable", "fork_many", "fork_one",
    "fork_run_id", "imported_reason", "load_log", "load_parent", "parent_model_spec", "parse_intervention",
    "placebo_chunk", "plan_forks", "refuse_reason", "register_warehouse_rule", "resolve", "select_parents",
    "step_for",
]
