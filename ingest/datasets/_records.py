"""Reading the fields of one source question record, whatever benchmark spelling it uses."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._json_source import SourceRecord
from ._matching import GoldRef

_MUSIQUE_ID = re.compile(r"^(\d)hop\d?__")


@dataclass(frozen=True)
class Paragraph:
    """A paragraph attached to a question record (its context), possibly flagged as supporting."""

    title: str | None
    text: str
    is_supporting: bool | None = None


def _expect(record: SourceRecord, value: Any, kind: type | tuple[type, ...], field: str) -> Any:
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise record.error(f"expected {names}, got {type(value).__name__}", field)
    return value


def record_dict(record: SourceRecord) -> dict[str, Any]:
    """The record as a JSON object, or an error naming its line."""
    return _expect(record, record.value, dict, "<record>")


def question_id(record: SourceRecord, fallback: str) -> str:
    """`_id`, `id` or `question_id`, as a string; the fallback when none is present."""
    obj = record_dict(record)
    for key in ("_id", "id", "question_id"):
        if key in obj:
            return str(_expect(record, obj[key], (str, int), key))
    return fallback


def question_text(record: SourceRecord) -> str:
    """The question text (`question`, `query` or `text`)."""
    obj = record_dict(record)
    for key in ("question", "query", "text"):
        if key in obj:
            return _expect(record, obj[key], str, key)
    raise record.error("missing the question text", "question")


def answers(record: SourceRecord) -> tuple[str | None, list[str]]:
    """Gold answer and aliases: a list answer gives its first item as gold and the rest as aliases."""
    obj = record_dict(record)
    gold: str | None = None
    aliases: list[str] = []
    raw = obj.get("answer", obj.get("answers", obj.get("gold_answer")))
    if isinstance(raw, list):
        values = [str(_expect(record, a, (str, int, float), "answer")) for a in raw]
        gold, aliases = (values[0], values[1:]) if values else (None, [])
    elif raw is not None:
        gold = str(_expect(record, raw, (str, int, float), "answer"))
    for key in ("answer_aliases", "aliases"):
        if key in obj:
            for alias in _expect(record, obj[key], list, key):
                aliases.append(str(_expect(record, alias, (str, int, float), key)))
    return gold, aliases


def musique_shape(qid: str) -> tuple[str, int] | None:
    """(composition, hop count) from a MuSiQue id such as `3hop1__...`; None for other ids."""
    match = _MUSIQUE_ID.match(qid)
    return (qid.split("__", 1)[0], int(match.group(1))) if match else None


def question_type(record: SourceRecord, qid: str) -> str | None:
    """`type` or `question_type`; for MuSiQue ids the composition prefix (`2hop`, `3hop1`, ...)."""
    obj = record_dict(record)
    for key in ("question_type", "type"):
        if key in obj and obj[key] is not None:
            return str(obj[key])
    shape = musique_shape(qid)
    return shape[0] if shape else None


def explicit_hop_count(record: SourceRecord, qid: str) -> int | None:
    """A hop count the record states (`hop_count`) or its MuSiQue id encodes."""
    obj = record_dict(record)
    if "hop_count" in obj:
        return _expect(record, obj["hop_count"], int, "hop_count")
    shape = musique_shape(qid)
    return shape[1] if shape else None


def _sentences_text(record: SourceRecord, sentences: Any, field: str) -> str:
    parts = _expect(record, sentences, list, field)
    return "".join(_expect(record, s, str, field) for s in parts)


def context_paragraphs(record: SourceRecord) -> list[Paragraph]:
    """The record's own paragraphs: HotpotQA list or dict `context`, or `paragraphs` (MuSiQue/HippoRAG)."""
    obj = record_dict(record)
    if "context" in obj:
        ctx = obj["context"]
        if isinstance(ctx, dict):
            titles = _expect(record, ctx.get("title"), list, "context.title")
            sentences = _expect(record, ctx.get("sentences"), list, "context.sentences")
            if len(titles) != len(sentences):
                raise record.error("title and sentences differ in length", "context")
            return [
                Paragraph(_expect(record, t, str, f"context.title[{i}]"),
                          _sentences_text(record, s, f"context.sentences[{i}]"))
                for i, (t, s) in enumerate(zip(titles, sentences, strict=False))
            ]
        out = []
        for i, item in enumerate(_expect(record, ctx, list, "context")):
            pair = _expect(record, item, list, f"context[{i}]")
            if len(pair) != 2:
                raise record.error("expected [title, [sentences]]", f"context[{i}]")
            out.append(Paragraph(_expect(record, pair[0], str, f"context[{i}][0]"),
                                 _sentences_text(record, pair[1], f"context[{i}][1]")))
        return out
    if "paragraphs" in obj:
        out = []
        for i, item in enumerate(_expect(record, obj["paragraphs"], list, "paragraphs")):
            para = _expect(record, item, dict, f"paragraphs[{i}]")
            text = para.get("paragraph_text", para.get("text", para.get("contents")))
            if text is None:
                raise record.error("missing paragraph_text", f"paragraphs[{i}].paragraph_text")
            title = para.get("title")
            supporting = para.get("is_supporting")
            out.append(Paragraph(None if title is None else _expect(record, title, str, f"paragraphs[{i}].title"),
                                 _expect(record, text, str, f"paragraphs[{i}].paragraph_text"),
                                 None if supporting is None else bool(supporting)))
        return out
    return []


def supporting_titles(record: SourceRecord) -> list[str]:
    """Distinct titles of `supporting_facts` (list `[[title, sent]]` or dict `{title: [...]}` form)."""
    obj = record_dict(record)
    facts = obj.get("supporting_facts")
    if facts is None:
        return []
    if isinstance(facts, dict):
        titles = _expect(record, facts.get("title"), list, "supporting_facts.title")
        return list(dict.fromkeys(_expect(record, t, str, "supporting_facts.title") for t in titles))
    out = []
    for i, fact in enumerate(_expect(record, facts, list, "supporting_facts")):
        pair = _expect(record, fact, list, f"supporting_facts[{i}]")
        if not pair:
            raise record.error("expected [title, sentence index]", f"supporting_facts[{i}]")
        out.append(_expect(record, pair[0], str, f"supporting_facts[{i}][0]"))
    return list(dict.fromkeys(out))


def distractor_marks(record: SourceRecord, paragraphs: list[Paragraph]) -> list[bool]:
    """Per context paragraph: does the source mark it a distractor? MuSiQue / HippoRAG `is_supporting: false`;
    HotpotQA / 2Wiki a context paragraph whose title no `supporting_facts` entry names. All False where the
    source marks none (no flags, no supporting facts): nothing is guessed."""
    if any(p.is_supporting is not None for p in paragraphs):
        return [p.is_supporting is False for p in paragraphs]
    titles = set(supporting_titles(record))
    if not titles:
        return [False] * len(paragraphs)
    return [p.title is not None and p.title not in titles for p in paragraphs]


def evidence_triples(record: SourceRecord) -> list[tuple[str, str, str]]:
    """2WikiMultiHopQA `evidences` / `evidence` triples `[subject, relation, object]`, in order."""
    obj = record_dict(record)
    key = "evidences" if "evidences" in obj else "evidence" if "evidence" in obj else None
    if key is None:
        return []
    triples = []
    for i, triple in enumerate(_expect(record, obj[key], list, key)):
        items = _expect(record, triple, list, f"{key}[{i}]")
        if len(items) != 3:
            raise record.error("expected [subject, relation, object]", f"{key}[{i}]")
        triples.append((str(items[0]), str(items[1]), str(items[2])))
    return triples


def evidence_subjects(record: SourceRecord) -> list[str]:
    """Distinct subjects of 2WikiMultiHopQA `evidences` / `evidence` triples, in order."""
    return list(dict.fromkeys(s for s, _, _ in evidence_triples(record)))


def _musique_decomposition(record: SourceRecord, paragraphs: list[Paragraph]) -> list[tuple[int, str | None]]:
    """(paragraph index, sub-question answer) per decomposition step that names its paragraph."""
    obj = record_dict(record)
    steps: list[tuple[int, str | None]] = []
    for j, step in enumerate(obj.get("question_decomposition") or []):
        step = _expect(record, step, dict, f"question_decomposition[{j}]")
        idx = step.get("paragraph_support_idx")
        if idx is None:
            continue
        idx = _expect(record, idx, int, f"question_decomposition[{j}].paragraph_support_idx")
        if not 0 <= idx < len(paragraphs):
            raise record.error(f"index {idx} is outside paragraphs (0..{len(paragraphs) - 1})",
                               f"question_decomposition[{j}].paragraph_support_idx")
        answer = step.get("answer")
        steps.append((idx, None if answer is None else str(answer)))
    return steps


def _given_ids(record: SourceRecord, chunk_id_of: Any) -> list[str] | None:
    obj = record_dict(record)
    for key in ("gold_chunk_ids", "supporting_chunk_ids", "gold_chunks"):
        if key in obj:
            values = _expect(record, obj[key], list, key)
            return [chunk_id_of(_expect(record, v, (str, int), key)) for v in values]
    return None


@dataclass(frozen=True)
class HopInfo:
    """What a dataset says about one gold reference as a hop: its bridge entity and what it yields."""

    entity: str | None = None
    answers: tuple[str, ...] = ()


@dataclass(frozen=True)
class GoldChain:
    """A question's gold references in reasoning order, where that order came from, and per-ref hop facts."""

    refs: list[GoldRef]
    order: str | None  # trajscope.format.GoldOrder, or None when the source states no order
    hops: list[HopInfo]  # parallel to refs


def _evidence_hops(triples: list[tuple[str, str, str]], subjects: list[str]) -> list[HopInfo]:
    # A subject's passage is asked for by its own name; it yields the objects of its triples.
    return [HopInfo(entity=s, answers=tuple(dict.fromkeys(o for t, _, o in triples if t == s)))
            for s in subjects]


def gold_chain(record: SourceRecord, paragraphs: list[Paragraph], chunk_id_of: Any = str) -> GoldChain:
    """Gold references in reasoning order, from whichever annotation the record carries.

    Priority: explicit chunk ids (no stated order); paragraphs flagged supporting (MuSiQue order via
    question_decomposition); supporting_facts titles (ordered by 2Wiki evidence triples when the
    record has them too); 2Wiki evidence subjects.
    """
    given = _given_ids(record, chunk_id_of)
    if given is not None:
        refs = [GoldRef(chunk_id=c) for c in dict.fromkeys(given)]
        return GoldChain(refs, None, [HopInfo() for _ in refs])
    if any(p.is_supporting is not None for p in paragraphs):
        steps = _musique_decomposition(record, paragraphs)
        info: dict[int, HopInfo] = {}
        for j, (idx, _) in enumerate(steps):
            # Hop j is asked for by the answer of hop j - 1 (MuSiQue's "#1" placeholders).
            info.setdefault(idx, HopInfo(entity=steps[j - 1][1] if j else None,
                                         answers=() if (answer := steps[j][1]) is None else (answer,)))
        flagged = [i for i, p in enumerate(paragraphs) if p.is_supporting]
        order = list(dict.fromkeys([i for i, _ in steps] + flagged))
        refs = [GoldRef(title=paragraphs[i].title, text=paragraphs[i].text, paragraph=True) for i in order]
        return GoldChain(refs, "decomposition" if steps else None, [info.get(i, HopInfo()) for i in order])
    triples = evidence_triples(record)
    subjects = list(dict.fromkeys(s for s, _, _ in triples))
    text_of = {p.title: p.text for p in paragraphs if p.title is not None}
    titles = supporting_titles(record)
    if titles:
        if not subjects:
            return GoldChain([GoldRef(title=t, text=text_of.get(t)) for t in titles], "supporting_facts",
                             [HopInfo() for _ in titles])
        # Official 2Wiki has both: the triples give the hop order, supporting titles the set.
        position = {s: i for i, s in enumerate(subjects)}
        titles = sorted(titles, key=lambda t: position.get(t, len(subjects)))
        by_subject = dict(zip(subjects, _evidence_hops(triples, subjects), strict=True))
        return GoldChain([GoldRef(title=t, text=text_of.get(t)) for t in titles], "evidence",
                         [by_subject.get(t, HopInfo()) for t in titles])
    if subjects:
        return GoldChain([GoldRef(title=t, text=text_of.get(t)) for t in subjects], "evidence",
                         _evidence_hops(triples, subjects))
    return GoldChain([], None, [])


def gold_refs(record: SourceRecord, paragraphs: list[Paragraph], chunk_id_of: Any = str) -> list[GoldRef]:
    """Gold references in reasoning order (gold_chain's refs)."""
    return gold_chain(record, paragraphs, chunk_id_of).refs
