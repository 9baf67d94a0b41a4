"""Inspect AI eval logs (`.json` and `.eval` zip archives): samples, messages, tool calls, scores."""
from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajscope.format import EXPORT_KEY, Judgment, RecordError, Step, Trajectory, loads_bounded

from ._actions import make_step, parse_arguments
from ._archive import ArchiveBudget, check_archive, read_member
from ._context import ImportContext, assemble
from ._exported import restore_exported
from ._fields import Where, as_text, need_id, need_list, need_object, opt_list, opt_number, opt_object, opt_str
from ._json_stream import iter_document

# Inspect scorer name -> canonical judge; other scorers are kept in metadata["scores"] only.
SCORER_JUDGES = {"exact": "em", "f1": "f1", "includes": "contain",
                 "model_graded_qa": "llm", "model_graded_fact": "llm"}
# Inspect's own value_to_float for letter grades.
_GRADES = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return None


def _reasoning(content: Any) -> str | None:
    if isinstance(content, list):
        parts = [p["reasoning"] for p in content if isinstance(p, dict) and isinstance(p.get("reasoning"), str)]
        return "\n".join(parts) or None
    return None


def _score(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return _GRADES.get(value.strip().upper())
    return None


def _steps(ctx: ImportContext, messages: list[Any], where: Where) -> list[Step]:
    results: dict[str, str | None] = {}
    for i, m in enumerate(messages):
        m = need_object(m, where.at(i))
        if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
            error = m.get("error")
            results[m["tool_call_id"]] = _text(m.get("content")) or (
                as_text(error.get("message")) if isinstance(error, dict) else None)
    assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    steps: list[Step] = []
    for i in assistant:
        at = where.at(i)
        m = messages[i]
        text = _text(m.get("content"))
        thought = _reasoning(m.get("content")) or text or None
        calls = opt_list(m, "tool_calls", at)
        for k, call in enumerate(calls):
            cat = at.at("tool_calls").at(k)
            call = need_object(call, cat)
            name = opt_str(call, "function", cat)
            if name is None:
                raise cat.error("missing required field", "function")
            call_id = opt_str(call, "id", cat)
            steps.append(make_step(ctx.action(name), tool_name=name,
                                   args=parse_arguments(call.get("arguments"), cat.at("arguments")),
                                   observation=results.get(call_id) if call_id else None,
                                   thought=thought if k == 0 else None, source_ref=f"message:{i}"))
        if not calls and i == assistant[-1] and text:
            # The closing assistant message without a tool call is the answer.
            steps.append(make_step("final", tool_name=None, args={}, answer=text, thought=_reasoning(m.get("content")),
                                   source_ref=f"message:{i}"))
    return steps


def _judgments(scores: dict[str, Any], where: Where) -> tuple[list[Judgment], dict[str, Any]]:
    judgments, raw = [], {}
    for name, score in scores.items():
        score = need_object(score, where.at(name))
        raw[name] = score.get("value")
        judge = SCORER_JUDGES.get(name)
        value = _score(score.get("value"))
        if judge is not None and value is not None:
            explanation = score.get("explanation")
            judgments.append(Judgment(judge=judge, score=value,  # type: ignore[arg-type]
                                      rationale=explanation if isinstance(explanation, str) else None))
    return judgments, raw


def _sample(ctx: ImportContext, header: dict[str, Any], sample: Any, where: Where) -> Trajectory:
    sample = need_object(sample, where)
    sid = need_id(sample, ("id",), where)
    restored = restore_exported(ctx, opt_object(sample, "metadata", where).get(EXPORT_KEY), where.at("metadata"))
    if restored is not None:  # a sample trajscope exported: its attachment is the whole record
        return restored
    epoch = sample.get("epoch", 1)
    raw_input = sample.get("input")
    if isinstance(raw_input, list):
        question_text = next((_text(m.get("content")) for m in raw_input
                              if isinstance(m, dict) and m.get("role") == "user"), None)
    elif isinstance(raw_input, str):
        question_text = raw_input
    else:
        raise where.error("expected a string or a list of messages", "input")
    target = sample.get("target")
    gold = target[0] if isinstance(target, list) and target and isinstance(target[0], str) else (
        target if isinstance(target, str) else None)
    question = ctx.question(where, source_id=sid, text=question_text, gold=gold)
    if isinstance(target, list) and ctx.questions is None:
        question.aliases = [t for t in target[1:] if isinstance(t, str)]
    steps = _steps(ctx, need_list(sample.get("messages", []), where.at("messages")), where.at("messages"))
    judgments, raw_scores = _judgments(opt_object(sample, "scores", where), where.at("scores"))
    usage = opt_object(sample, "model_usage", where).values()
    tokens_in = sum(u.get("input_tokens") or 0 for u in usage if isinstance(u, dict)) if usage else None
    tokens_out = sum(u.get("output_tokens") or 0 for u in usage if isinstance(u, dict)) if usage else None
    eval_spec = header.get("eval") or {}
    run_id = ctx.run_id if epoch in (None, 1) else f"{ctx.run_id}:epoch{epoch}"
    run = ctx.run(model=eval_spec.get("model"),
                  dataset=(eval_spec.get("dataset") or {}).get("name"),
                  started_at=eval_spec.get("created"),
                  config={k: eval_spec[k] for k in ("task", "task_id", "run_id") if isinstance(eval_spec.get(k), str)})
    run.run_id = run_id
    error = sample.get("error")
    seconds = opt_number(sample, "total_time", where)
    return assemble(ctx, run=run, question=question, steps=steps, judgments=judgments,
                    end_reason="error" if error else None,
                    error=as_text(error.get("message") if isinstance(error, dict) else error),
                    started_at=opt_str(sample, "started_at", where), finished_at=opt_str(sample, "completed_at", where),
                    total_tokens_in=tokens_in, total_tokens_out=tokens_out,
                    total_latency_ms=None if seconds is None else seconds * 1000.0,
                    metadata={"scores": raw_scores, "epoch": epoch} if raw_scores else {"epoch": epoch})


def _import_json(ctx: ImportContext) -> Iterator[Trajectory]:
    header: dict[str, Any] = {}
    for line, key, value in iter_document(ctx.path, frozenset({"samples"})):
        if key.startswith("samples["):
            yield _sample(ctx, header, value, ctx.where(line, key))
        else:
            header[key] = value


def _zip_member(ctx: ImportContext, archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: ArchiveBudget) -> Any:
    where = Path(f"{ctx.path}!{info.filename}")
    data = read_member(archive, info, where, budget)
    try:
        return loads_bounded(data.decode("utf-8"), path=where, line=1)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(where, getattr(exc, "lineno", 1), None, f"malformed JSON in archive member: {exc}") from None


def _import_eval(ctx: ImportContext) -> Iterator[Trajectory]:
    try:
        archive = zipfile.ZipFile(ctx.path)
    except zipfile.BadZipFile as exc:
        raise RecordError(ctx.path, 1, None, f"not a valid .eval archive (zip): {exc}") from None
    budget = ArchiveBudget.of(ctx.path)
    with archive:
        check_archive(archive, ctx.path)
        names = {i.filename: i for i in archive.infolist()}
        head_name = "header.json" if "header.json" in names else "_journal/start.json"
        header = _zip_member(ctx, archive, names[head_name], budget) if head_name in names else {}
        for name in sorted(n for n in names if n.startswith("samples/") and n.endswith(".json")):
            sample = _zip_member(ctx, archive, names[name], budget)
            yield _sample(ctx, header if isinstance(header, dict) else {}, sample,
                          Where(Path(f"{ctx.path}!{name}"), 1))


def import_inspect(ctx: ImportContext) -> Iterator[Trajectory]:
    """Stream an Inspect log: `.eval` archives member by member, `.json` logs sample by sample."""
    with open(ctx.path, "rb") as fh:
        is_zip = fh.read(4) == b"PK\x03\x04"
    return _import_eval(ctx) if is_zip else _import_json(ctx)
