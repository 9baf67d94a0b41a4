"""The documented set of fork interventions, read from fork_interventions.json: the one definition that
engine.forks implements, the CLI checks and the dashboard builds fork commands from."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

# Where an intervention acts: the model reply that produced the step (rewritten or re-asked), the
# environment's answer to the step's action, or the review of the step's final.
Hook = Literal["reply", "environment", "review"]


class ForkInterventionKind(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One entry of the set: name, where it acts, what its argument is, whether it needs one, what it changes."""

    name: str
    hook: Hook
    argument: str  # what ARGUMENT means ("" when it takes none)
    required: bool
    effect: str


FORK_INTERVENTIONS: dict[str, ForkInterventionKind] = {k.name: k for k in msgspec.json.decode(
    (Path(__file__).parent / "fork_interventions.json").read_bytes(), type=list[ForkInterventionKind])}

__all__ = ["FORK_INTERVENTIONS", "ForkInterventionKind", "Hook"]
