"""One typed record per kind of trajectory step; `Step` is their union, tagged by `kind`."""
from __future__ import annotations

from typing import Any, get_args

from ._records import Record


class Candidate(Record, kw_only=True):
    """A search result the agent saw: chunk id with rank (1-based), score, retriever and snippet."""

    chunk_id: str
    rank: int
    score: float | None = None
    retriever: str | None = None
    snippet: str | None = None


class Passage(Record, kw_only=True):
    """A full passage placed in the agent's context; is_new is False for a re-read."""

    chunk_id: str
    text: str | None = None
    is_new: bool = True


class StepBase(Record, tag_field="kind", kw_only=True):
    """What every step carries; its index is its position in Trajectory.steps."""

    tool_name: str | None = None
    args: dict[str, Any] = {}
    observation: str | None = None
    raw: str | None = None
    thought: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    # True when the model response behind this step came from a response cache: tokens, latency and
    # cost are then those of the original call, not spent again. None when the producer cannot tell.
    cached: bool | None = None
    # Where the step sits in the source log, so human labels that point there find it: `history:3`
    # (a history entry), `message:5` (a chat message), `span:<span id>` (a trace span). None: not recorded.
    source_ref: str | None = None
    # Who acted, in a multi-agent log (the speaker's name); None for a single agent or when not recorded.
    agent: str | None = None


class SearchStep(StepBase, tag="search", kw_only=True):
    """Hybrid search; `deduplicated` when the repeated-query cache answered."""

    query: str | None = None
    candidates: list[Candidate] = []
    deduplicated: bool = False


class KeywordSearchStep(SearchStep, tag="keyword_search", kw_only=True):
    """A-RAG keyword (BM25) search."""


class SemanticSearchStep(SearchStep, tag="semantic_search", kw_only=True):
    """A-RAG semantic (dense) search."""


class ReadStep(StepBase, tag="read", kw_only=True):
    """Reading full passages by chunk id (read / read_chunk / a ReAct look-up)."""

    chunk_ids: list[str] = []
    passages: list[Passage] = []


class FinalStep(StepBase, tag="final", kw_only=True):
    """The agent's final answer, accepted by the environment."""

    answer: str | None = None


class GateRejectionStep(StepBase, tag="gate_rejection", kw_only=True):
    """The environment rejected a `final` (Read-Gate, +lowev, full gate)."""

    gate: str
    rejected_answer: str | None = None
    reason: str | None = None


class ContextInjectionStep(StepBase, tag="context_injection", kw_only=True):
    """Passages appended to an observation without a read action."""

    passages: list[Passage] = []


class RegisterUpdateStep(StepBase, tag="register_update", kw_only=True):
    """The requirement register changed; the transitions are in Trajectory.register_events."""

    phase: str | None = None


class BudgetNudgeStep(StepBase, tag="budget_nudge", kw_only=True):
    """The environment warned that the loop budget is nearly spent."""

    message: str | None = None


class ForcedAnswerStep(StepBase, tag="forced_answer", kw_only=True):
    """An answer the environment forced at the budget."""

    answer: str | None = None


class ToolStep(StepBase, tag="tool", kw_only=True):
    """A call to a tool with no canonical action (calculator, click, ...): name, args, observation."""


class ErrorStep(StepBase, tag="error", kw_only=True):
    """A failure: model error, malformed action, tool error."""

    error_type: str
    message: str | None = None


Step = (
    SearchStep
    | KeywordSearchStep
    | SemanticSearchStep
    | ReadStep
    | FinalStep
    | GateRejectionStep
    | ContextInjectionStep
    | RegisterUpdateStep
    | BudgetNudgeStep
    | ForcedAnswerStep
    | ToolStep
    | ErrorStep
)

STEP_TYPES: tuple[type[StepBase], ...] = get_args(Step)
STEP_KINDS: tuple[str, ...] = tuple(str(t.__struct_config__.tag) for t in STEP_TYPES)
SEARCH_KINDS = ("search", "keyword_search", "semantic_search")


def step_kind(step: StepBase) -> str:
    """The `kind` tag of a step instance."""
    return type(step).__struct_config__.tag  # type: ignore[return-value]
