"""OpenAI chat-completions logs: records holding a `messages` list with `tool_calls` and `tool` turns.

Most agent frameworks and RL rollouts log this shape: the assistant's tool calls (`function.name`,
JSON `arguments`), each `tool` turn's output by `tool_call_id` (often JSON documents), a closing
assistant answer, and beside the list the question, the gold and per-record fields (scores, labels).
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from trajscope.format import READ_KIND, ErrorStep, FinalStep, Judgment, Step, Trajectory

from ._actions import SEARCH_ACTIONS, make_step, parse_arguments
from ._context import ImportContext, assemble
from ._documents import candidates, decoded, documents_of, passages, result_error
from ._fields import Where, as_text, need_list, need_object, score_value
from ._json_stream import iter_records
from ._questions import plain_question, text_question_id

_MESSAGES_KEY = "messages"
_ID_KEYS = ("question_id", "qid", "id", "_id", "sample_id", "idx", "index")
_QUESTION_KEYS = ("question", "query", "problem")
_GOLD_KEYS = ("ground_truth", "gold_answer", "answer", "gold", "golden_answers", "answers", "reference",
              "expected_answer", "target")
# The source's own verdicts (kept as judgments beside what `trajscope judge` adds).
_VERDICT_KEYS = {"em": ("em", "exact_match"), "f1": ("f1", "f1_score"), "contain": ("contain", "contain_accuracy"),
                 "llm": ("llm_accuracy", "llm_judge")}
_CORRECT_KEYS = ("correct", "is_correct")

# Default name rules for tools the table does not name, by the words of the name (`search_docs`,
# `fetchPage`, `submit_final_answer`): checked in this order; the first that matches wins.
_FINAL_WORDS = frozenset({"final", "finish", "submit", "answer", "respond", "reply"})
_READ_FIRST_WORDS = frozenset({"read", "open", "fetch", "browse", "visit", "view", "get", "load"})
_SEARCH_WORDS = frozenset({"search", "retrieve", "retrieval", "retriever", "query", "find", "lookup"})
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def name_rule(name: str) -> str | None:
    """The canonical action the default name rules give a tool the table lacks (None: a generic tool)."""
    words = [w.lower() for w in _WORD.findall(name)]
    if not words:
        return None
    if _FINAL_WORDS & set(words):
        return "final"
    if words[0] in _READ_FIRST_WORDS:
        return READ_KIND
    if _SEARCH_WORDS & set(words):
        return "search"
    return None


def chat_action(ctx: ImportContext, name: str | None) -> str | None:
    """The table's action (`--tool-map` included; `tool` keeps it generic), else the name rules."""
    if not name:
        return None
    key = name.strip().lower()
    if key in ctx.tool_map:
        return ctx.action(name)
    return name_rule(name)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return as_text(content)


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    return next(((k, record[k]) for k in keys if record.get(k) is not None), (None, None))


def _gold(record: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    key, value = _pick(record, _GOLD_KEYS)
    if isinstance(value, list):
        golds = [str(v) for v in value if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        return key, (golds[0] if golds else None), golds[1:]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return key, str(value), []
    return key, (value if isinstance(value, str) else None), []


def _judgments(record: dict[str, Any], where: Where) -> tuple[list[Judgment], set[str]]:
    out, used = [], set()
    for judge, keys in _VERDICT_KEYS.items():
        key, value = _pick(record, keys)
        if key is not None:
            out.append(Judgment(judge=judge, score=score_value(value, where.at(key)),  # type: ignore[arg-type]
                                rationale=f"source field `{key}`"))
            used.add(key)
    key, value = _pick(record, _CORRECT_KEYS)
    if key is not None and isinstance(value, bool) and not any(j.judge == "em" for j in out):
        out.append(Judgment(judge="em", score=1.0 if value else 0.0, rationale=f"source field `{key}`"))
        used.add(key)
    return out, used


def _tool_step(ctx: ImportContext, call: dict[str, Any], where: Where, result: tuple[Any, str | None] | None,
               thought: str | None) -> Step:
    function = call.get("function") if isinstance(call.get("function"), dict) else call
    name = function.get("name")
    if not isinstance(name, str) or not name:
        raise where.error("tool call without a function name", "function.name")
    args = parse_arguments(function.get("arguments"), where.at("function").at("arguments"))
    action = chat_action(ctx, name)
    value, observation = result if result is not None else (None, None)
    common: dict[str, Any] = dict(tool_name=name, args=args, observation=observation, thought=thought)
    if result is not None and (error := result_error(value)) is not None:
        return ErrorStep(error_type="tool_error", message=error, **common)
    docs = documents_of(value) if result is not None else []
    if action in SEARCH_ACTIONS:
        return make_step(action, candidates=candidates(docs), **common)
    if action == READ_KIND and docs:
        return make_step(action, chunk_ids=[d.doc_id for d in docs], passages=passages(docs), **common)
    return make_step(action, **common)


def chat_steps(ctx: ImportContext, messages: list[Any], where: Where) -> tuple[str | None, list[Step], str | None]:
    """(first user message, steps, the closing assistant message when a final tool already answered)."""
    results: dict[str, tuple[Any, str | None]] = {}
    for i, message in enumerate(messages):
        if isinstance(message, dict) and message.get("role") in ("tool", "function"):
            call_id = message.get("tool_call_id") or message.get("name")
            text = _text(message.get("content"))
            if isinstance(call_id, str):
                results.setdefault(call_id, (decoded(text, where.at(i).at("content")), text))
    question: str | None = None
    steps: list[Step] = []
    assistant = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    closing: str | None = None
    thought: str | None = None
    for i, message in enumerate(messages):
        at = where.at(i)
        message = need_object(message, at)
        role = message.get("role")
        if not isinstance(role, str):
            raise at.error("missing or non-string role", "role")
        content = _text(message.get("content"))
        if role == "user" and question is None:
            question = content
        if role != "assistant":
            continue
        calls = message.get("tool_calls") or ([message["function_call"]] if message.get("function_call") else [])
        calls = need_list(calls, at.at("tool_calls"))
        thought = "\n".join(t for t in (thought, content) if t and t.strip()) or None
        if not calls:
            if i == assistant[-1] and content and content.strip():
                if any(isinstance(s, FinalStep) for s in steps):
                    closing = content  # a final tool already answered; the closing text is kept aside
                else:
                    steps.append(make_step("final", tool_name=None, args={}, answer=content.strip(),
                                           source_ref=f"message:{i}"))
            continue  # an intermediate message without a call is the thought of the next call
        for k, call in enumerate(calls):
            call_at = at.at("tool_calls").at(k)
            call = need_object(call, call_at)
            call_id = call.get("id")
            result = results.get(call_id) if isinstance(call_id, str) else None
            if result is None and "function_call" in message:
                result = results.get(call.get("name"))
            step = _tool_step(ctx, call, call_at, result, thought if k == 0 else None)
            # The step keeps its message index: per-step human labels point there.
            steps.append(msgspec.structs.replace(step, source_ref=f"message:{i}"))
        thought = None
    return question, steps, closing


_SEEN_KEYS = frozenset({_MESSAGES_KEY, *_ID_KEYS, *_QUESTION_KEYS})


def _trajectory(ctx: ImportContext, record: Any, where: Where, position: int,
                attempts: dict[str, dict[str, int]]) -> Trajectory:
    record = need_object(record, where)
    messages = need_list(record.get(_MESSAGES_KEY), where.at(_MESSAGES_KEY))
    first_user, steps, closing = chat_steps(ctx, messages, where.at(_MESSAGES_KEY))
    id_key, own_id = _pick(record, _ID_KEYS)
    if own_id is not None and (isinstance(own_id, bool) or not isinstance(own_id, (str, int))):
        raise where.error("expected a string or integer id", id_key)
    q_key, text = _pick(record, _QUESTION_KEYS)
    text = text if isinstance(text, str) else first_user
    gold_key, gold, aliases = _gold(record)
    if ctx.questions is not None:
        question = ctx.question(where, source_id=None if own_id is None else str(own_id), index=position,
                                text=text, gold=gold)
    else:
        qid = str(own_id) if own_id is not None else text_question_id(text or "")
        question = plain_question(where, qid, text, gold)
        question.aliases = aliases
    judgments, used = _judgments(record, where)
    metadata = {k: v for k, v in record.items() if k not in _SEEN_KEYS and k != gold_key and k not in used}
    if closing is not None:
        metadata["closing_message"] = closing
    # The same question again in one file with other content (several rollouts): the k-th is run
    # `<run_id>:attempt<k>`; an identical repeat stays in its first run, where it is dropped as a duplicate.
    digest = hashlib.blake2b(json.dumps(record, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()
    versions = attempts.setdefault(question.question_id, {})
    k = versions.setdefault(digest, len(versions) + 1)
    run = ctx.run(f"{ctx.run_id}:attempt{k}" if k > 1 else None)
    return assemble(ctx, run=run, question=question, steps=steps, judgments=judgments, metadata=metadata)


def import_chat(ctx: ImportContext) -> Iterator[Trajectory]:
    """Stream a JSONL (or JSON array) of chat-completions records, one trajectory each."""
    attempts: dict[str, dict[str, int]] = {}
    position = 0
    for line, key, value in iter_records(ctx.path):
        items = value if key is None and isinstance(value, list) else [value]
        for i, item in enumerate(items):
            prefix = key if key and key.startswith("[") else (f"[{i}]" if item is not value else "")
            yield _trajectory(ctx, item, ctx.where(line, prefix), position, attempts)
            position += 1
