"""What a step shows a peer as its input and output, whatever the format (span values, messages, tool results)."""
from __future__ import annotations

from typing import Any

from trajscope.format import (
    BudgetNudgeStep,
    ContextInjectionStep,
    ErrorStep,
    ForcedAnswerStep,
    GateRejectionStep,
    RegisterUpdateStep,
    Step,
    step_kind,
)


def step_input(step: Step) -> dict[str, Any]:
    """A tool call's arguments as logged; for the environment's own steps, what it acted on."""
    if isinstance(step, GateRejectionStep):
        return {"gate": step.gate, "rejected_answer": step.rejected_answer}
    if isinstance(step, RegisterUpdateStep):
        return {"phase": step.phase, **step.args}
    if isinstance(step, ContextInjectionStep):
        return {"chunk_ids": [p.chunk_id for p in step.passages]}
    if isinstance(step, ErrorStep) and step.tool_name is None:
        return {"error_type": step.error_type}
    return dict(step.args)


def step_output(step: Step) -> str | None:
    """The observation the agent got back (for the environment's steps: its message, reason or answer)."""
    if step.observation is not None:
        return step.observation
    if isinstance(step, GateRejectionStep):
        return step.reason
    if isinstance(step, BudgetNudgeStep):
        return step.message
    if isinstance(step, ForcedAnswerStep):
        return step.answer
    if isinstance(step, ErrorStep):
        return step.message
    return None


def step_label(step: Step) -> str:
    """A short name for a step without a tool (system messages, span names)."""
    return step.tool_name or step_kind(step)
