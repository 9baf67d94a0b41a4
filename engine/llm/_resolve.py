"""Turning a `--model` spec ("local", "local:NAME", "mock:<url>", or a model name) into a ModelConfig."""
from __future__ import annotations

import os
from typing import Any

from ._config import ModelConfig, default_prices
from ._local_server import LOCAL_MODEL_NAME, LOCAL_MODELS, LocalModelError, local_runtime


def resolve_model(
    spec: str, *, base_url: str | None = None, api_key_env: str = "OPENAI_API_KEY", **settings: Any
) -> ModelConfig:
    """"local[:NAME]" (an embedded model, JSON protocol), "mock:<url>" (a loopback mock), else an endpoint."""
    settings = {k: v for k, v in settings.items() if v is not None}
    prices = settings.pop("prices", None) or default_prices()
    if spec == "local" or spec.startswith("local:"):
        name = spec.removeprefix("local").removeprefix(":") or LOCAL_MODEL_NAME
        if name not in LOCAL_MODELS:
            raise ValueError(f"unknown embedded model {name!r} in {spec!r}: choose local:"
                             + " or local:".join(LOCAL_MODELS))
        settings.setdefault("protocol", "json")
        settings.setdefault("max_tokens", 256)
        try:  # the runtimes' kernels differ in the last digits, so their answers are cached apart
            namespace = f"local:{name}@{local_runtime()}"
        except LocalModelError:  # the server's start says which package is missing
            namespace = f"local:{name}"
        return ModelConfig(
            name=name, base_url=None, api_key="not-needed", schema_format="json_object",
            cache_namespace=namespace, local=True, prices={**prices, name: (0.0, 0.0)}, **settings,
        )
    if spec.startswith("mock:"):
        url = spec.removeprefix("mock:")
        if not url.rstrip("/").endswith("/v1"):
            url = url.rstrip("/") + "/v1"
        return ModelConfig(name="mock", base_url=url, api_key="mock-key", prices=prices, **settings)
    if not spec:
        raise ValueError("empty model spec: use 'local', 'local:NAME', 'mock:<url>' or a model name")
    openai_url = base_url or os.environ.get("OPENAI_BASE_URL")
    return ModelConfig(name=spec, base_url=openai_url, api_key_env=api_key_env, prices=prices, **settings)
