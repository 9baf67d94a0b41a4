"""ATIF (Agent Trajectory Interchange Format) v1.x trajectories: steps, tool calls and their observations.

A trajectory continued in another file (`continued_trajectory_ref`, after a context hand-off) is joined with its
continuation into one trajectory; steps a continuation copies from before the hand-off (`is_copied_context`) are
not taken twice. Agents that speak a JSON protocol instead of tool calls (Terminus: `{"analysis", "plan",
"commands"}` messages) have one step per command.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from trajscope.format import EXPORT_KEY, Step, Trajectory

from ._actions import make_step, parse_arguments
from ._context import ImportContext, assemble
from ._exported import restore_exported
from ._fields import Where, as_text, need_list, need_object, opt_int, opt_list, opt_number, opt_object, opt_str
from ._json_stream import iter_whole_documents


def _message_text(value: Any, where: Where) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(p["text"] for p in value if isinstance(p, dict) and isinstance(p.get("text"), str))
    raise where.error("expected a string or a list of content parts")


def _agent_steps(ctx: ImportContext, raw: dict[str, Any], where: Where, is_last: bool) -> list[Step]:
    results: dict[str | None, list[str]] = {}
    observation = opt_object(raw, "observation", where)
    for j, result in enumerate(opt_list(observation, "results", where.at("observation"))):
        at = where.at("observation").at("results").at(j)
        result = need_object(result, at)
        text = as_text(result.get("content"))
        results.setdefault(opt_str(result, "source_call_id", at), []).append(text or "")
    metrics = opt_object(raw, "metrics", where)
    usage: dict[str, Any] = dict(tokens_in=opt_int(metrics, "prompt_tokens", where.at("metrics")),
                                 tokens_out=opt_int(metrics, "completion_tokens", where.at("metrics")),
                                 cost_usd=opt_number(metrics, "cost_usd", where.at("metrics")))
    thought = opt_str(raw, "reasoning_content", where)
    message = _message_text(raw.get("message"), where.at("message"))
    calls = opt_list(raw, "tool_calls", where)
    steps: list[Step] = []
    for k, call in enumerate(calls):
        at = where.at("tool_calls").at(k)
        call = need_object(call, at)
        name = opt_str(call, "function_name", at)
        if name is None:
            raise at.error("missing required field", "function_name")
        call_id = opt_str(call, "tool_call_id", at)
        texts = results.get(call_id) or (results.get(None) if len(calls) == 1 else None)
        steps.append(make_step(ctx.action(name), tool_name=name,
                               args=parse_arguments(call.get("arguments"), at.at("arguments")),
                               observation="\n".join(texts) if texts else None,
                               thought=(thought or message or None) if k == 0 else None, **(usage if k == 0 else {})))
    if not calls:
        commands = _protocol_commands(message)
        texts = [t for v in results.values() for t in v]
        for k, command in enumerate(commands):
            steps.append(make_step(None, tool_name=_COMMAND_TOOL, args=command,
                                   observation="\n".join(texts) if texts and k == len(commands) - 1 else None,
                                   thought=(thought or _protocol_thought(message)) if k == 0 else None,
                                   **(usage if k == 0 else {})))
        if commands:
            usage = {}
    if not calls and is_last and message:
        # The agent's closing message without a tool call is its answer.
        steps.append(make_step("final", tool_name=None, args={}, answer=message, thought=thought, **usage))
    return steps


ATIF_NOTES = {"gold_passages": "ATIF trajectories carry no gold passages"}
_COMMAND_TOOL = "terminal_command"  # a command a JSON-protocol agent (Terminus) sends to its terminal


def _protocol(message: str | None) -> dict[str, Any] | None:
    if not message or not message.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(message)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _protocol_commands(message: str | None) -> list[dict[str, Any]]:
    """The commands of a JSON-protocol message (`{"commands": [{"keystrokes": ...}, ...]}`), else []."""
    value = _protocol(message)
    commands = value.get("commands") if value else None
    if not isinstance(commands, list):
        return []
    return [c if isinstance(c, dict) else {"input": c} for c in commands]


def _protocol_thought(message: str | None) -> str | None:
    value = _protocol(message) or {}
    parts = [value[k] for k in ("analysis", "plan") if isinstance(value.get(k), str) and value[k].strip()]
    return "\n".join(parts) or None


def _document(path: Path) -> Any:
    return next(iter_whole_documents(path))[1]


def _segments(ctx: ImportContext, doc: dict[str, Any], where: Where) -> list[tuple[dict[str, Any], Where]]:
    """The document and the files that continue it, in order (`continued_trajectory_ref`, followed once each)."""
    out = [(doc, where)]
    seen = {ctx.path.resolve()}
    while isinstance(ref := out[-1][0].get("continued_trajectory_ref"), str) and ref:
        at = out[-1][1]
        path = (out[-1][1].path.parent / ref).resolve()
        if path in seen:
            raise at.error(f"continuation {ref!r} leads back to a file already joined", "continued_trajectory_ref")
        if not path.is_file():
            warning = (f"{at.path.name} is continued in {ref}, which is not beside it: imported up to the hand-off")
            if warning not in ctx.notes.warnings:
                ctx.notes.warnings.append(warning)
            break
        seen.add(path)
        where_next = Where(path, 1)
        try:
            nxt = need_object(_document(path), where_next)
        except StopIteration:
            raise where_next.error("empty continuation file") from None
        out.append((nxt, where_next))
    return out


_CONTINUATION_REF = re.compile(r'"continued_trajectory_ref"\s*:\s*"([^"]+)"')
_COPIED = re.compile(r'"is_copied_context"\s*:\s*true')


def _continues(path: Path) -> Path | None:
    """The sibling ATIF file that this one continues (its `continued_trajectory_ref` names this file), if any."""
    with open(path, "rb") as fh:
        if not _COPIED.search(fh.read(1 << 20).decode("utf-8", errors="replace")):
            return None  # a continuation starts with the context it copied; only then are the siblings read
    for sibling in sorted(path.parent.glob("*.json")):
        if sibling == path or not sibling.is_file():
            continue
        with open(sibling, "rb") as fh:
            head = fh.read(1 << 20).decode("utf-8", errors="replace")
        refs = _CONTINUATION_REF.findall(head)
        if '"schema_version"' in head and any((path.parent / r).resolve() == path.resolve() for r in refs):
            return sibling
    return None


def _trajectory(ctx: ImportContext, doc: Any, where: Where, parent_qid: str | None = None) -> Trajectory:
    doc = need_object(doc, where)
    version = opt_str(doc, "schema_version", where)
    if version is None or not version.startswith("ATIF"):
        raise where.error("not an ATIF trajectory (schema_version must start with 'ATIF')", "schema_version")
    need_list(doc.get("steps"), where.at("steps"))
    extra = opt_object(doc, "extra", where)
    agent = opt_object(doc, "agent", where)
    restored = restore_exported(ctx, extra.get(EXPORT_KEY), where.at("extra"))
    if restored is not None:  # a trajectory trajscope exported: its attachment is the whole record
        return restored
    segments = _segments(ctx, doc, where)
    question_text = None
    stamps = []
    # (segment, index, raw step, location) of every step taken: copied context only for the question text
    taken: list[tuple[int, int, dict[str, Any], Where]] = []
    copied_question: str | None = None
    for n, (segment, seg_where) in enumerate(segments):
        raw_steps = need_list(segment.get("steps"), seg_where.at("steps"))
        for i, raw in enumerate(raw_steps):
            at = seg_where.at("steps").at(i)
            raw = need_object(raw, at)
            source = opt_str(raw, "source", at)
            if source not in ("user", "agent", "system"):
                raise at.error("expected 'user', 'agent' or 'system'", "source")
            if raw.get("is_copied_context"):
                if source == "user" and copied_question is None:
                    copied_question = _message_text(raw.get("message"), at.at("message"))
                continue
            taken.append((n, i, raw, at))
    agent_positions = [k for k, (_, _, raw, _) in enumerate(taken) if raw.get("source") == "agent"]
    steps: list[Step] = []
    for k, (n, i, raw, at) in enumerate(taken):
        if (stamp := opt_str(raw, "timestamp", at)) is not None:
            stamps.append(stamp)
        if raw["source"] == "user" and question_text is None:
            question_text = _message_text(raw.get("message"), at.at("message"))
        elif raw["source"] == "agent":
            # Each step keeps its index in the ATIF `steps` list (of its file), where a per-step label points.
            ref = f"message:{i}" if n == 0 else f"{segments[n][1].path.name}:message:{i}"
            steps.extend(msgspec.structs.replace(step, source_ref=ref)
                         for step in _agent_steps(ctx, raw, at, k == agent_positions[-1]))
    question_text = question_text or copied_question
    qid = next((str(v) for k in ("question_id",) if (v := extra.get(k)) is not None), None) or \
        opt_str(doc, "session_id", where) or opt_str(doc, "trajectory_id", where)
    if parent_qid is not None:  # a sub-agent's trajectory: known under its parent's question
        qid = f"{parent_qid}:{opt_str(doc, 'trajectory_id', where) or qid or where.prefix}"
        question_text = question_text or f"(sub-agent task not recorded: {qid})"
        name = opt_str(agent, "name", where.at("agent"))
        if name:
            steps = [msgspec.structs.replace(step, agent=name) for step in steps]
    question = ctx.question(where, source_id=qid, text=question_text,
                            gold=extra.get("gold_answer") if isinstance(extra.get("gold_answer"), str) else None)
    totals: dict[str, float] = {}
    for segment, seg_where in segments:
        final = opt_object(segment, "final_metrics", seg_where)
        fm = seg_where.at("final_metrics")
        for key, value in (("in", opt_int(final, "total_prompt_tokens", fm)),
                           ("out", opt_int(final, "total_completion_tokens", fm)),
                           ("cost", opt_number(final, "total_cost_usd", fm))):
            if value is not None:
                totals[key] = totals.get(key, 0) + value
    run = ctx.run(model=opt_str(agent, "model_name", where.at("agent")),
                  config={k: v for k, v in (("agent", agent.get("name")), ("agent_version", agent.get("version")),
                                            ("schema_version", version)) if v is not None})
    metadata: dict[str, Any] = {"notes": doc["notes"]} if isinstance(doc.get("notes"), str) else {}
    if len(segments) > 1:
        metadata["continued_in"] = [seg_where.path.name for _, seg_where in segments[1:]]
    return assemble(ctx, run=run, question=question, steps=steps,
                    started_at=stamps[0] if stamps else None, finished_at=stamps[-1] if stamps else None,
                    total_tokens_in=int(totals["in"]) if "in" in totals else None,
                    total_tokens_out=int(totals["out"]) if "out" in totals else None,
                    total_cost_usd=totals.get("cost"), metadata=metadata)


def import_atif(ctx: ImportContext) -> Iterator[Trajectory]:
    """One ATIF trajectory per file (joined with its continuations), or JSONL with one per line.

    A file that continues a sibling is read as part of that sibling's trajectory, not on its own.
    """
    if (parent := _continues(ctx.path)) is not None:
        ctx.notes.warnings.append(f"{ctx.path.name} continues {parent.name}: it is read as part of that "
                                  "trajectory (import that file, or the folder)")
        return
    for line, doc in iter_whole_documents(ctx.path):
        where = ctx.where(line)
        trajectory = _trajectory(ctx, doc, where)
        yield trajectory
        yield from _subagents(ctx, doc, where, trajectory.question.question_id)


def _subagents(ctx: ImportContext, doc: Any, where: Where, parent_qid: str) -> Iterator[Trajectory]:
    """The sub-agent trajectories an ATIF v1.7 document embeds (`subagent_trajectories`), one trajectory each."""
    embedded = doc.get("subagent_trajectories") if isinstance(doc, dict) else None
    if isinstance(embedded, dict):
        embedded = list(embedded.values())
    at = where.at("subagent_trajectories")
    for i, sub in enumerate(need_list(embedded, at) if embedded is not None else []):
        if isinstance(sub, dict) and "steps" in sub:
            sub_where = at.at(i)
            trajectory = _trajectory(ctx, {"schema_version": doc.get("schema_version"), **sub}, sub_where, parent_qid)
            yield trajectory
            yield from _subagents(ctx, sub, sub_where, trajectory.question.question_id)
