"""What one tool call returns to the controller."""
from __future__ import annotations

from dataclasses import dataclass, field

from trajscope.format import Step


@dataclass
class ToolResult:
    """The canonical step to log, the observation text for the model, and steps to log after it.

    tokens and latency on the step are left None: the controller fills them.
    """

    step: Step
    text: str
    extra_steps: list[Step] = field(default_factory=list)
