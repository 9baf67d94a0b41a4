"""OpenAI chat-completions logs: records holding a `messages` list with `tool_calls` and `tool` turns.

Most agent frameworks and RL rollouts log this shape: the assistant's tool calls (`function.name`,
JSON `arguments`), each `tool` turn's output by `tool_call_id` (often JSON documents), a closing
assistant answer, and beside the list the question, the gold and per-record fields (scores, labels).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from trajscope.format import (
    NESTING_LIMIT,
    READ_KIND,
    Candidate,
    ErrorStep,
    FinalStep,
    Judgment,
    RecordError,
    Step,
    ToolStep,
    Trajectory,
)

from ._actions import SEARCH_ACTIONS, answer_of, chunk_ids_of, make_step, parse_arguments
from ._answer_rules import FINAL_ANSWER_TOOL, extract_answer
from ._chat_labels import embedded_labels, human_answer_verdict
from ._chat_messages import ChatMessage, ToolCall, ToolResult, chat_message
from ._context import ImportContext, assemble
from ._documents import decoded, documents_of, passages, result_error
from ._fields import Where, lookup, need_list, need_object, score_value
from ._gold_shapes import gold_strings
from ._json_stream import iter_records
from ._questions import plain_question, text_question_id
from ._search_results import ranked_documents
from ._text_tool_calls import text_calls, text_results

# Where the message list sits: `messages` (chat-completions logs), `traj` (eval harnesses such as
# tau-bench), `conversation` / `chat`.
_MESSAGES_KEYS = ("messages", "traj", "conversation", "chat")
# A graph framework's saved state holding the messages (LangGraph `values`).
_STATE_KEYS = ("values", "state", "output", "outputs")
# A record's own id; a per-record index (`total_index`, `index_in_dataset`) keeps each labelled sample apart.
_ID_KEYS = ("question_id", "qid", "id", "_id", "sample_id", "idx", "index", "task_id", "record_id",
            "index_in_dataset", "total_index")
# Trials of one task in one file (tau-bench `trial`): the run `<run_id>:trial<value>`.
_TRIAL_KEYS = ("trial", "trial_index", "attempt")
_QUESTION_KEYS = ("question", "query", "problem")
# The benchmark a record names: its question ids are that benchmark's, kept apart from another log's equal ids.
_DATASET_KEYS = ("dataset", "data_source")
# The task an eval harness gave its (simulated) user: the same in every trial, unlike the user's first message.
_TASK_PATHS = ("instruction", "info.task.instruction", "task.instruction")
_GOLD_KEYS = ("ground_truth", "gold_answer", "answer", "gold", "golden_answers", "answers", "reference",
              "expected_answer", "target", "true_answer")
_GOLD_PATHS = ("reward_model.ground_truth", "extra_info.answer", "extra_info.golden_answers")
# A reward in [0, 1] from the harness (tau-bench) is its verdict when no other field gives one.
_REWARD_KEYS = ("reward",)
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


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    return next(((k, record[k]) for k in keys if record.get(k) is not None), (None, None))


def _gold(record: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    key, value = _pick(record, _GOLD_KEYS)
    if key is None:  # RL data formats nest it (verl: reward_model.ground_truth); the record keeps that field
        value = next((v for v in (lookup(record, p) for p in _GOLD_PATHS) if v is not None), None)
    golds = gold_strings(value)
    return key, (golds[0] if golds else None), golds[1:]


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
    key, value = _pick(record, _REWARD_KEYS)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key is not None and number and 0.0 <= value <= 1.0 and not out:
        out.append(Judgment(judge="em", score=float(value), rationale=f"source field `{key}` (the harness's reward)"))
        used.add(key)
    return out, used


def _search_candidates(value: Any, text: str | None) -> list[Candidate]:
    return [Candidate(chunk_id=d.doc_id, rank=rank, score=d.score, snippet=d.text)
            for rank, d in ranked_documents(value, text)]


def _query(args: dict[str, Any]) -> str | None:
    """The queries a multi-query search ran (`query_list`), one per line; else None (the usual keys apply)."""
    queries = args.get("query_list") or args.get("queries")
    if isinstance(queries, list) and queries and all(isinstance(q, str) for q in queries):
        return "\n".join(queries)
    return None


def _tool_step(ctx: ImportContext, call: ToolCall, result: ToolResult | None, thought: str | None) -> Step:
    if not isinstance(call.name, str) or not call.name:
        raise call.where.error("tool call without a function name", "function.name")
    name = call.name
    args = parse_arguments(call.arguments, call.where.at("function").at("arguments"))
    action = chat_action(ctx, name)
    value = None
    if result is not None:
        # JSON text is decoded; structured content (a list of documents, a dict) is read as it is
        value = decoded(result.text, result.where) if isinstance(result.content, str) else result.content
    observation = result.text if result is not None else None
    common: dict[str, Any] = dict(tool_name=name, args=args, observation=observation, thought=thought)
    if result is not None and (error := result_error(value)) is not None:
        return ErrorStep(error_type="tool_error", message=error, **common)
    if action in SEARCH_ACTIONS:
        found = _search_candidates(value, observation) if result is not None else []
        return make_step(action, query=_query(args), candidates=found, **common)
    docs = documents_of(value) if result is not None else []
    if action == READ_KIND and docs:
        return make_step(action, chunk_ids=[d.doc_id for d in docs], passages=passages(docs), **common)
    if action == READ_KIND and not chunk_ids_of(args):
        action = None  # a read-named tool that names no passage (`get_user_details(user_id)`) is a generic tool
    return make_step(action, **common)


def _read_messages(messages: list[Any], where: Where) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    called_in_text = False  # the last assistant turn wrote its calls in its text: the next user turn answers
    for i, raw in enumerate(messages):
        message = chat_message(need_object(raw, where.at(i)), where.at(i))
        if message.role is None:
            raise where.at(i).error("missing or non-string role", "role")
        if message.role == "assistant" and not message.continues:
            found = text_calls(message, where.at(i))
            called_in_text = bool(found)
            message = dataclasses.replace(message, calls=found) if found else message
        elif message.role == "user" and called_in_text:
            results = text_results(message, where.at(i))
            called_in_text = False
            message = dataclasses.replace(message, role="tool", results=results) if results else message
        previous = out[-1] if out else None
        if message.continues and previous is not None and previous.role == "assistant" and not previous.calls:
            # smolagents writes the model's text and its calls as two turns: one step, at the text's index
            out[-1] = dataclasses.replace(previous, calls=message.calls)
            message = dataclasses.replace(message, role="merged", calls=[])
        out.append(message)
    return out


def _call_results(messages: list[ChatMessage]) -> dict[tuple[int, int], ToolResult]:
    """(assistant message, call) -> its result, each result matched to one earlier open call: by call id
    within this trajectory (ids repeat across trajectories), else by tool name, else in order."""
    open_calls: list[tuple[int, int, Any, Any]] = []  # message index, call index, id, name
    out: dict[tuple[int, int], ToolResult] = {}
    for i, message in enumerate(messages):
        open_calls.extend((i, k, call.call_id, call.name) for k, call in enumerate(message.calls))
        for result in message.results:
            if not open_calls:
                break
            if result.call_id is not None:
                match = next((c for c in open_calls if c[2] == result.call_id), None)
            else:
                match = next((c for c in open_calls if result.name is not None and c[3] == result.name),
                             open_calls[0])
            if match is not None:
                open_calls.remove(match)
                out[(match[0], match[1])] = result
    return out


def _message_step(content: str, i: int) -> Step:
    """A text-only assistant message that is not the answer: a step of its own, tool name None."""
    return ToolStep(tool_name=None, args={}, thought=content, raw=content, source_ref=f"message:{i}")


def chat_steps(ctx: ImportContext, messages: list[Any], where: Where) -> tuple[str | None, list[Step], str | None]:
    """(first user message, steps, the rule that took the answer): one step per tool call, and one per
    assistant message without a call (the last one is the final answer unless a final tool already answered)."""
    read = _read_messages(messages, where)
    results = _call_results(read)
    question = next((m.text for m in read if m.role == "user"), None)
    steps: list[Step] = []
    assistant = [i for i, m in enumerate(read) if m.role == "assistant"]
    rule: str | None = None
    for i, message in enumerate(read):
        if message.role != "assistant":
            continue
        content = message.text
        if not message.calls:
            if i == assistant[-1] and rule is None and content and content.strip():
                answer, rule = extract_answer(content)
                steps.append(make_step("final", tool_name=None, args={}, answer=answer, thought=content,
                                       raw=content, source_ref=f"message:{i}"))
            else:
                steps.append(_message_step(content or "", i))
            continue
        for k, call in enumerate(message.calls):
            step = _tool_step(ctx, call, results.get((i, k)), content if k == 0 and content else None)
            if isinstance(step, FinalStep) and rule is None:
                rule = FINAL_ANSWER_TOOL
                if step.answer is None:
                    step = msgspec.structs.replace(step, answer=answer_of(step.args))
            # The step keeps its message index: per-step human labels point there.
            steps.append(msgspec.structs.replace(step, source_ref=f"message:{i}"))
    return question, steps, rule


_SEEN_KEYS = frozenset({*_MESSAGES_KEYS, *_ID_KEYS, *_QUESTION_KEYS, *_TRIAL_KEYS})


def _messages_key(record: dict[str, Any]) -> str:
    """Where the record keeps its message list: a top-level key, else inside a LangGraph state (`values`)."""
    for outer in ("", *_STATE_KEYS):
        holder = record.get(outer) if outer else record
        if isinstance(holder, dict):
            key = next((k for k in _MESSAGES_KEYS if isinstance(holder.get(k), list)), None)
            if key is not None:
                return f"{outer}.{key}" if outer else key
    return _MESSAGES_KEYS[0]


def _trial(record: dict[str, Any], where: Where) -> str | None:
    key, value = _pick(record, _TRIAL_KEYS)
    if key is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise where.error("expected a trial number or name", key)
    return str(value)


class _StopImport(Exception):
    """An error that stops the whole import rather than skipping one record."""

    def __init__(self, error: RecordError):
        super().__init__(str(error))
        self.error = error


def _refused(error: RecordError) -> bool:
    """Input refused as a whole (a value past the nesting limit is hostile, not one malformed record)."""
    return f"past the nesting limit of {NESTING_LIMIT} levels" in error.message


def _trajectory(ctx: ImportContext, record: Any, where: Where, position: int,
                attempts: dict[str, dict[str, int]]) -> Trajectory:
    record = need_object(record, where)
    list_key = _messages_key(record)
    messages = need_list(lookup(record, list_key), where.at(list_key))
    first_user, steps, rule = chat_steps(ctx, messages, where.at(list_key))
    id_key, own_id = _pick(record, _ID_KEYS)
    if own_id is not None and (isinstance(own_id, bool) or not isinstance(own_id, (str, int))):
        raise where.error("expected a string or integer id", id_key)
    q_key, text = _pick(record, _QUESTION_KEYS)
    if not isinstance(text, str):
        text = next((t for t in (lookup(record, p) for p in _TASK_PATHS) if isinstance(t, str)), first_user)
    gold_key, gold, aliases = _gold(record)
    if ctx.questions is not None:
        try:
            question = ctx.question(where, source_id=None if own_id is None else str(own_id), index=position,
                                    text=text, gold=gold)
        except RecordError as exc:  # the question file and the log disagree: no record is to blame
            raise _StopImport(exc) from None
    else:
        qid = str(own_id) if own_id is not None else text_question_id(text or "")
        _, dataset = _pick(record, _DATASET_KEYS)
        question = plain_question(where, qid, text, gold, dataset=dataset if isinstance(dataset, str) else None)
        question.aliases = aliases
    judgments, used = _judgments(record, where)
    labels, label_keys = embedded_labels(record, steps, where)
    verdict, verdict_key = human_answer_verdict(record, where)
    metadata = {k: v for k, v in record.items()
                if k not in _SEEN_KEYS and k != gold_key and k not in used and k not in label_keys}
    if "." in list_key:  # the state keeps its other fields; its messages are the steps
        outer, inner = list_key.split(".", 1)
        metadata[outer] = {k: v for k, v in record[outer].items() if k != inner}
    if rule is not None:
        metadata["answer_rule"] = rule
    if verdict is not None:
        metadata["human_answer_correct"] = verdict  # the person's verdict on the answer (`final_label`)
        metadata.pop(verdict_key, None)
    if any(c.snippet for s in steps for c in getattr(s, "candidates", [])):
        # A search that returns the passages' text shows them whole: what it shows counts as read.
        metadata["search_shows_passages"] = True
    trial = _trial(record, where)
    if trial is not None:
        run = ctx.run(f"{ctx.run_id}:trial{trial}")
    else:
        # The same question again in one file with other content (several rollouts): the k-th is run
        # `<run_id>:attempt<k>`; an identical repeat stays in its first run, where it is dropped as a duplicate.
        digest = hashlib.blake2b(json.dumps(record, sort_keys=True, default=str).encode(),
                                 digest_size=16).hexdigest()
        versions = attempts.setdefault(question.question_id, {})
        k = versions.setdefault(digest, len(versions) + 1)
        run = ctx.run(f"{ctx.run_id}:attempt{k}" if k > 1 else None)
    return assemble(ctx, run=run, question=question, steps=steps, judgments=judgments, metadata=metadata,
                    human_labels=labels)


def import_chat(ctx: ImportContext) -> Iterator[Trajectory]:
    """Stream a JSONL (or JSON array) of chat-completions records, one trajectory each.

    A record whose content is malformed is skipped with one line naming file, line and field (counted in
    the import report); a file that is not JSON at all still stops the import.
    """
    attempts: dict[str, dict[str, int]] = {}
    position = 0
    for line, key, value in iter_records(ctx.path):
        items = value if key is None and isinstance(value, list) else [value]
        for i, item in enumerate(items):
            prefix = key if key and key.startswith("[") else (f"[{i}]" if item is not value else "")
            try:
                trajectory = _trajectory(ctx, item, ctx.where(line, prefix), position, attempts)
            except _StopImport as stop:
                raise stop.error from None
            except RecordError as exc:
                if _refused(exc):
                    raise
                ctx.notes.skipped.append(str(exc))
            else:
                yield trajectory
            position += 1
