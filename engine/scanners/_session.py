"""One model for a scan: the embedded server started when needed, the cached client, calls that never raise."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from tqdm.auto import tqdm

from trajscope.engine.llm import ChatModel, LocalModelServer, ModelConfig, ModelError, ResponseCache

T = TypeVar("T")
R = TypeVar("R")


@asynccontextmanager
async def model_session(config: ModelConfig, cache: ResponseCache | None) -> AsyncIterator[ChatModel]:
    """A ChatModel on config; the embedded model (`local`) is served for the session's length."""
    if config.local and not config.base_url:
        async with LocalModelServer(model=config.name) as server:
            async with ChatModel(config.with_overrides(base_url=server.base_url), cache=cache) as model:
                yield model
        return
    async with ChatModel(config, cache=cache) as model:
        yield model


@dataclass
class CallTally:
    """Calls, tokens, cost and cache hits of the calls behind one verdict."""

    calls: int = 0
    cached: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None

    def add(self, tokens_in: int | None, tokens_out: int | None, cost: float | None, cached: bool) -> None:
        self.calls += 1
        self.cached += int(cached)
        if tokens_in is not None:
            self.tokens_in = (self.tokens_in or 0) + tokens_in
        if tokens_out is not None:
            self.tokens_out = (self.tokens_out or 0) + tokens_out
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    @property
    def all_cached(self) -> bool:
        """Every call was a cache hit (False for no call)."""
        return self.calls > 0 and self.cached == self.calls


async def ask_json(model: Any, messages: list[dict[str, Any]], schema: dict[str, Any],
                   tally: CallTally) -> tuple[dict[str, Any] | None, str | None]:
    """(the JSON object, None) or (None, why not): a failed call or malformed reply is a value, never a raise."""
    try:
        completion = await model.complete(messages, response_schema=schema)
    except ModelError as exc:
        tally.calls += 1
        return None, f"model call failed: {exc}"
    tally.add(completion.tokens_in, completion.tokens_out, completion.cost_usd, completion.cached)
    if completion.parsed is None:
        return None, f"malformed reply ({completion.parse_error}): {completion.text[:200]!r}"
    return completion.parsed, None


async def run_all(items: Sequence[T], work: Callable[[T], Awaitable[R]], *, concurrency: int, desc: str,
                  progress: bool, on_done: Callable[[int, int], None] | None = None) -> list[R]:
    """work(item) for every item, at most `concurrency` at once, with a progress bar; results in item order.
    on_done(done, total) is called after each item (a progress file's writer, say)."""
    gate = asyncio.Semaphore(concurrency)
    bar = tqdm(total=len(items), desc=desc[:40], unit="traj", disable=not progress, dynamic_ncols=True)
    results: list[Any] = [None] * len(items)
    finished = 0

    async def one(k: int, item: T) -> None:
        nonlocal finished
        async with gate:
            results[k] = await work(item)
        bar.update(1)
        finished += 1
        if on_done is not None:
            on_done(finished, len(items))

    try:
        await asyncio.gather(*(one(k, item) for k, item in enumerate(items)))
    finally:
        bar.close()
    return results


__all__ = ["CallTally", "ask_json", "model_session", "run_all"]
