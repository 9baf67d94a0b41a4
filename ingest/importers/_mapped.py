"""Generic JSONL importer driven by a Mapping (also the engine behind the A-RAG preset)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import Candidate, ForcedAnswerStep, Judgment, Passage, Step, Trajectory

from ._actions import make_step, parse_arguments
from ._context import ImportContext, assemble
from ._fields import Where, as_text, lookup, need_list, need_object, score_value
from ._json_stream import iter_records
from ._mapping import Mapping, Paths

_CANDIDATE_ID_KEYS = ("chunk_id", "id", "doc_id", "document_id")
_SNIPPET_KEYS = ("snippet", "text", "content", "preview")
_FORCED_WORDS = ("max", "budget", "limit", "forced")


def _get(record: Any, paths: Paths) -> tuple[str | None, Any]:
    for path in paths:
        value = lookup(record, path)
        if value is not None:
            return path, value
    return (paths[0] if paths else None), None


def _typed(record: Any, paths: Paths, where: Where, kind: type | tuple[type, ...], label: str) -> Any:
    path, value = _get(record, paths)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise where.error(f"expected {label}, got {type(value).__name__}", path)
    return value


def _text(record: Any, paths: Paths, where: Where) -> str | None:
    path, value = _get(record, paths)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"expected a string, got {type(value).__name__}", path)


def candidates_of(result: Any) -> list[Candidate]:
    """Search candidates only when the result is structured with ids; free text yields none (no guessing)."""
    if not isinstance(result, list):
        return []
    out = []
    for rank, item in enumerate(result, start=1):
        if not isinstance(item, dict):
            return []
        cid = next((item[k] for k in _CANDIDATE_ID_KEYS if isinstance(item.get(k), (str, int))), None)
        if cid is None:
            return []
        score = item.get("score")
        snippet = next((item[k] for k in _SNIPPET_KEYS if isinstance(item.get(k), str)), None)
        out.append(Candidate(chunk_id=str(cid), rank=rank, snippet=snippet,
                             score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None))
    return out


def _step(ctx: ImportContext, m: Mapping, raw: Any, where: Where, seen: set[str]) -> Step:
    raw = need_object(raw, where)
    name = _text(raw, m.step.get("action", ("tool_name",)), where)
    if name is None:
        raise where.error("missing action name", m.step.get("action", ("tool_name",))[0])
    arg_path, arg_value = _get(raw, m.step.get("arguments", ("arguments",)))
    args = parse_arguments(arg_value, where.at(arg_path or "arguments"))
    _, result = _get(raw, m.step.get("observation", ("tool_result",)))
    common = dict(
        observation=as_text(result),
        thought=_text(raw, m.step.get("thought", ()), where),
        tokens_in=_typed(raw, m.step.get("tokens_in", ()), where, int, "an integer"),
        tokens_out=_typed(raw, m.step.get("tokens_out", ()), where, int, "an integer"),
        cost_usd=_typed(raw, m.step.get("cost_usd", ()), where, (int, float), "a number"),
        latency_ms=_typed(raw, m.step.get("latency_ms", ()), where, (int, float), "a number"),
    )
    action = ctx.action(name)
    if action == "read":
        step = make_step(action, tool_name=name, args=args, **common)
        ids = step.chunk_ids  # type: ignore[union-attr]
        text = common["observation"] if len(ids) == 1 else None
        passages = [Passage(chunk_id=i, text=text, is_new=i not in seen) for i in ids]
        seen.update(ids)
        return make_step(action, tool_name=name, args=args, chunk_ids=ids, passages=passages, **common)
    return make_step(action, tool_name=name, args=args, candidates=candidates_of(result), **common)


def mapped_trajectory(ctx: ImportContext, m: Mapping, record: Any, where: Where, position: int) -> Trajectory:
    """One source record -> one canonical trajectory, following the mapping."""
    record = need_object(record, where)
    id_path, qid = _get(record, m.question_id)
    if qid is None:
        raise where.error(f"missing question id (mapping: {' | '.join(m.question_id)})", id_path)
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or (isinstance(qid, str) and not qid.strip()):
        raise where.error("question id must be a non-empty string or an integer", id_path)
    question = ctx.question(where, source_id=str(qid), index=position,
                            text=_text(record, m.question, where), gold=_text(record, m.gold, where))
    _, aliases = _get(record, m.aliases)
    if isinstance(aliases, list) and ctx.questions is None:
        question.aliases = [a for a in aliases if isinstance(a, str) and a != question.gold_answer]
    steps_path, raw_steps = _get(record, m.steps)
    steps: list[Step] = []
    seen: set[str] = set()
    if raw_steps is not None:
        for i, raw in enumerate(need_list(raw_steps, where.at(steps_path))):
            steps.append(_step(ctx, m, raw, where.at(steps_path).at(i), seen))
    prediction = _text(record, m.prediction, where)
    end_reason = None
    termination = _text(record, m.end_reason, where)
    already_final = any(s.__struct_config__.tag == "final" for s in steps)
    if prediction is not None and m.final_step and not already_final:
        if termination and any(w in termination.lower() for w in _FORCED_WORDS):
            steps.append(ForcedAnswerStep(answer=prediction))
            end_reason = "forced_answer"
        else:
            steps.append(make_step("final", tool_name=None, args={}, answer=prediction))
    judgments = []
    for judge, paths in m.judgments.items():
        path, value = _get(record, paths)
        if value is not None:
            judgments.append(Judgment(judge=judge, score=score_value(value, where.at(path))))  # type: ignore[arg-type]
    totals = {f"total_{k}": _typed(record, v, where, int if k.startswith("tokens") else (int, float),
                                   "an integer" if k.startswith("tokens") else "a number")
              for k, v in m.totals.items()}
    run_fields = {k: (_typed(record, v, where, int, "an integer") if k == "seed" else _text(record, v, where))
                  for k, v in m.run.items()}
    metadata = {p: v for p in m.metadata if (v := lookup(record, p)) is not None}
    if termination is not None:
        metadata.setdefault("termination_reason", termination)
    return assemble(ctx, run=ctx.run(**run_fields), question=question, steps=steps, final_answer=prediction,
                    end_reason=end_reason, judgments=judgments, metadata=metadata, **totals)


def import_mapped(ctx: ImportContext, mapping: Mapping) -> Iterator[Trajectory]:
    """Stream a JSONL (or JSON array) file of records through the mapping."""
    position = 0
    for line, key, value in iter_records(ctx.path):
        where = ctx.where(line, key if key and key.startswith("[") else "")
        if mapping.records:
            path, inner = _get(value, mapping.records)
            items = need_list(inner, where.at(path)) if inner is not None else []
            for i, item in enumerate(items):
                yield mapped_trajectory(ctx, mapping, item, where.at(path).at(i), position)
                position += 1
        else:
            yield mapped_trajectory(ctx, mapping, value, where, position)
            position += 1
