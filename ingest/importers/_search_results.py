"""Search results in the nested shapes real retrievers return, as ranked documents.

Beside the flat lists `_documents.documents_of` reads: one list per query (`{"result": [[{"document":
{"id", "contents"}, "score"}]]}` from Search-R1 / FlashRAG retrieval servers), a hit wrapping its document
(`{"document" | "doc" | "passage": {...}, "score"}`), Pyserini's `contents` (`"Title"\\ntext`: the first
line is the title), plain-text blocks `Doc 1(Title: X) text` and markdown hits `[Title](url)` (the url is
the id). Ranks restart at 1 for each query.
"""
from __future__ import annotations

import re
from typing import Any

from ._documents import Document, documents_of

_WRAPPER_KEYS = ("document", "doc", "passage", "chunk", "node")
_RESULT_KEYS = ("result", "results", "retrieved", "documents", "docs", "hits", "passages", "contexts")
_MAX_TITLE = 300  # a first line longer than this is text, not a Pyserini title
# `Doc 1(Title: "Marion, South Australia") text...`: Search-R1's text rendering of its top-k.
# A quoted title may hold parentheses ("Marion (film)"): it runs to its closing quote.
_DOC_BLOCK = re.compile(r'(?m)^Doc\s*(?P<rank>\d+)\s*\(Title:\s*(?:"(?P<quoted>[^"\n]*)"|(?P<title>[^\n]*?))\)[ \t]*')


# `[Title](https://...)` on a line of its own: one hit of a markdown search result list.
_MARKDOWN_HIT = re.compile(r"(?m)^\[(?P<title>[^\]\n]{1,500})\]\((?P<url>[^()\s]{1,2000})\)[ \t]*$")


def _unwrapped(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit `{"document": {...}, "score": s}` as one flat document (the hit's own fields win)."""
    inner = next((hit[k] for k in _WRAPPER_KEYS if isinstance(hit.get(k), dict)), None)
    if inner is None:
        return hit
    flat = {k: v for k, v in inner.items()}
    flat.update({k: v for k, v in hit.items() if k not in _WRAPPER_KEYS})
    return flat


def _with_contents_title(item: dict[str, Any]) -> dict[str, Any]:
    """Pyserini / FlashRAG `contents` is `"Title"\\ntext`: its first line is the title when none is given
    (the contents stay whole: the snippet is what the agent saw)."""
    contents = item.get("contents")
    if item.get("title") is not None or not isinstance(contents, str) or "\n" not in contents:
        return item
    first = contents.split("\n", 1)[0]
    title = first.strip().strip('"').strip()
    if not title or len(first) > _MAX_TITLE:
        return item
    return {**item, "title": title}


def _flat_documents(items: list[Any]) -> list[Document]:
    flat = [_with_contents_title(_unwrapped(i)) if isinstance(i, dict) else i for i in items]
    return documents_of(flat)


def _markdown_hits(text: str) -> list[tuple[int, Document]]:
    """Web-search results written as markdown (smolagents' search tools): `[Title](url)` then its snippet."""
    marks = list(_MARKDOWN_HIT.finditer(text))
    out = []
    for k, mark in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        out.append((k + 1, Document(doc_id=mark.group("url"), title=mark.group("title").strip() or None,
                                    text=text[mark.start():end].strip(), score=None)))
    return out


def _text_blocks(text: str) -> list[tuple[int, Document]]:
    marks = list(_DOC_BLOCK.finditer(text))
    out = []
    for k, mark in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        title = (mark.group("quoted") if mark.group("quoted") is not None else mark.group("title")).strip()
        block = text[mark.start():end].strip()  # the block as the agent saw it, title included
        out.append((int(mark.group("rank")), Document(doc_id=f"title:{title}", title=title or None, text=block,
                                                      score=None)))
    return out


def _per_query(value: Any) -> list[list[Any]] | None:
    """The result lists of a multi-query search (`[[hit, ...], [hit, ...]]`), or None for another shape."""
    if isinstance(value, dict):
        value = next((value[k] for k in _RESULT_KEYS if isinstance(value.get(k), list)), None)
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return value
    return None


def ranked_documents(value: Any, text: str | None) -> list[tuple[int, Document]]:
    """(rank, document) of every result a search returned (decoded `value`, else its `text`); [] if none."""
    groups = _per_query(value)
    if groups is None:
        if isinstance(value, dict):
            inner = next((value[k] for k in _RESULT_KEYS if isinstance(value.get(k), list)), None)
            groups = [inner] if inner is not None else None
        elif isinstance(value, list):
            groups = [value]
    out: list[tuple[int, Document]] = []
    for group in groups or []:
        docs = _flat_documents(group)
        out.extend((rank, doc) for rank, doc in enumerate(docs, start=1))
    if not out and isinstance(value, (dict, list)):
        out = list(enumerate(documents_of(value), start=1))
    if not out and isinstance(text, str):
        out = _text_blocks(text) or _markdown_hits(text)
    return out
