"""One tool execution a tracing product recorded (a Langfuse TOOL observation, a LangSmith tool run, a Weave
execute_tool span) as a canonical step: its action from the tool table and the name rules."""
from __future__ import annotations

from typing import Any

from trajscope.format import READ_KIND, ErrorStep, Step

from ._actions import SEARCH_ACTIONS, chunk_ids_of, make_step
from ._chat import chat_action
from ._context import ImportContext
from ._documents import candidates, documents_of, passages


def traced_tool_step(ctx: ImportContext, *, name: str | None, args: dict[str, Any], observation: str | None,
                     result: Any, retriever: bool = False, error: str | None = None, **common: Any) -> Step:
    """The step of one traced tool call; `result` is its decoded output (documents in it are candidates or
    passages). A read-named tool whose call names no passage (`get_weather(city)`) stays a generic tool."""
    fields: dict[str, Any] = dict(tool_name=name, args=args, observation=observation, **common)
    if error:
        return ErrorStep(error_type="tool_error", message=error, **fields)
    action = chat_action(ctx, name)
    if retriever and action not in SEARCH_ACTIONS:
        action = "search"
    docs = documents_of(result)
    if action in SEARCH_ACTIONS:
        return make_step(action, candidates=candidates(docs), **fields)
    if action == READ_KIND and docs:
        return make_step(action, chunk_ids=[d.doc_id for d in docs], passages=passages(docs), **fields)
    if action == READ_KIND and not chunk_ids_of(args):
        action = None
    return make_step(action, **fields)
