"""Context spent, one definition for every controller: the prompt tokens of every model call, summed.

ExecutionRAG App. B: "a cumulative context budget of 128,000 tokens"; A-RAG, its matched baseline, runs
under the same rule: with its current context size instead, at 100 prompt tokens a call and a 1,000 budget
ExecutionRAG would be forced after 10 calls while A-RAG ran all 15 loops.
"""
from __future__ import annotations

from typing import Any

from trajscope.engine.environment import estimate_tokens

# Written into each trajectory's metadata, so a report can check that compared arms ran under one rule.
CONTEXT_BUDGET_RULE = "cumulative_prompt_tokens"


class ContextBudget:
    """The context a model was shown over one episode, against an optional limit (None: no budget)."""

    def __init__(self, limit: int | None, metadata: dict[str, Any]):
        self.limit, self.metadata, self.spent = limit, metadata, 0
        metadata["context_budget_rule"] = CONTEXT_BUDGET_RULE
        metadata["context_token_budget"] = limit
        metadata["context_tokens_seen"] = 0

    @property
    def exceeded(self) -> bool:
        """True once the summed prompt tokens are above the limit: the answer is then forced."""
        return self.limit is not None and self.spent > self.limit

    def charge(self, prompt: str, completion: Any) -> None:
        """Add one call's prompt: the endpoint's count when it reports one, else the estimate of its text."""
        seen = getattr(completion, "tokens_in", None)
        self.spent += int(seen) if seen is not None else estimate_tokens(prompt)
        self.metadata["context_tokens_seen"] = self.spent


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The text of a chat prompt, for the estimate when the endpoint reports no count."""
    return "\n".join(str(m.get("content") or "") for m in messages)


def forced_end_reason(budget: ContextBudget) -> str:
    """Why a forced answer was forced: the context budget, else the loop (turn) cap."""
    return "context_budget" if budget.exceeded else "loop_cap"


__all__ = ["CONTEXT_BUDGET_RULE", "ContextBudget", "forced_end_reason", "prompt_text"]
