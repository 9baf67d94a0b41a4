"""The documented set of fork interventions, read from fork_interventions.json: the one definition that
engine.forks implements, the CLI checks and the dashboard builds fork commands from."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from ._steps import SEARCH_KINDS

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



def fork_step_refusal(name: str, kind: str, *, args: Mapping[str, Any] | None = None, phase: str | None = None,
                      controller: str | None = None) -> str | None:
    """Why intervention `name` does not apply at a step (None: it does), from what the log says of the step:
    its kind, its arguments, a register step's phase and the run's controller. Said as `NAME does not apply: WHY`."""
    if name in ("replace_query", "remove_decoy", "inject_candidate") and kind not in SEARCH_KINDS:
        return f"it applies to a search step; the step is a {kind}"
    if name == "reject_final":
        if kind != "final":
            return f"it applies to a final step; the step is a {kind}"
        if controller == "execution_rag" and not (args or {}).get("agent_answer"):
            # The register agent's stop is what Read-Gate's corrective observation can reject; this final has none.
            return ("this ExecutionRAG final was composed from the requirement register when it cleared (or by the "
                    "composed variant), not answered by the agent, so there is no agent's final for the Read-Gate "
                    "corrective observation to reject")
    if name == "fix_register" and not (kind == "register_update" and phase == "update"):
        return (f"it applies to a register update step (phase 'update'); the step is a {kind}"
                + (f" ({phase})" if kind == "register_update" else ""))
    return None


__all__ = ["FORK_INTERVENTIONS", "ForkInterventionKind", "Hook", "fork_step_refusal"]
