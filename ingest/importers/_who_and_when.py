"""Who&When (ICML 2025) failure logs: one multi-agent conversation per file, with the human-annotated
decisive error (`mistake_step` into `history`, `mistake_agent`, `mistake_reason`)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trajscope.format import HumanLabel, RecordError, Step, ToolStep, Trajectory

from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object, opt_str
from ._json_stream import iter_whole_documents

# The agent that runs the code the experts write: its turns are the environment's output.
_EXECUTOR_NAMES = ("computer_terminal", "computerterminal")
# Hand-crafted files have no `name`: the agent is the role, less a note such as `(thought)` or `(-> WebSurfer)`.
_CHAT_ROLES = frozenset({"assistant", "user", "system", "tool"})
_ROLE_NOTE = re.compile(r"\s*\([^()]*\)\s*$")


def _mistake_step(record: dict[str, Any], n: int, where: Where) -> int:
    """`mistake_step` as an index into history (the source stores it as a string)."""
    value = record.get("mistake_step")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip().isdigit():
        raise where.error(f"expected a history index (an integer, possibly as a string), got {value!r}",
                          "mistake_step")
    step = int(str(value).strip())
    if step >= n:
        raise where.error(f"history index {step} is past the end of history ({n} entries)", "mistake_step")
    return step


def _agent_of_role(role: Any) -> str | None:
    """The agent a hand-crafted (Magentic-One) entry names in its role: `Orchestrator (thought)` ->
    `Orchestrator`; None for a generic chat role."""
    if not isinstance(role, str) or role.strip().lower() in _CHAT_ROLES:
        return None
    return _ROLE_NOTE.sub("", role).strip() or None


def _trajectory(ctx: ImportContext, record: Any, where: Where) -> Trajectory:
    record = need_object(record, where)
    history = need_list(record.get("history"), where.at("history"))
    steps: list[Step] = []
    for i, entry in enumerate(history):
        at = where.at("history").at(i)
        entry = need_object(entry, at)
        name = opt_str(entry, "name", at) or _agent_of_role(entry.get("role"))
        content = entry.get("content")
        content = content if isinstance(content, str) else (None if content is None else str(content))
        executor = (name or "").lower() in _EXECUTOR_NAMES
        # A history entry is one agent's turn: its text is what the agent said; an executor's is an output.
        role = entry.get("role")
        steps.append(ToolStep(tool_name=None, args={"role": role} if isinstance(role, str) else {},
                              raw=content, observation=content if executor else None,
                              source_ref=f"history:{i}", agent=name))
    qid = record.get("question_ID", record.get("question_id"))
    if qid is None:
        raise where.error("missing question id", "question_ID")
    gold = record.get("ground_truth")
    question = ctx.question(where, source_id=str(qid), text=opt_str(record, "question", where),
                            gold=gold if isinstance(gold, str) else (None if gold is None else str(gold)))
    labels = []
    if record.get("mistake_step") is not None or record.get("mistake_agent") is not None:
        step = _mistake_step(record, len(history), where)
        category = record.get("labels")
        labels.append(HumanLabel(label="error", source_ref=f"history:{step}", step_index=step,
                                 agent=opt_str(record, "mistake_agent", where),
                                 reason=opt_str(record, "mistake_reason", where), source="who_and_when",
                                 category=category if isinstance(category, str) else None,
                                 category_raw=category if isinstance(category, str) else None))
    metadata: dict[str, Any] = {"source_file": ctx.path.name}
    for key in ("level", "is_correct"):
        if record.get(key) is not None:
            metadata[key] = record[key]
    prompts = record.get("system_prompt")
    if isinstance(prompts, dict):
        metadata["agents"] = sorted(prompts)
    return assemble(ctx, run=ctx.run(), question=question, steps=steps, metadata=metadata, human_labels=labels)


def import_who_and_when(ctx: ImportContext) -> Iterator[Trajectory]:
    """One trajectory per record (a file holds one; a JSONL of them works too); a malformed record is skipped
    with one line naming file, line and field (counted in the import report)."""
    for line, record in iter_whole_documents(ctx.path):
        try:
            trajectory = _trajectory(ctx, record, ctx.where(line))
        except RecordError as exc:
            ctx.notes.skipped.append(str(exc))
            continue
        yield trajectory
