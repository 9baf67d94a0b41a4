"""Documents inside a tool result (JSON text or a decoded value): ids, titles, text and scores.

Retrieval tools commonly return `[{"id", "title", "text", "score"}, ...]` or `{"results": [...]}`; a
read tool returns one such object. The passage text is the document's text, never its JSON encoding.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from trajscope.format import Candidate, Passage, loads_bounded

from ._fields import Where

_ID_KEYS = ("chunk_id", "doc_id", "document_id", "passage_id", "id", "_id", "docid", "pid")
_TITLE_KEYS = ("title", "name", "page_title")
_TEXT_KEYS = ("text", "content", "passage", "page_content", "body", "snippet", "contents", "chunk", "document")
_SCORE_KEYS = ("score", "relevance", "relevance_score", "similarity", "distance")
_LIST_KEYS = ("results", "documents", "docs", "hits", "passages", "chunks", "items", "data", "retrieved",
              "contexts", "sources")


@dataclass(frozen=True)
class Document:
    """One document a tool returned: its id (or `title:<title>` when it has only a title), title, text, score."""

    doc_id: str
    title: str | None
    text: str | None
    score: float | None

    @property
    def passage_text(self) -> str | None:
        """What the agent read: the title (when the text does not start with it) and the text."""
        if self.title and self.text and not self.text.startswith(self.title):
            return f"{self.title}\n{self.text}"
        return self.text if self.text is not None else self.title


def decoded(value: Any, where: Where) -> Any:
    """A tool result as a value: JSON text decoded under the nesting limit (other text stays a string)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return loads_bounded(value, path=where.path, line=where.line, field=where.prefix or None)
        except json.JSONDecodeError:
            return value
    return value


def _pick(item: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((item[k] for k in keys if item.get(k) is not None), None)


def _document(item: Any) -> Document | None:
    if not isinstance(item, dict):
        return None
    doc_id = _pick(item, _ID_KEYS)
    title = _pick(item, _TITLE_KEYS)
    text = _pick(item, _TEXT_KEYS)
    if isinstance(text, dict):  # {"document": {"text": ...}}: one level of nesting
        text = _pick(text, _TEXT_KEYS)
    title = title if isinstance(title, str) else None
    text = text if isinstance(text, str) else None
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        doc_id = None
    if doc_id is None and title is None:
        return None  # nothing names it: no candidate is invented
    score = _pick(item, _SCORE_KEYS)
    number = isinstance(score, (int, float)) and not isinstance(score, bool)
    return Document(doc_id=str(doc_id) if doc_id is not None else f"title:{title}", title=title, text=text,
                    score=float(score) if number else None)


def documents_of(value: Any) -> list[Document]:
    """The documents in a decoded tool result; [] when it is not a structured result with ids or titles."""
    if isinstance(value, dict):
        inner = next((value[k] for k in _LIST_KEYS if isinstance(value.get(k), list)), None)
        if inner is None:
            doc = _document(value)
            return [doc] if doc is not None and (doc.text is not None or doc.title is not None) else []
        value = inner
    if not isinstance(value, list) or not value:
        return []
    docs = [_document(item) for item in value]
    return [d for d in docs if d is not None] if all(d is not None for d in docs) else []


def candidates(docs: list[Document]) -> list[Candidate]:
    """Search candidates in result order (rank 1 first), the document text as snippet."""
    return [Candidate(chunk_id=d.doc_id, rank=i, score=d.score, snippet=d.text)
            for i, d in enumerate(docs, start=1)]


def passages(docs: list[Document]) -> list[Passage]:
    """Read passages with the document text (title first), not the tool's JSON."""
    return [Passage(chunk_id=d.doc_id, text=d.passage_text) for d in docs]


def result_error(value: Any) -> str | None:
    """The message of a decoded result that is only an error (`{"error": "..."}`), else None."""
    if isinstance(value, dict) and value.get("error") and not documents_of(value):
        err = value["error"]
        return err if isinstance(err, str) else json.dumps(err, ensure_ascii=False)
    return None
