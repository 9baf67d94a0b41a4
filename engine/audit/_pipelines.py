"""Compile-then-read pipelines B1-B4: raw context, compile by A or B, compile by A then verify by B, the reader."""
from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trajscope.engine.llm import ChatModel, ModelError
from trajscope.engine.prompts import render_prompt
from trajscope.format import Chunk, ModelCall

# Verification modes of B4 (paper appendix 10): the baseline name each one produces.
VERIFY_BASELINES: dict[str, str] = {"hard": "b4", "soft": "b4s", "label": "b4lr"}
_VERIFY_PROMPTS = {"hard": "audit_verify_hard", "soft": "audit_verify_soft", "label": "audit_verify_label"}


@dataclass(frozen=True)
class Decoding:
    """Sampling settings of one role (compiler or reader)."""

    temperature: float
    top_p: float
    max_tokens: int

    def request(self) -> dict[str, Any]:
        """The overrides passed to ChatModel.complete."""
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}


# The paper's decoding (section 2 and appendix 19).
COMPILE_DECODING = Decoding(temperature=0.2, top_p=0.95, max_tokens=2048)
READER_DECODING = Decoding(temperature=0.01, top_p=0.95, max_tokens=512)


def raw_context(passages: Sequence[Chunk]) -> str:
    """B1: the retrieved passages as the reader sees them, "Title: text" blocks separated by blank lines."""
    return "\n\n".join(f"{p.title}: {p.text}" if p.title else p.text for p in passages)


def compile_messages(question: str, documents: str) -> list[dict[str, str]]:
    """The compiler (B2 / B3) request: the question and all raw passages."""
    return [{"role": "user", "content": render_prompt("audit_compile", question=question, documents=documents)}]


def blind_compile_messages(documents: str) -> list[dict[str, str]]:
    """The question-blind compiler request (AP §14): the same passages, no question."""
    return [{"role": "user", "content": render_prompt("audit_compile_blind", documents=documents)}]


def verify_messages(mode: str, documents: str, summary: str) -> list[dict[str, str]]:
    """The verifier request of one B4 mode (hard rewrite, soft annotation, label-only)."""
    if mode not in _VERIFY_PROMPTS:
        raise ValueError(f"unknown verification mode {mode!r}; choose from {', '.join(_VERIFY_PROMPTS)}")
    text = render_prompt(_VERIFY_PROMPTS[mode], documents=documents, summary=summary)
    return [{"role": "user", "content": text}]


def reader_messages(context: str, question: str) -> list[dict[str, str]]:
    """The reader request; identical for raw, compiled and edited contexts, only Context changes."""
    return [{"role": "user", "content": render_prompt("audit_reader", context=context, question=question)}]


@dataclass(frozen=True)
class CallResult:
    """A model call's text (None on failure) and its telemetry."""

    text: str | None
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_ms: float | None = None
    cost_usd: float | None = None
    cached: bool | None = None
    error: str | None = None

    def as_call(self, role: str, baseline: str, model: str) -> ModelCall:
        """The record's telemetry entry for a compile / verify call."""
        return ModelCall(role=role, baseline=baseline, model=model, tokens_in=self.tokens_in,  # type: ignore[arg-type]
                         tokens_out=self.tokens_out, latency_ms=self.latency_ms, cost_usd=self.cost_usd,
                         cached=self.cached, error=self.error)


async def call_model(model: ChatModel, messages: list[dict[str, str]], decoding: Decoding,
                     limit: asyncio.Semaphore) -> CallResult:
    """One completion under the shared concurrency limit; a ModelError becomes a recorded failure."""
    async with limit:
        try:
            c = await model.complete(messages, **decoding.request())
        except ModelError as exc:
            return CallResult(None, error=str(exc))
    return CallResult(c.text.strip(), c.tokens_in, c.tokens_out, c.latency_ms, c.cost_usd, c.cached)


__all__ = [
    "COMPILE_DECODING", "READER_DECODING", "VERIFY_BASELINES", "CallResult", "Decoding",
    "blind_compile_messages", "call_model", "compile_messages", "raw_context", "reader_messages", "verify_messages",
]
