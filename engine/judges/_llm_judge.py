"""An LLM judge of semantic equivalence between a predicted and a gold answer (LLM-Acc)."""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trajscope.engine.prompts import render_prompt

PROMPT_NAME = "judge_equivalence"
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"equivalent": {"type": "boolean"}, "rationale": {"type": "string"}},
    "required": ["equivalent", "rationale"],
}


@dataclass(frozen=True)
class EquivalenceItem:
    """One answer to grade."""

    question: str
    gold: str | None
    aliases: list[str]
    prediction: str | None


@dataclass(frozen=True)
class Verdict:
    """The judge's decision; error is set (and equivalent None) when no usable verdict came back."""

    equivalent: bool | None
    rationale: str | None
    error: str | None = None


def _from_text(text: str) -> bool | None:
    # Small models sometimes answer in prose despite the schema; accept a bare yes/true or no/false.
    head = text.strip().lower().lstrip("`\"' {").split(maxsplit=1)
    if not head:
        return None
    word = head[0].strip(".,:;!\"'")
    return {"yes": True, "true": True, "no": False, "false": False}.get(word)


class LLMJudge:
    """Grades answers with any OpenAI-compatible chat model (an engine.llm.ChatModel, cached there)."""

    def __init__(self, model: Any, *, concurrency: int = 8):
        self.model = model
        self.concurrency = concurrency

    @property
    def model_name(self) -> str:
        """The judge_model recorded with every verdict."""
        return str(self.model.config.name)

    def messages(self, item: EquivalenceItem) -> list[dict[str, str]]:
        """The chat messages sent for one item."""
        prompt = render_prompt(
            PROMPT_NAME,
            question=item.question,
            gold=item.gold or "",
            aliases="; ".join(item.aliases) if item.aliases else "(none)",
            prediction=item.prediction or "",
        )
        return [{"role": "user", "content": prompt}]

    async def judge(self, item: EquivalenceItem) -> Verdict:
        """One verdict; an empty prediction or missing gold is not equivalent without a model call."""
        if not (item.prediction or "").strip():
            return Verdict(False, "empty prediction")
        if not (item.gold or "").strip() and not item.aliases:
            return Verdict(None, None, "no gold answer to compare with")
        try:
            completion = await self.model.complete(self.messages(item), response_schema=VERDICT_SCHEMA)
        except Exception as exc:  # noqa: BLE001 - a failed call is recorded as no verdict
            return Verdict(None, None, f"{type(exc).__name__}: {exc}")
        parsed = completion.parsed
        if isinstance(parsed, dict) and isinstance(parsed.get("equivalent"), bool):
            rationale = parsed.get("rationale")
            return Verdict(parsed["equivalent"], str(rationale) if rationale is not None else None)
        fallback = _from_text(completion.text)
        if fallback is not None:
            return Verdict(fallback, completion.text.strip()[:500])
        return Verdict(None, None, f"unparseable judge output: {completion.text[:200]!r}")

    async def judge_many(self, items: Sequence[EquivalenceItem]) -> list[Verdict]:
        """Verdicts in input order, at most `concurrency` requests in flight."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(item: EquivalenceItem) -> Verdict:
            async with gate:
                return await self.judge(item)

        return list(await asyncio.gather(*(one(item) for item in items)))


__all__ = ["PROMPT_NAME", "VERDICT_SCHEMA", "EquivalenceItem", "LLMJudge", "Verdict"]
