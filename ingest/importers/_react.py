"""ReAct-style logs: Thought / Action / Observation, as chat-message lists (FireAct) or plain text."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import Judgment, Trajectory, open_input

from ._context import ImportContext, assemble
from ._episodes import after_examples
from ._fields import Where, need_list, need_object, score_value
from ._json_stream import check_text, iter_records
from ._react_text import import_text_log
from ._react_turns import steps_from_messages, steps_from_text

_TRAJ_KEYS = ("traj", "messages", "trajectory", "transcript", "prompt")
_ID_KEYS = ("question_id", "id", "qid", "_id", "idx", "index")


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
    if isinstance(body, str):  # few-shot examples before the episode (up to `(END OF EXAMPLES)`) are no steps
        parsed = steps_from_text(ctx, after_examples(body, ctx.patterns))
        question_text, steps = parsed.question, parsed.steps
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
    with open_input(ctx.path) as fh:
        head = fh.read(8192)
    check_text(ctx.path, head)
    if head.lstrip()[:1] not in (b"{", b"["):
        yield from import_text_log(ctx)
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


