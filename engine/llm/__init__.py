"""The model client: one async chat interface for every OpenAI-compatible endpoint and the embedded model."""
from ._cache import ResponseCache, default_cache_path, request_key
from ._client import ChatModel, ModelUsage
from ._completion import Completion, ToolCall, parse_json_object, parse_tool_call
from ._config import DEFAULT_PRICES, ModelConfig, default_prices, load_price_table
from ._errors import ModelError
from ._local_server import (
    LOCAL_MODEL_NAME,
    LOCAL_MODELS,
    LOCAL_RUNTIMES,
    LocalModel,
    LocalModelError,
    LocalModelServer,
    find_local_gguf,
    free_port,
    local_model,
    local_runtime,
    omp_wait_policy,
)
from ._resolve import resolve_model

__all__ = [
    "DEFAULT_PRICES", "LOCAL_MODELS", "LOCAL_MODEL_NAME", "LOCAL_RUNTIMES", "ChatModel", "Completion", "LocalModel",
    "LocalModelError", "LocalModelServer", "ModelConfig", "ModelError", "ModelUsage", "ResponseCache", "ToolCall",
    "default_cache_path", "default_prices", "find_local_gguf", "free_port", "load_price_table", "local_model",
    "local_runtime", "omp_wait_policy", "parse_json_object", "parse_tool_call", "request_key", "resolve_model",
]
