"""Keeping a chat history inside a small model's context window."""
from __future__ import annotations

from typing import Any

ELIDED = "[earlier observation elided to fit the context window]"


def approx_tokens(messages: list[dict[str, Any]]) -> int:
    """A cheap token estimate: four characters a token, plus a little per message."""
    total = 0
    for m in messages:
        total += 4 + len(str(m.get("content") or "")) // 4
        for call in m.get("tool_calls") or ():
            total += len(str(call.get("function", {}).get("arguments", ""))) // 4 + 4
    return total


def fit_history(messages: list[dict[str, Any]], max_tokens: int | None, *, keep_head: int = 2,
                keep_tail: int = 2) -> list[dict[str, Any]]:
    """Elide the oldest observations until the history fits; the head and newest turns stay."""
    if max_tokens is None or approx_tokens(messages) <= max_tokens:
        return messages
    fitted = [dict(m) for m in messages]
    for i in range(keep_head, max(keep_head, len(fitted) - keep_tail)):
        if fitted[i].get("role") in ("tool", "user") and fitted[i].get("content") != ELIDED:
            fitted[i]["content"] = ELIDED
            if approx_tokens(fitted) <= max_tokens:
                break
    return fitted
