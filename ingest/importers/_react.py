"""ReAct-style logs: Thought / Action / Observation, as chat-message lists (FireAct) or plain text."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec

from trajscope.format import SEARCH_KINDS, ErrorStep, Judgment, Step, Trajectory

from ._actions import make_step
from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object, score_value
from ._json_stream import MAX_RECORD_BYTES, check_text, iter_records

# The executed action of a turn: the first `Action:` that starts a line (FireAct's own parser splits
# on "\nAction: "), else the first one anywhere. `Action 3:` numbering (original ReAct) is accepted.
_ACTION_AT_LINE = re.compile(r"^[ \t]*Action(?:[ \t]*\d+)?[ \t]*:[ \t]*(?P<name>[A-Za-z_][\w-]*)[ \t]*\[(?P<arg>.*)\]", re.M)
_ACTION_ANYWHERE = re.compile(r"Action(?:[ \t]*\d+)?[ \t]*:[ \t]*(?P<name>[A-Za-z_][\w-]*)[ \t]*\[(?P<arg>.*)\]")
_THOUGHT_PREFIX = re.compile(r"^\s*Thought(?:\s*\d+)?\s*:\s*")
_OBSERVATION_PREFIX = re.compile(r"^\s*Observation(?:\s*\d+)?\s*:\s*")
_QUESTION_PREFIX = re.compile(r"^\s*Question\s*:\s*")
_LABEL = re.compile(r"^[ \t]*(?P<label>Question|Thought|Action|Observation)(?:[ \t]*\d+)?[ \t]*:[ \t]?", re.M)
_TRAJ_KEYS = ("traj", "messages", "trajectory", "transcript")
_ID_KEYS = ("question_id", "id", "qid", "_id", "idx", "index")


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(parts)
    return None


def _action_step(ctx: ImportContext, name: str, arg: str, *, raw: str, thought: str | None) -> Step:
    action = ctx.action(name)
    arg = arg.strip()
    if action in SEARCH_KINDS:
        return make_step(action, tool_name=name, args={"query": arg}, query=arg, raw=raw, thought=thought)
    if action == "read":  # a ReAct look-up inside an opened page: a keyword, never a chunk id
        return make_step(action, tool_name=name, args={"keyword": arg}, chunk_ids=[], raw=raw, thought=thought)
    if action == "final":
        return make_step(action, tool_name=name, args={"answer": arg}, answer=arg, raw=raw, thought=thought)
    return make_step(None, tool_name=name, args={"argument": arg}, raw=raw, thought=thought)


def parse_turn(ctx: ImportContext, text: str) -> Step:
    """One assistant turn -> the step it executed (an error step when it names no action)."""
    match = _ACTION_AT_LINE.search(text) or _ACTION_ANYWHERE.search(text)
    if match is None:
        return ErrorStep(error_type="no_action", message="turn has no `Action: name[argument]`", raw=text,
                         thought=_THOUGHT_PREFIX.sub("", text).strip() or None)
    thought = _THOUGHT_PREFIX.sub("", text[: match.start()]).strip() or None
    return _action_step(ctx, match.group("name"), match.group("arg"), raw=text, thought=thought)


def _with_observation(step: Step, observation: str) -> Step:
    return msgspec.structs.replace(step, observation=_OBSERVATION_PREFIX.sub("", observation, count=1))


def steps_from_messages(ctx: ImportContext, messages: list[Any], where: Where) -> tuple[str | None, list[Step]]:
    """(question text from the first user turn, steps) of a chat-message ReAct transcript."""
    question: str | None = None
    steps: list[Step] = []
    for i, message in enumerate(messages):
        at = where.at(i)
        message = need_object(message, at)
        role = message.get("role")
        text = _content_text(message.get("content"))
        if not isinstance(role, str):
            raise at.error("missing or non-string role", "role")
        if text is None:
            raise at.error("expected string content (or a list of text parts)", "content")
        if role in ("system",):
            continue
        if role == "assistant":
            steps.append(parse_turn(ctx, text))
        elif question is None and not steps:
            question = _QUESTION_PREFIX.sub("", text).strip()
        elif steps and steps[-1].observation is None:
            steps[-1] = _with_observation(steps[-1], text)
    return question, steps


def steps_from_text(ctx: ImportContext, text: str) -> tuple[str | None, list[Step]]:
    """(question, steps) of a plain-text ReAct transcript with Question/Thought/Action/Observation labels."""
    labels = list(_LABEL.finditer(text))
    question: str | None = None
    thought: str | None = None
    steps: list[Step] = []
    for k, m in enumerate(labels):
        body = text[m.end(): labels[k + 1].start() if k + 1 < len(labels) else len(text)].strip()
        label = m.group("label")
        if label == "Question" and question is None:
            question = body
        elif label == "Thought":
            thought = body
        elif label == "Action":
            steps.append(parse_turn(ctx, f"Action: {body}") if body else
                         ErrorStep(error_type="no_action", message="empty action", thought=thought))
            if thought is not None and steps[-1].thought is None:
                steps[-1] = msgspec.structs.replace(steps[-1], thought=thought)
            thought = None
        elif label == "Observation" and steps and steps[-1].observation is None:
            steps[-1] = _with_observation(steps[-1], body)
    return question, steps


def _judgments(record: dict[str, Any], where: Where) -> list[Judgment]:
    out = []
    for judge in ("em", "f1"):
        if record.get(judge) is not None:
            out.append(Judgment(judge=judge, score=score_value(record[judge], where.at(judge))))
    return out


def _record_trajectory(ctx: ImportContext, where: Where, key: str | None, position: int,
                       record: Any) -> Trajectory:
    record = need_object(record, where)
    traj_key = next((k for k in _TRAJ_KEYS if k in record), None)
    if traj_key is None:
        raise where.error(f"no transcript (looked for {', '.join(_TRAJ_KEYS)})", "traj")
    body = record[traj_key]
    if isinstance(body, str):
        question_text, steps = steps_from_text(ctx, body)
    else:
        question_text, steps = steps_from_messages(ctx, need_list(body, where.at(traj_key)), where.at(traj_key))
    own_id = next((record[k] for k in _ID_KEYS if record.get(k) is not None), None)
    if own_id is not None and (isinstance(own_id, bool) or not isinstance(own_id, (str, int))):
        raise where.error("expected a string or integer id", next(k for k in _ID_KEYS if record.get(k) is not None))
    source_id = str(own_id) if own_id is not None else key
    # A numeric key (FireAct) is the index into the question file; records without any id join by position.
    index = int(source_id) if source_id is not None and source_id.isdigit() else (
        position if source_id is None else None)
    if isinstance(record.get("question"), str):
        question_text = record["question"]
    gold = record.get("answer") if isinstance(record.get("answer"), str) else record.get("gt")
    question = ctx.question(where, source_id=source_id, index=index, text=question_text,
                            gold=gold if isinstance(gold, str) else None)
    metadata = {k: record[k] for k in ("reward", "gt", "pred") if k in record}
    return assemble(ctx, run=ctx.run(), question=question, steps=steps, judgments=_judgments(record, where),
                    metadata=metadata)


def _is_record_map(value: Any) -> bool:
    return isinstance(value, dict) and bool(value) and all(
        isinstance(v, dict) and any(k in v for k in _TRAJ_KEYS) for v in value.values())


def import_react(ctx: ImportContext) -> Iterator[Trajectory]:
    """FireAct-style {key: record} JSON, an array / JSONL of records, or one plain-text transcript."""
    with open(ctx.path, "rb") as fh:
        head = fh.read(8192)
    check_text(ctx.path, head)
    if head.lstrip()[:1] not in (b"{", b"["):
        yield from _import_text(ctx)
        return
    position = 0
    for line, key, value in iter_records(ctx.path, keyed_members=True):
        if key is None and _is_record_map(value):  # a one-line FireAct-style document
            for inner_key, record in value.items():
                yield _record_trajectory(ctx, ctx.where(line, inner_key), inner_key, position, record)
                position += 1
            continue
        member = key if key is not None and not key.startswith("[") else None
        yield _record_trajectory(ctx, ctx.where(line, key or ""), member, position, value)
        position += 1


def _import_text(ctx: ImportContext) -> Iterator[Trajectory]:
    if ctx.path.stat().st_size > MAX_RECORD_BYTES:
        raise ctx.where(1).error(f"plain-text transcript larger than {MAX_RECORD_BYTES // 2**20} MB")
    text = ctx.path.read_text(encoding="utf-8")
    question_text, steps = steps_from_text(ctx, text)
    question = ctx.question(ctx.where(1), source_id=ctx.path.stem, index=0, text=question_text)
    yield assemble(ctx, run=ctx.run(), question=question, steps=steps)
