"""Generic JSONL importer driven by a Mapping (also the engine behind the A-RAG preset)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajscope.format import (
    Candidate,
    ErrorStep,
    ForcedAnswerStep,
    Judgment,
    Passage,
    RecordError,
    Step,
    Trajectory,
)
from trajscope.ingest.datasets import DatasetError, GoldMatcher, GoldRef, load_dataset

from ._actions import make_step, parse_arguments
from ._context import ImportContext, assemble
from ._fields import Where, as_text, lookup, need_list, need_object, score_value
from ._json_stream import iter_records
from ._mapping import Const, Mapping, Source
from ._questions import title_id

_CANDIDATE_ID_KEYS = ("chunk_id", "id", "doc_id", "document_id")
_SNIPPET_KEYS = ("snippet", "text", "content", "preview")
_FORCED_WORDS = ("max", "budget", "limit", "forced")


def _get(record: Any, source: Source) -> tuple[str | None, Any]:
    if isinstance(source, Const):
        return None, source.value
    for path in source:
        value = lookup(record, path)
        if value is not None:
            return path, value
    return (source[0] if source else None), None


def _typed(record: Any, source: Source, where: Where, kind: type | tuple[type, ...], label: str) -> Any:
    path, value = _get(record, source)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, kind):
        raise where.error(f"expected {label}, got {type(value).__name__}", path)
    return value


def _text(record: Any, source: Source, where: Where) -> str | None:
    path, value = _get(record, source)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"expected a string, got {type(value).__name__}", path)


def _strings(record: Any, source: Source, where: Where) -> list[str]:
    path, value = _get(record, source)
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
        raise where.error("expected a string or a list of strings", path)
    return list(dict.fromkeys(str(v) for v in values))


class TitleIndex:
    """Titles -> corpus chunk ids where the mapping names a corpus (unique titles only), else `title:<title>`."""

    def __init__(self, ctx: ImportContext, m: Mapping):
        self.dataset: str | None = None
        self._matcher: GoldMatcher | None = None
        if m.corpus is None:
            return
        mapping_path = Path(ctx.mapping_path or "mapping")
        corpus = m.corpus
        if not Path(corpus).is_absolute() and (mapping_path.parent / corpus).exists():
            corpus = str(mapping_path.parent / corpus)  # a path is relative to the mapping file
        try:
            ds = load_dataset(corpus)
        except (DatasetError, OSError, ValueError) as exc:
            raise RecordError(mapping_path, m.corpus_line, "corpus",
                              f"cannot load corpus {m.corpus!r}: {exc}") from None
        self.dataset, self._matcher = ds.name, GoldMatcher(ds.chunks)

    def chunk_id(self, title: str) -> str | None:
        """The corpus chunk with this title, or None (no corpus, or no unique title)."""
        if self._matcher is None:
            return None
        return self._matcher.match(GoldRef(title=title)).chunk_id

    def id_of(self, title: str) -> str:
        """The matched chunk id, else the title id."""
        return self.chunk_id(title) or title_id(title)


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
        number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None
        out.append(Candidate(chunk_id=str(cid), rank=rank, snippet=snippet, score=number))
    return out


def _mapped_candidates(m: Mapping, items: Any, where: Where, titles: TitleIndex) -> list[Candidate]:
    """Candidates from an array with the mapping's `step.candidate` paths (id, else title; score; snippet),
    or of plain strings (titles; ids when `step.candidate` maps only `id`)."""
    out = []
    # A candidate given as a plain string is a title (matched to the corpus where one is named), or an id
    # when `step.candidate` maps only `id`: pipelines often log `retrieved_titles: ["A", "B"]`.
    scalar_is_id = "id" in m.candidate and "title" not in m.candidate
    for rank, item in enumerate(need_list(items, where), start=1):
        at = where.at(rank - 1)
        if isinstance(item, (str, int)) and not isinstance(item, bool):
            if not str(item).strip():
                raise at.error("empty candidate")
            out.append(Candidate(chunk_id=str(item) if scalar_is_id else titles.id_of(str(item)), rank=rank))
            continue
        if not isinstance(item, dict):
            raise at.error(f"expected a candidate object, title or id, got {type(item).__name__}")
        cid = _text(item, m.candidate.get("id", ()), at)
        title = _text(item, m.candidate.get("title", ()), at)
        if cid is None and title is None:
            raise at.error("candidate has neither an id nor a title (mapping: step.candidate.id / title)")
        out.append(Candidate(chunk_id=cid if cid is not None else titles.id_of(title or ""), rank=rank,
                             score=_typed(item, m.candidate.get("score", ()), at, (int, float), "a number"),
                             snippet=_text(item, m.candidate.get("snippet", ()), at)))
    return out


def _step(ctx: ImportContext, m: Mapping, raw: Any, where: Where, seen: set[str], titles: TitleIndex) -> Step:
    raw = need_object(raw, where)
    name = _text(raw, m.step.get("action", ("tool_name",)), where)
    if name is None:
        raise where.error("missing action name (mapping: step.action, or {const: NAME})",
                          _get(raw, m.step.get("action", ("tool_name",)))[0])
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
    error = _text(raw, m.step.get("error", ()), where) if "error" in m.step else None
    if error:
        return ErrorStep(error_type="tool_error", message=error, tool_name=name, args=args, **common)
    action = ctx.action(name)
    if action == "read":
        step = make_step(action, tool_name=name, args=args, **common)
        ids = step.chunk_ids  # type: ignore[union-attr]
        text = common["observation"] if len(ids) == 1 else None
        passages = [Passage(chunk_id=i, text=text, is_new=i not in seen) for i in ids]
        seen.update(ids)
        return make_step(action, tool_name=name, args=args, chunk_ids=ids, passages=passages, **common)
    query = _text(raw, m.step["query"], where) if "query" in m.step else None
    if "candidates" in m.step:
        path, items = _get(raw, m.step["candidates"])
        candidates = [] if items is None else _mapped_candidates(m, items, where.at(path or "candidates"), titles)
    else:
        candidates = candidates_of(result)
    if query is not None and "query" not in args:
        args = {**args, "query": query}
    return make_step(action, tool_name=name, args=args, query=query, candidates=candidates, **common)


def _end_reason(m: Mapping, termination: str | None, has_prediction: bool) -> str | None:
    """The canonical end reason of a source termination value (the mapping's vocabulary, else its words)."""
    if termination is None:
        return None
    value = termination.lower()
    for reason, values in m.end_reasons.items():
        if value in values:
            return reason
    if m.end_reasons:
        return None
    return "forced_answer" if has_prediction and any(w in value for w in _FORCED_WORDS) else None


def _question(ctx: ImportContext, m: Mapping, record: dict[str, Any], where: Where, position: int,
              titles: TitleIndex):
    id_path, qid = _get(record, m.question_id)
    if qid is None:
        raise where.error("missing question id (mapping: question_id)", id_path)
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or (isinstance(qid, str) and not qid.strip()):
        raise where.error("question id must be a non-empty string or an integer", id_path)
    question = ctx.question(where, source_id=str(qid), index=position,
                            text=_text(record, m.question, where), gold=_text(record, m.gold, where))
    _, aliases = _get(record, m.aliases)
    if isinstance(aliases, list) and ctx.questions is None:
        question.aliases = [a for a in aliases if isinstance(a, str) and a != question.gold_answer]
    qtype = _text(record, m.question_type, where)
    question.question_type = qtype if qtype is not None else question.question_type
    hops = _typed(record, m.hop_count, where, int, "an integer")
    question.hop_count = hops if hops is not None else question.hop_count
    dataset = _text(record, m.dataset, where)
    question.dataset = dataset if dataset is not None else (question.dataset or titles.dataset)
    gold_ids = _strings(record, m.gold_chunk_ids, where)
    gold_titles = _strings(record, m.gold_titles, where)
    if not gold_ids and not gold_titles and question.gold_match == "title" and titles.dataset:
        # Titles from the questions file, matched to the mapping's corpus like the record's own.
        gold_titles = [c.removeprefix("title:") for c in question.gold_chunk_ids]
    if gold_ids:
        question.gold_chunk_ids, question.gold_match = gold_ids, "given"
    elif gold_titles:  # matched to corpus chunks by title where a corpus is named, else kept as title ids
        matched = [titles.chunk_id(t) for t in gold_titles]
        question.gold_chunk_ids = [c or title_id(t) for c, t in zip(matched, gold_titles, strict=True)]
        question.gold_match = "unmatched" if titles.dataset and not any(matched) else "title"
        if titles.dataset and not all(matched):
            ctx.notes.warnings.append(f"line {where.line}: question {question.question_id}: "
                                      f"{matched.count(None)} of {len(matched)} gold titles not in corpus "
                                      f"{titles.dataset} (kept as title ids)")
    return question


def mapped_trajectory(ctx: ImportContext, m: Mapping, record: Any, where: Where, position: int,
                      titles: TitleIndex) -> Trajectory:
    """One source record -> one canonical trajectory, following the mapping."""
    record = need_object(record, where)
    question = _question(ctx, m, record, where, position, titles)
    steps_path, raw_steps = _get(record, m.steps)
    steps: list[Step] = []
    seen: set[str] = set()
    if raw_steps is not None:
        for i, raw in enumerate(need_list(raw_steps, where.at(steps_path or "steps"))):
            steps.append(_step(ctx, m, raw, where.at(steps_path or "steps").at(i), seen, titles))
    prediction = _text(record, m.prediction, where)
    termination = _text(record, m.end_reason, where)
    end_reason = _end_reason(m, termination, prediction is not None)
    error_path, error_value = _get(record, m.error)
    error = None
    if error_value not in (None, False, "", [], {}):
        error = error_value if isinstance(error_value, str) else f"{error_path or 'error'}: {as_text(error_value)}"
    elif end_reason == "error":
        error = f"the record ended with {termination!r}"
    metadata = {p: v for p in m.metadata if (v := lookup(record, p)) is not None}
    if termination is not None:
        metadata.setdefault("termination_reason", termination)
    already_final = any(s.__struct_config__.tag == "final" for s in steps)
    if error is not None:  # an error trajectory: it did not answer, whatever text the record holds
        steps.append(ErrorStep(error_type="source_error", message=error))
        end_reason = "error"
        if prediction is not None:
            metadata["prediction"] = prediction
        prediction = None
    elif prediction is not None and m.final_step and not already_final:
        if end_reason == "forced_answer":
            steps.append(ForcedAnswerStep(answer=prediction))
        elif end_reason in (None, "final"):
            steps.append(make_step("final", tool_name=None, args={}, answer=prediction))
    judgments = []
    for judge, source in m.judgments.items():
        path, value = _get(record, source)
        if value is not None:
            judgments.append(Judgment(judge=judge, score=score_value(value, where.at(path or judge))))  # type: ignore[arg-type]
    totals = {f"total_{k}": _typed(record, v, where, int if k.startswith("tokens") else (int, float),
                                   "an integer" if k.startswith("tokens") else "a number")
              for k, v in m.totals.items()}
    run_fields = {k: (_typed(record, v, where, int, "an integer") if k == "seed" else _text(record, v, where))
                  for k, v in m.run.items()}
    if question.dataset is not None and run_fields.get("dataset") is None:
        run_fields["dataset"] = question.dataset
    group = _text(record, m.run_id, where)
    run = ctx.run(f"{ctx.run_id}:{group}" if group else None, **run_fields)
    return assemble(ctx, run=run, question=question, steps=steps, final_answer=prediction,
                    end_reason=end_reason, judgments=judgments, metadata=metadata, error=error, **totals)


def _records(ctx: ImportContext) -> Iterator[tuple[int, str | None, Any]]:
    """Records of the file; a whole JSON array written on one line is read item by item too."""
    for line, key, value in iter_records(ctx.path):
        if key is None and isinstance(value, list):
            yield from ((line, f"[{i}]", item) for i, item in enumerate(value))
        else:
            yield line, key, value


def import_mapped(ctx: ImportContext, mapping: Mapping) -> Iterator[Trajectory]:
    """Stream a JSONL (or JSON array) file of records through the mapping."""
    position = 0
    titles = TitleIndex(ctx, mapping)
    for line, key, value in _records(ctx):
        where = ctx.where(line, key if key and key.startswith("[") else "")
        if mapping.records:
            path, inner = _get(value, mapping.records)
            items = need_list(inner, where.at(path or "records")) if inner is not None else []
            for i, item in enumerate(items):
                yield mapped_trajectory(ctx, mapping, item, where.at(path or "records").at(i), position, titles)
                position += 1
        else:
            yield mapped_trajectory(ctx, mapping, value, where, position, titles)
            position += 1
