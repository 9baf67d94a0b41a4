"""smolagents run outputs: one task per record, its agent memory as chat messages (`intermediate_steps`).

Tool-calling agents write each call as a `tool-call` message (a Python repr of the call list) followed by a
`tool-response`; code agents call `python_interpreter`, and the agent's tools called inside that code
(`web_search(...)`, `final_answer(...)`) are calls too, one step each after the interpreter step.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from trajscope.format import FinalStep, Step, Trajectory

from ._actions import DEFAULT_TOOL_MAP, make_step, parse_arguments
from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object, opt_int, opt_object, opt_str
from ._json_stream import iter_records
from ._questions import text_question_id

# smolagents' default tools: `visit_webpage` opens a page (a read, known by its URL).
SMOLAGENTS_TOOL_MAP = {**DEFAULT_TOOL_MAP, "visit_webpage": "read", "page_down": "read", "page_up": "read"}
SMOLAGENTS_NOTES = {"snippets": "web_search returns free text (a markdown result list), never chunk ids",
                    "gold_passages": "smolagents benchmark outputs carry a gold answer (`true_answer`) only"}

_CODE_TOOL = "python_interpreter"
_TOOL_DEF = re.compile(r"^def (\w+)\(([^)]*)\)", re.M)
_NO_ANSWER = (None, "", "None")


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def _code_tools(system_prompt: str) -> dict[str, list[str]]:
    """The agent's tools a code agent may call, with their parameter names (from `def name(a: t, b: t)`)."""
    tools: dict[str, list[str]] = {}
    for name, params in _TOOL_DEF.findall(system_prompt):
        tools[name] = [p.split(":")[0].split("=")[0].strip() for p in params.split(",") if p.strip()]
    return tools


def _calls_of(message: dict[str, Any], text: str, where: Where) -> list[tuple[str, Any]]:
    """(name, arguments) of each call a `tool-call` message makes: its `tool_calls`, else its text."""
    structured = message.get("tool_calls")
    if structured:
        calls = need_list(structured, where.at("tool_calls"))
    else:
        payload = text.split("\n", 1)[1] if "\n" in text else text
        try:
            calls = ast.literal_eval(payload.strip())
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            raise where.error("a tool-call message whose call list is not a readable Python/JSON list",
                              "content") from None
        if not isinstance(calls, list):
            raise where.error("expected a list of tool calls", "content")
    out = []
    for k, call in enumerate(calls):
        at = where.at("tool_calls").at(k)
        function = need_object(call, at).get("function")
        function = need_object(function, at.at("function"))
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise at.error("tool call without a function name", "function.name")
        out.append((name, function.get("arguments")))
    return out


def _literal(node: ast.expr, source: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, RecursionError):
        return {"expression": ast.get_source_segment(source, node)}


def _calls_in_code(code: str, tools: dict[str, list[str]]) -> list[tuple[str, dict[str, Any]]]:
    """Calls of the agent's tools written in generated code, in source order; literal arguments kept."""
    found = sorted((m.start(), name) for name in tools for m in re.finditer(rf"\b{re.escape(name)}\(", code))
    nodes: dict[int, ast.Call] = {}
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        tree = None  # code that does not parse: its calls are still calls, their arguments unknown
    if tree is not None:
        lines = [line + "\n" for line in code.split("\n")]
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in tools:
                column = len(lines[node.lineno - 1].encode("utf-8")[:node.col_offset].decode("utf-8", "replace"))
                nodes[starts[node.lineno - 1] + column] = node
    out = []
    for offset, name in found:
        call = nodes.get(offset)
        args: dict[str, Any] = {}
        if call is not None:
            params = tools[name]
            for i, arg in enumerate(call.args):
                args[params[i] if i < len(params) else f"arg{i}"] = _literal(arg, code)
            args.update({kw.arg or "kwargs": _literal(kw.value, code) for kw in call.keywords})
        out.append((name, args))
    return out


def _observation(text: str) -> str:
    return text[len("Observation:"):].lstrip("\n") if text.startswith("Observation:") else text


def _steps(ctx: ImportContext, messages: list[Any], where: Where) -> tuple[str | None, list[Step]]:
    """(the task text of the first user message, the steps of the memory)."""
    system = next((_text(m) for m in messages if isinstance(m, dict) and m.get("role") == "system"), "")
    tools = _code_tools(system)
    task: str | None = None
    steps: list[Step] = []
    thought: str | None = None
    for i, message in enumerate(messages):
        at = where.at(i)
        message = need_object(message, at)
        role = message.get("role")
        if not isinstance(role, str):
            raise at.error("missing or non-string role", "role")
        text = _text(message)
        if role == "user" and task is None:
            task = text.removeprefix("New task:\n")
        elif role == "assistant":
            thought = text or None
        elif role == "tool-call":
            calls = _calls_of(message, text, at)
            response = messages[i + 1] if i + 1 < len(messages) else None
            observation = (_observation(_text(response)) if isinstance(response, dict)
                           and response.get("role") == "tool-response" else None)
            for k, (name, raw_args) in enumerate(calls):
                ref = f"message:{i}"
                first: dict[str, Any] = dict(thought=thought, observation=observation) if k == 0 else {}
                if name == _CODE_TOOL and isinstance(raw_args, str):
                    inner = _calls_in_code(raw_args, tools)
                    steps.append(make_step(ctx.action(name), tool_name=name, args={"code": raw_args},
                                           source_ref=ref, **first))
                    for tool, args in inner:
                        steps.append(make_step(ctx.action(tool), tool_name=tool, args=args, source_ref=ref,
                                               observation=observation if len(inner) == 1 else None))
                    continue
                args = parse_arguments(raw_args, at.at("tool_calls").at(k).at("function").at("arguments"))
                steps.append(make_step(ctx.action(name), tool_name=name, args=args, source_ref=ref, **first))
            thought = None
    return task, steps


def _iso(value: Any) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC).isoformat().replace("+00:00", "Z")
    return value if isinstance(value, str) else None


def _tokens(usage: dict[str, Any], side: str, where: Where) -> int | None:
    """`input_tokens` / `output_tokens` (tool-calling and code agents) or `input` / `output` (vanilla runs)."""
    value = opt_int(usage, f"{side}_tokens", where)
    return value if value is not None else opt_int(usage, side, where)


def _trajectory(ctx: ImportContext, record: Any, where: Where) -> Trajectory:
    record = need_object(record, where)
    memory = record.get("intermediate_steps")
    task: str | None
    steps: list[Step]
    if memory is None or isinstance(memory, str):  # a vanilla (tool-less) run writes its answer here, or nothing
        task, steps = None, []
    else:
        task, steps = _steps(ctx, need_list(memory, where.at("intermediate_steps")), where.at("intermediate_steps"))
    text = opt_str(record, "question", where) or task
    if not text:
        raise where.error("no question text (neither `question` nor a user message)", "question")
    gold = record.get("true_answer")
    answer = record.get("answer")
    answer = None if answer in _NO_ANSWER else str(answer)
    if answer is not None and not any(isinstance(step, FinalStep) for step in steps):
        # The run wrote an answer the memory does not show as a final_answer call (a forced answer).
        steps.append(make_step("final", tool_name=None, args={}, answer=answer))
    sid = record.get("task_id") or record.get("id")
    question = ctx.question(where, source_id=str(sid) if sid is not None else text_question_id(text), text=text,
                            gold=None if gold is None else str(gold))
    usage = opt_object(record, "token_counts", where)
    kind = opt_str(record, "agent_action_type", where)
    run = ctx.run(model=opt_str(record, "model_id", where), dataset=opt_str(record, "source", where),
                  config={"agent_action_type": kind} if kind else {})
    return assemble(ctx, run=run, question=question, steps=steps, final_answer=answer,
                    started_at=_iso(record.get("start_time")), finished_at=_iso(record.get("end_time")),
                    total_tokens_in=_tokens(usage, "input", where.at("token_counts")),
                    total_tokens_out=_tokens(usage, "output", where.at("token_counts")),
                    metadata={k: record[k] for k in ("original_question", "source") if record.get(k) is not None})


def import_smolagents(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per task record (JSONL, or a JSON array of records)."""
    for line, key, record in iter_records(ctx.path):
        yield _trajectory(ctx, record, ctx.where(line, key or ""))
