"""ATIF (Agent Trajectory Interchange Format) trajectories: steps, tool calls and their observations."""
from __future__ import annotations

from collections.abc import Iterator
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
    usage = dict(tokens_in=opt_int(metrics, "prompt_tokens", where.at("metrics")),
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
    if not calls and is_last and message:
        # The agent's closing message without a tool call is its answer.
        steps.append(make_step("final", tool_name=None, args={}, answer=message, thought=thought, **usage))
    return steps


def _trajectory(ctx: ImportContext, doc: Any, where: Where) -> Trajectory:
    doc = need_object(doc, where)
    version = opt_str(doc, "schema_version", where)
    if version is None or not version.startswith("ATIF"):
        raise where.error("not an ATIF trajectory (schema_version must start with 'ATIF')", "schema_version")
    raw_steps = need_list(doc.get("steps"), where.at("steps"))
    extra = opt_object(doc, "extra", where)
    agent = opt_object(doc, "agent", where)
    restored = restore_exported(ctx, extra.get(EXPORT_KEY), where.at("extra"))
    if restored is not None:  # a trajectory trajscope exported: its attachment is the whole record
        return restored
    question_text = None
    stamps = []
    agent_indexes = [i for i, s in enumerate(raw_steps) if isinstance(s, dict) and s.get("source") == "agent"]
    steps: list[Step] = []
    for i, raw in enumerate(raw_steps):
        at = where.at("steps").at(i)
        raw = need_object(raw, at)
        source = opt_str(raw, "source", at)
        if source not in ("user", "agent", "system"):
            raise at.error("expected 'user', 'agent' or 'system'", "source")
        if (stamp := opt_str(raw, "timestamp", at)) is not None:
            stamps.append(stamp)
        if source == "user" and question_text is None:
            question_text = _message_text(raw.get("message"), at.at("message"))
        elif source == "agent":
            # Each step keeps its index in the ATIF `steps` list, where a per-step human label points.
            steps.extend(msgspec.structs.replace(step, source_ref=f"message:{i}")
                         for step in _agent_steps(ctx, raw, at, i == agent_indexes[-1]))
    qid = next((str(v) for k in ("question_id",) if (v := extra.get(k)) is not None), None) or \
        opt_str(doc, "session_id", where) or opt_str(doc, "trajectory_id", where)
    question = ctx.question(where, source_id=qid, text=question_text,
                            gold=extra.get("gold_answer") if isinstance(extra.get("gold_answer"), str) else None)
    final = opt_object(doc, "final_metrics", where)
    fm = where.at("final_metrics")
    run = ctx.run(model=opt_str(agent, "model_name", where.at("agent")),
                  config={k: v for k, v in (("agent", agent.get("name")), ("agent_version", agent.get("version")),
                                            ("schema_version", version)) if v is not None})
    total_in = opt_int(final, "total_prompt_tokens", fm)
    return assemble(ctx, run=run, question=question, steps=steps,
                    started_at=stamps[0] if stamps else None, finished_at=stamps[-1] if stamps else None,
                    total_tokens_in=total_in, total_tokens_out=opt_int(final, "total_completion_tokens", fm),
                    total_cost_usd=opt_number(final, "total_cost_usd", fm),
                    metadata={"notes": doc["notes"]} if isinstance(doc.get("notes"), str) else {})


def import_atif(ctx: ImportContext) -> Iterator[Trajectory]:
    """One ATIF trajectory per file, or JSONL with one per line."""
    for line, doc in iter_whole_documents(ctx.path):
        yield _trajectory(ctx, doc, ctx.where(line))
