"""Model configuration: endpoint, decoding settings, protocol, retries and the price table."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from trajscope.format import ModelSettings

Protocol = Literal["tools", "json"]
SchemaFormat = Literal["json_object", "json_schema"]

# USD per 1k tokens (input, output). Public list prices at the time of writing; override with
# `--prices FILE` / $TRAJSCOPE_PRICES (a JSON or YAML mapping model -> [in, out]).
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (0.0025, 0.010),
    "gpt-4o-mini": (0.00015, 0.0006),
    "gpt-4.1": (0.002, 0.008),
    "gpt-4.1-mini": (0.0004, 0.0016),
    "gpt-4.1-nano": (0.0001, 0.0004),
    "gpt-5": (0.00125, 0.010),
    "gpt-5-mini": (0.00025, 0.002),
    "gpt-5-nano": (0.00005, 0.0004),
    "o4-mini": (0.0011, 0.0044),
    "smollm2-135m-instruct": (0.0, 0.0),
    "mock": (0.0, 0.0),
}


ENV_MAX_REPLY_MB = "TRAJSCOPE_LLM_MAX_REPLY_MB"
ENV_DEADLINE_S = "TRAJSCOPE_LLM_DEADLINE_S"
DEFAULT_MAX_REPLY_MB = 8.0  # a chat completion is kilobytes; 8 MB leaves room for long tool calls
DEFAULT_DEADLINE_S = 180.0  # the whole request, headers to last byte: a dripping endpoint cannot outlast it


def _positive_env(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${name}={raw!r} is not a number") from None
    if not value > 0 or value == float("inf"):
        raise ValueError(f"${name} must be a positive finite number, got {raw!r} (no bound can be switched off)")
    return value


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to call one chat model; the key itself is never serialised."""

    name: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False, compare=False)
    api_key_env: str = "OPENAI_API_KEY"
    protocol: Protocol = "tools"
    schema_format: SchemaFormat = "json_schema"
    temperature: float | None = 0.0
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    seed: int | None = None
    timeout_s: float = 60.0  # between bytes (the HTTP client's read timeout)
    # Per request: the reply's bytes are counted as they arrive and the whole request has a deadline.
    max_reply_mb: float = field(default_factory=lambda: _positive_env(ENV_MAX_REPLY_MB, DEFAULT_MAX_REPLY_MB))
    deadline_s: float = field(default_factory=lambda: _positive_env(ENV_DEADLINE_S, DEFAULT_DEADLINE_S))
    max_retries: int = 3
    backoff_base_s: float = 0.5
    backoff_max_s: float = 20.0
    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    # What identifies the model in cache keys; an embedded server's random port must not count.
    cache_namespace: str | None = None
    local: bool = False

    def resolved_api_key(self) -> str:
        """The key to send: explicit value, else the named environment variable, else a placeholder."""
        return self.api_key or os.environ.get(self.api_key_env) or "not-needed"

    def price(self) -> tuple[float, float] | None:
        """(usd_per_1k_in, usd_per_1k_out) for this model, matching the longest known prefix."""
        if self.name in self.prices:
            return self.prices[self.name]
        matches = [k for k in self.prices if self.name.startswith(k)]
        return self.prices[max(matches, key=len)] if matches else None

    def cost_usd(self, tokens_in: int | None, tokens_out: int | None) -> float | None:
        """Cost of one call from the price table; None when the model's price is unknown."""
        price = self.price()
        if price is None or tokens_in is None or tokens_out is None:
            return None
        return tokens_in / 1000 * price[0] + tokens_out / 1000 * price[1]

    def settings(self) -> ModelSettings:
        """The canonical decoding-settings record (no key)."""
        return ModelSettings(
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            reasoning_effort=self.reasoning_effort,
            protocol=self.protocol,
            base_url=None if self.local else self.base_url,
            max_reply_mb=self.max_reply_mb,
            deadline_s=self.deadline_s,
        )

    def with_overrides(self, **changes: object) -> ModelConfig:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


def load_price_table(path: str | Path) -> dict[str, tuple[float, float]]:
    """Read a price table file (JSON or YAML mapping model -> [usd_per_1k_in, usd_per_1k_out])."""
    from trajscope.format import read_side_text  # a FIFO or device refused before it is opened, 16 MB at most

    text = read_side_text(path, "price table")
    if str(path).endswith((".yaml", ".yml")):
        from trajscope.ingest.importers import load_yaml  # aliases expanded within the limit, as every YAML

        data = load_yaml(text, path, "price table")
    else:
        data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: price table must be a mapping of model -> [in, out]")
    table: dict[str, tuple[float, float]] = {}
    for model, pair in data.items():
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{path}: field {model}: expected [usd_per_1k_in, usd_per_1k_out]")
        table[str(model)] = (float(pair[0]), float(pair[1]))
    return table


def default_prices() -> dict[str, tuple[float, float]]:
    """The built-in table merged with $TRAJSCOPE_PRICES when set."""
    table = dict(DEFAULT_PRICES)
    extra = os.environ.get("TRAJSCOPE_PRICES")
    if extra:
        table.update(load_price_table(extra))
    return table
