"""The tool environment agents act in: Read-Gate (search / read / final) and A-RAG tool sets."""
from ._arguments import ArgumentError
from ._environment import ToolEnvironment, normalised_query
from ._result import ToolResult
from ._tokens import TOKENS_PER_WORD, estimate_tokens
from ._toolsets import TOOL_SPECS, TOOLSETS, Toolset, tool_schemas

__all__ = [
    "TOKENS_PER_WORD", "TOOLSETS", "TOOL_SPECS", "ArgumentError", "ToolEnvironment", "ToolResult", "Toolset",
    "estimate_tokens", "normalised_query", "tool_schemas",
]
