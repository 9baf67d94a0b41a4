"""Step rules: which step of a parent trajectory a batch fork branches at (`--at`)."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from trajscope.format import FinalStep, ForcedAnswerStep, Trajectory, counts_as_read

from ._interventions import ForkError

# A rule maps a parent trajectory (and, for warehouse-backed rules, the warehouse's facts about it)
# to a step index, or None when the rule finds no such step (the parent is then skipped, with the reason).
StepRule = Callable[[Trajectory, Mapping[str, object]], int | None]


def _final(parent: Trajectory, facts: Mapping[str, object]) -> int | None:
    """The accepted final (or the forced answer) of the trajectory."""
    for index in range(len(parent.steps) - 1, -1, -1):
        if isinstance(parent.steps[index], (FinalStep, ForcedAnswerStep)):
            return index
    return None


def _first_read(parent: Trajectory, facts: Mapping[str, object]) -> int | None:
    """The first read step that returned a passage (the engine's read rule)."""
    for index, step in enumerate(parent.steps):
        if counts_as_read(step):
            return index
    return None


def _from_facts(parent: Trajectory, facts: Mapping[str, object]) -> int | None:
    """The step a warehouse rule's view names for this parent (column rule_step)."""
    value = facts.get("rule_step")
    return None if value is None else int(value)  # type: ignore[call-overload]


# Extensible: a rule read from the warehouse names a view keyed by trajectory_id and the columns the
# batch reads from it, as {view column: fact name}; "rule_step" must be among the fact names.
STEP_RULES: dict[str, StepRule] = {"final": _final, "first_read": _first_read}
WAREHOUSE_RULES: dict[str, tuple[str, dict[str, str]]] = {}


def register_warehouse_rule(name: str, view: str, columns: Mapping[str, str]) -> None:
    """Make `--at NAME` take the step from a view's column (the one mapped to "rule_step")."""
    if "rule_step" not in columns.values():
        raise ValueError("a warehouse rule maps one column to 'rule_step'")
    WAREHOUSE_RULES[name] = (view, dict(columns))
    STEP_RULES[name] = _from_facts


# The first_decisive_error view (docs/definitions.md): the decisive step, its rule and the lost gold chunk.
register_warehouse_rule("first_decisive_error", "first_decisive_error",
                        {"step_index": "rule_step", "rule": "decisive_rule", "chunk_id": "decisive_chunk_id"})


def step_for(rule: str, parent: Trajectory, facts: Mapping[str, object] | None = None) -> int | None:
    """The step a rule (a number or a rule name) picks in the parent, or None when the rule finds none."""
    if rule.lstrip("-").isdigit():
        index = int(rule)
        return index if index >= 0 else len(parent.steps) + index
    if rule not in STEP_RULES:
        raise ForkError(f"unknown step rule {rule!r}; give a step number or one of: {', '.join(STEP_RULES)}")
    return STEP_RULES[rule](parent, facts or {})
