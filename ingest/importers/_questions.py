"""A companion question file (JSON array/object or JSONL) joined to imported trajectories by id or index."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajscope.format import Question, RecordError, loads_bounded, open_input

from ._fields import Where, need_object
from ._json_stream import check_text, iter_jsonl

_ID_KEYS = ("id", "_id", "question_id", "qid")
_TEXT_KEYS = ("question", "text", "question_text")
_GOLD_KEYS = ("answer", "gold_answer", "gold", "answers")
_ALIAS_KEYS = ("answer_aliases", "aliases")
_TYPE_KEYS = ("type", "question_type")
# Gold evidence a questions file may carry: passage ids, or titles (with sentence ids, HotpotQA's
# `supporting_facts`: the passage is the title's paragraph, so its sentences name one passage).
_GOLD_ID_KEYS = ("gold_chunk_ids", "gold_passage_ids", "gold_ids", "supporting_ids", "supporting_passage_ids",
                 "gold_passages", "supporting_passages")
_GOLD_TITLE_KEYS = ("supporting_facts", "gold_titles", "supporting_titles")


def title_id(title: str) -> str:
    """The id a passage known only by its title gets (gold passages and candidates alike)."""
    return f"title:{title}"


def _gold_evidence(record: dict[str, Any], where: Where) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(gold passage ids, gold titles) the record names, each in order without repeats."""
    ids: list[str] = []
    titles: list[str] = []
    key, value = next(((k, record[k]) for k in _GOLD_ID_KEYS if record.get(k) is not None), (None, None))
    if value is not None:
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            if isinstance(item, dict):  # {"id": ..., "title": ...} passages
                ref = _pick(item, ("chunk_id", "id", "passage_id", "doc_id"))
                if ref is not None and not isinstance(ref, bool):
                    ids.append(str(ref))
                elif isinstance(item.get("title"), str):
                    titles.append(item["title"])
                else:
                    raise where.error("a gold passage needs an id or a title", f"{key}[{i}]")
            elif isinstance(item, (str, int)) and not isinstance(item, bool):
                ids.append(str(item))
            else:
                raise where.error("expected passage ids (strings or integers)", f"{key}[{i}]")
    key, value = next(((k, record[k]) for k in _GOLD_TITLE_KEYS if record.get(k) is not None), (None, None))
    if isinstance(value, dict) and isinstance(value.get("title"), list):  # Hugging Face: {title: [], sent_id: []}
        value = value["title"]
    if value is not None:
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            title = item[0] if isinstance(item, list) and item else item  # [title, sentence id]
            if not isinstance(title, str) or not title.strip():
                raise where.error("expected a title, or [title, sentence id]", f"{key}[{i}]")
            titles.append(title)
    paragraphs = record.get("paragraphs")  # HippoRAG / MuSiQue: paragraphs flagged is_supporting
    if not titles and not ids and isinstance(paragraphs, list):
        titles = [p["title"] for p in paragraphs
                  if isinstance(p, dict) and p.get("is_supporting") is True and isinstance(p.get("title"), str)]
    return tuple(dict.fromkeys(ids)), tuple(dict.fromkeys(titles))


def _pick(record: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((record[k] for k in keys if record.get(k) is not None), None)


@dataclass(frozen=True)
class _Entry:
    question_id: str | None
    text: str
    gold: str | None
    aliases: tuple[str, ...]
    question_type: str | None
    gold_ids: tuple[str, ...] = ()
    gold_titles: tuple[str, ...] = ()


class QuestionBook:
    """Questions of a companion file, addressable by their id and by their 0-based position."""

    def __init__(self, path: Path):
        self.path = path
        self._entries: list[_Entry] = []
        self._by_id: dict[str, int] = {}
        self._by_text: dict[str, int] = {}
        for line, key, record in _records(path):
            self._add(Where(path, line, key), record)
        self._line_base = self._ids_are_line_numbers()

    def _add(self, where: Where, value: Any) -> None:
        record = need_object(value, where)
        if _pick(record, _TEXT_KEYS) is None and len(record) == 1:
            # `{"<key>": {record}}` per line (a file keyed by line number or id): the key is the id.
            (key, inner), = record.items()
            if isinstance(inner, dict) and _pick(inner, _TEXT_KEYS) is not None:
                where = where.at(key)
                record = inner if _pick(inner, _ID_KEYS) is not None else {"id": key, **inner}
        text = _pick(record, _TEXT_KEYS)
        if not isinstance(text, str):
            raise where.error("missing question text (looked for question, text, question_text)", "question")
        qid = _pick(record, _ID_KEYS)
        if qid is not None and (isinstance(qid, bool) or not isinstance(qid, (str, int))):
            raise where.error("expected a string or integer id", "id")
        gold = _pick(record, _GOLD_KEYS)
        aliases = [a for a in (_pick(record, _ALIAS_KEYS) or []) if isinstance(a, str)]
        if isinstance(gold, list):
            golds = [g for g in gold if isinstance(g, str)]
            gold, aliases = (golds[0] if golds else None), golds[1:] + aliases
        elif gold is not None and not isinstance(gold, str):
            gold = str(gold)
        qtype = _pick(record, _TYPE_KEYS)
        gold_ids, gold_titles = _gold_evidence(record, where)
        entry = _Entry(None if qid is None else str(qid), text, gold, tuple(aliases),
                       qtype if isinstance(qtype, str) else None, gold_ids, gold_titles)
        if entry.question_id is not None:
            self._by_id[entry.question_id] = len(self._entries)
        self._by_text.setdefault(text_key(entry.text), len(self._entries))
        self._entries.append(entry)

    def __len__(self) -> int:
        return len(self._entries)

    def _ids_are_line_numbers(self) -> int | None:
        """0 or 1 when the entries' ids are their line numbers counted from it, else None."""
        ids = [e.question_id for e in self._entries]
        for base in (0, 1):
            if ids == [str(i + base) for i in range(len(ids))]:
                return base
        return None

    def find(self, source_id: str | None, index: int | None) -> _Entry | None:
        """By id when the file has ids, else by 0-based index; None when there is no match. A record with
        no id of its own joins a file keyed by line number (0.. or 1..) by its position."""
        if self._by_id and source_id is None and index is not None and self._line_base is not None:
            source_id = str(index + self._line_base)
        if self._by_id:
            return self._entries[self._by_id[source_id]] if source_id in self._by_id else None
        if index is not None and 0 <= index < len(self._entries):
            return self._entries[index]
        return None

    def question(self, where: Where, *, source_id: str | None, index: int | None = None,
                 text: str | None = None, gold: str | None = None, dataset: str | None = None) -> Question:
        """Join one trajectory's question; a key the file lacks is an error naming the id or index."""
        entry = self.find(source_id, index)
        if entry is None:
            wanted = f"id {source_id!r}" + ("" if index is None else f" or index {index}")
            raise where.error(f"question {wanted} not found in {self.path.name} ({len(self)} questions)")
        return _with_evidence(Question(question_id=entry.question_id or source_id or str(index), text=entry.text,
                                       dataset=dataset, gold_answer=entry.gold if entry.gold is not None else gold,
                                       aliases=list(entry.aliases), question_type=entry.question_type), entry)


    def question_by_text(self, where: Where, *, text: str | None, gold: str | None = None) -> Question:
        """Join a question that has no id in its log by its text (whitespace and case folded)."""
        i = self._by_text.get(text_key(text or ""))
        if i is None:
            raise where.error(f"question text {(text or '')[:60]!r} not found in {self.path.name} "
                              f"({len(self)} questions)", "question")
        entry = self._entries[i]
        return _with_evidence(Question(question_id=entry.question_id or text_question_id(entry.text),
                                       text=entry.text, gold_answer=entry.gold if entry.gold is not None else gold,
                                       aliases=list(entry.aliases), question_type=entry.question_type), entry)


def _with_evidence(question: Question, entry: _Entry) -> Question:
    """The entry's gold passages on the question: ids as given, else titles as `title:<title>` (a mapping
    that names a corpus matches them to its chunks)."""
    if entry.gold_ids:
        question.gold_chunk_ids, question.gold_match = list(entry.gold_ids), "given"
        question.gold_paragraphs = len(entry.gold_ids)
    elif entry.gold_titles:
        question.gold_chunk_ids, question.gold_match = [title_id(t) for t in entry.gold_titles], "title"
        question.gold_paragraphs = len(entry.gold_titles)
    return question


def text_key(text: str) -> str:
    """A question's text folded for matching: case and runs of whitespace ignored."""
    return " ".join(text.split()).casefold()


def text_question_id(text: str) -> str:
    """A stable id for a question that has none in its log: a hash of its folded text."""
    return "q-" + hashlib.sha1(text_key(text).encode("utf-8")).hexdigest()[:12]


def _records(path: Path):
    with open_input(path) as fh:
        head = fh.read(8192)
    check_text(path, head)
    if head.lstrip().startswith(b"{") and b"\n{" in head.strip():
        yield from ((line, "", value) for line, value in iter_jsonl(path))
        return
    try:
        data = loads_bounded(path.read_text(encoding="utf-8-sig"), path=path, line=1)
    except json.JSONDecodeError as exc:
        raise RecordError(path, exc.lineno, None, f"questions file is not valid JSON: {exc.msg}") from None
    if isinstance(data, dict):
        if isinstance(data.get("questions"), list):
            data = data["questions"]
        else:
            # {id: record}: the key is the id unless the record names its own.
            data = [{"id": k, **v} if isinstance(v, dict) and _pick(v, _ID_KEYS) is None else v
                    for k, v in data.items()]
    if not isinstance(data, list):
        raise RecordError(path, 1, None, "questions file must be a JSON array, an object of records, or JSONL")
    for i, record in enumerate(data):
        yield 1, f"[{i}]", record


def plain_question(where: Where, question_id: str, text: str | None, gold: str | None = None,
                   dataset: str | None = None) -> Question:
    """A question built only from what the source record carries (text is required)."""
    if not text:
        raise where.error("no question text in the record and no --questions file to join", "question")
    return Question(question_id=question_id, text=text, gold_answer=gold, dataset=dataset)
