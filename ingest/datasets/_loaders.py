"""Building a Dataset from benchmark files: self-contained question files, or questions plus a corpus."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajscope.format import Chunk

from ._dataset import Dataset, QuestionDraft, assemble
from ._errors import DatasetError
from ._json_source import SourceRecord, load_records
from ._matching import CorpusBuilder, GoldMatcher, GoldRef
from ._records import (
    GoldChain,
    Paragraph,
    answers,
    context_paragraphs,
    distractor_marks,
    explicit_hop_count,
    gold_chain,
    question_id,
    question_text,
    question_type,
)

_INDEX_PREFIX = re.compile(r"^(\d+):")
_MAX_TITLE_LINE = 100


def _draft(record: SourceRecord, position: int, chain: GoldChain, context_ids: list[str],
           distractor_ids: list[str]) -> QuestionDraft:
    qid = question_id(record, fallback=str(position))
    gold, aliases = answers(record)
    hops = explicit_hop_count(record, qid)
    refs = chain.refs
    return QuestionDraft(
        question_id=qid,
        text=question_text(record),
        gold_answer=gold,
        aliases=aliases,
        question_type=question_type(record, qid),
        hop_count=hops if hops is not None else (len(refs) or None),
        gold_refs=refs,
        context_ids=context_ids,
        distractor_ids=distractor_ids,
        gold_order=chain.order,
        hops=chain.hops,
    )


def _check_unique_ids(drafts: list[QuestionDraft], records: list[SourceRecord]) -> None:
    seen: dict[str, int] = {}
    for draft, record in zip(drafts, records, strict=False):
        if draft.question_id in seen:
            raise record.error(f"duplicate question id {draft.question_id!r} (first on line "
                               f"{seen[draft.question_id]})", "id")
        seen[draft.question_id] = record.line


def load_self_contained(path: Path, name: str, source_format: str) -> Dataset:
    """HotpotQA / 2Wiki / MuSiQue files whose records carry their own paragraphs: corpus = their union."""
    records = load_records(path)
    corpus = CorpusBuilder(name)
    drafts = []
    for position, record in enumerate(records):
        paragraphs = context_paragraphs(record)
        if not paragraphs:
            raise record.error("record has no paragraphs (expected `context` or `paragraphs`)", "context")
        ids = [corpus.add(p.text, p.title) for p in paragraphs]
        marked = [i for i, mark in zip(ids, distractor_marks(record, paragraphs), strict=True) if mark]
        drafts.append(_draft(record, position, gold_chain(record, paragraphs), ids, marked))
    _check_unique_ids(drafts, records)
    return assemble(name, str(path), source_format, drafts, corpus.chunks)


def _string_chunks(record_values: list[str]) -> list[tuple[str, str]]:
    # A-RAG writes "0:text", "1:text", ...; treat the prefix as the id only if every chunk has it.
    prefixed = all((m := _INDEX_PREFIX.match(v)) and int(m.group(1)) == i for i, v in enumerate(record_values))
    if prefixed:
        return [(v.split(":", 1)[0], v.split(":", 1)[1]) for v in record_values]
    return [(str(i), v) for i, v in enumerate(record_values)]


def _title_of_string_chunk(text: str) -> str | None:
    # HippoRAG-derived string corpora put the title on the first line ("Title\ntext").
    head, sep, rest = text.partition("\n")
    if sep and rest.strip() and 0 < len(head.strip()) <= _MAX_TITLE_LINE:
        return head.strip()
    return None


def _corpus_object(record: SourceRecord, position: int) -> tuple[str, str | None, str]:
    obj: dict[str, Any] = record.value
    key = next((k for k in ("chunk_id", "id") if k in obj), None)
    local_id = str(obj[key]) if key else str(position)
    text = obj.get("text", obj.get("contents", obj.get("content", obj.get("paragraph_text"))))
    if not isinstance(text, str):
        raise record.error("missing passage text", "text")
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        raise record.error(f"expected str, got {type(title).__name__}", "title")
    return local_id, title, text


def load_corpus(path: Path, name: str) -> list[Chunk]:
    """A corpus file: `[{title, text}]` objects (HippoRAG) or strings, optionally `"N:text"` (A-RAG)."""
    records = load_records(path)
    if records and all(isinstance(r.value, str) for r in records):
        entries = [(local, _title_of_string_chunk(text), text)
                   for local, text in _string_chunks([r.value for r in records])]
    else:
        entries = []
        for position, record in enumerate(records):
            if not isinstance(record.value, dict):
                raise record.error(f"expected a passage object or string, got {type(record.value).__name__}")
            entries.append(_corpus_object(record, position))
    chunks, seen = [], set()
    for (local, title, text), record in zip(entries, records, strict=False):
        chunk_id = f"{name}:{local}"
        if chunk_id in seen:
            raise record.error(f"duplicate chunk id {local!r}", "id")
        seen.add(chunk_id)
        chunks.append(Chunk(chunk_id=chunk_id, text=text, dataset=name, title=title))
    return chunks


def load_with_corpus(questions_path: Path, corpus_path: Path, name: str, source_format: str) -> Dataset:
    """Questions over a separate corpus file (HippoRAG, 2Wiki HippoRAG subset, LinearRAG / A-RAG)."""
    chunks = load_corpus(corpus_path, name)
    if not chunks:
        raise DatasetError(corpus_path, "corpus is empty")
    matcher = GoldMatcher(chunks)
    local_ids = {c.chunk_id.split(":", 1)[1]: c.chunk_id for c in chunks}

    def chunk_id_of(value: str | int) -> str:
        return local_ids.get(str(value), f"{name}:{value}")

    records = load_records(questions_path)
    drafts = []
    for position, record in enumerate(records):
        paragraphs: list[Paragraph] = context_paragraphs(record)
        found = [matcher.match(GoldRef(title=p.title, text=p.text)).chunk_id for p in paragraphs]
        context_ids = [c for c in found if c is not None]
        marked = [c for c, mark in zip(found, distractor_marks(record, paragraphs), strict=True)
                  if mark and c is not None]
        drafts.append(_draft(record, position, gold_chain(record, paragraphs, chunk_id_of), context_ids, marked))
    _check_unique_ids(drafts, records)
    return assemble(name, str(questions_path), source_format, drafts, chunks)
