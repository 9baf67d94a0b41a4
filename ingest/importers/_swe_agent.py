"""SWE-agent `.traj` files: `{environment, trajectory: [{action, observation, thought, ...}], history, info}`."""
from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import msgspec

from trajscope.format import Passage, Step, Trajectory, loads_bounded, open_input

from ._actions import make_step
from ._context import ImportContext, assemble
from ._fields import Where, need_list, need_object, opt_object, opt_str
from ._json_stream import MAX_RECORD_BYTES, check_text

# SWE-agent's commands by their first token: find_file / search_* look for files or text (a search with
# no chunk ids), open shows a file (a read of that file), submit ends the episode with the patch.
_SEARCH_COMMANDS = {"find_file", "search_dir", "search_file"}
_READ_COMMANDS = {"open"}
_FINAL_COMMANDS = {"submit"}


def _issue_text(history: list[Any]) -> str | None:
    """The task: the last user message before the first assistant turn (after any demonstration)."""
    text = None
    for message in history:
        if not isinstance(message, dict):
            continue
        if message.get("role") == "assistant":
            break
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            text = message["content"]
    return text


def _step(ctx: ImportContext, raw: Any, where: Where, submission: str | None) -> Step:
    raw = need_object(raw, where)
    action = opt_str(raw, "action", where) or ""
    name, _, rest = action.strip().partition(" ")
    arg = rest.strip()
    common: dict[str, Any] = dict(tool_name=name or None, observation=opt_str(raw, "observation", where),
                  thought=opt_str(raw, "thought", where), raw=action)
    if name in _SEARCH_COMMANDS:
        return make_step("search", args={"query": arg}, query=arg, **common)
    if name in _READ_COMMANDS:
        path = arg.split()[0].strip("\"'") if arg else ""
        return make_step("read", args={"path": path, "argument": arg}, chunk_ids=[path] if path else [],
                         passages=[Passage(chunk_id=path, text=common["observation"])] if path else [], **common)
    if name in _FINAL_COMMANDS:
        return make_step("final", args={}, answer=submission, **common)
    return make_step(ctx.action(name), args={"argument": arg} if arg else {}, **common)


def _history_refs(history: list[Any], trajectory: list[Any]) -> list[str]:
    """Each trajectory entry's position in the source: `history:<i>`, the index of its assistant message in
    `history` (demonstrations skipped), when the history holds one per entry with the same action; else
    `trajectory:<k>`, its index in `trajectory` (a history cut short or absent)."""
    turns = [(i, m) for i, m in enumerate(history)
             if isinstance(m, dict) and m.get("role") == "assistant" and not m.get("is_demo")]
    aligned = len(turns) == len(trajectory) and all(
        not isinstance(raw, dict) or m.get("action") is None or m.get("action") == raw.get("action")
        for (_, m), raw in zip(turns, trajectory, strict=True))
    if aligned:
        return [f"history:{i}" for i, _ in turns]
    return [f"trajectory:{k}" for k in range(len(trajectory))]


def import_swe_agent(ctx: ImportContext) -> Iterator[Trajectory]:
    """One `.traj` file is one trajectory; its instance id is the file name (SWE-agent names it so)."""
    where = ctx.where(1)
    with open_input(ctx.path) as fh:
        check_text(ctx.path, fh.read(8192))
    if ctx.path.stat().st_size > MAX_RECORD_BYTES:
        raise where.error(f"a .traj file larger than {MAX_RECORD_BYTES // 2**20} MB")
    try:
        data = loads_bounded(ctx.path.read_text(encoding="utf-8-sig"), path=ctx.path, line=1)
    except json.JSONDecodeError as exc:
        raise ctx.where(exc.lineno).error(f"not valid JSON: {exc.msg}") from None
    data = need_object(data, where)
    info = opt_object(data, "info", where)
    submission = opt_str(info, "submission", where.at("info"))
    entries = need_list(data.get("trajectory"), where.at("trajectory"))
    raw_history = data.get("history")
    history = raw_history if isinstance(raw_history, list) else []
    # Each step keeps its position in the source, where a per-step human label points.
    steps = [msgspec.structs.replace(_step(ctx, raw, where.at("trajectory").at(i), submission), source_ref=ref)
             for i, (raw, ref) in enumerate(zip(entries, _history_refs(history, entries), strict=True))]
    issue = _issue_text(history)
    exit_status = opt_str(info, "exit_status", where.at("info"))
    question = ctx.question(where, source_id=str(info.get("instance_id") or ctx.path.stem), text=issue)
    end_reason = None
    if exit_status and not exit_status.startswith("submitted"):
        end_reason = "error" if "error" in exit_status else "budget"
    metadata = {k: info[k] for k in ("exit_status", "model_stats") if k in info}
    if isinstance(data.get("environment"), str):
        metadata["environment"] = data["environment"]
    yield assemble(ctx, run=ctx.run(), question=question, steps=steps, end_reason=end_reason,
                   final_answer=submission if any(s.__struct_config__.tag == "final" for s in steps) else None,
                   metadata=metadata)
