"""Corpus construction with deduplication, and gold-passage matching by title or text fingerprint."""
from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from trajscope.format import Chunk

FINGERPRINT_CHARS = 40
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(text: str) -> str:
    """Lowercased NFKC text with punctuation dropped and whitespace collapsed to single spaces."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def fingerprint(text: str) -> str:
    """The first 40 characters of the normalised text (ExecutionRAG's gold-to-chunk key)."""
    return normalise_text(text)[:FINGERPRINT_CHARS]


def _whitespace_key(text: str) -> str:
    return " ".join(text.split())


@dataclass
class CorpusBuilder:
    """Collects passages into chunks, merging exact repeats (same title and text) into one chunk."""

    dataset: str
    chunks: list[Chunk] = field(default_factory=list)
    _by_key: dict[tuple[str | None, str], str] = field(default_factory=dict)

    def add(self, text: str, title: str | None = None, chunk_id: str | None = None) -> str:
        """The chunk id of this passage, creating the chunk on first sight."""
        key = (title, _whitespace_key(text))
        existing = self._by_key.get(key)
        if existing is not None:
            return existing
        new_id = chunk_id if chunk_id is not None else f"{self.dataset}:{len(self.chunks)}"
        self.chunks.append(Chunk(chunk_id=new_id, text=text, dataset=self.dataset, title=title))
        self._by_key[key] = new_id
        return new_id


@dataclass(frozen=True)
class GoldRef:
    """A gold supporting passage as a source names it: by chunk id, by title, by text, or several."""

    title: str | None = None
    text: str | None = None
    chunk_id: str | None = None
    # A supporting paragraph quoted in full (MuSiQue): matched by its 40-character fingerprint first and
    # by title only as the fallback (ExecutionRAG App. E). A title-named gold (HotpotQA / 2Wiki
    # supporting facts) is matched by unique title first.
    paragraph: bool = False


@dataclass(frozen=True)
class GoldMatch:
    """Where a GoldRef landed: a chunk id (None when unmatched) and the method used."""

    chunk_id: str | None
    method: str  # "given" | "title" | "fingerprint" | "unmatched"


class GoldMatcher:
    """Maps gold references to corpus chunks: given id, else unique title then 40-char fingerprint, or for a
    quoted supporting paragraph fingerprint then unique title (ExecutionRAG App. E)."""

    def __init__(self, chunks: list[Chunk]):
        self._ids = {c.chunk_id for c in chunks}
        titles: dict[str, list[str]] = defaultdict(list)
        prints: dict[str, list[Chunk]] = defaultdict(list)
        for chunk in chunks:
            if chunk.title is not None:
                titles[chunk.title].append(chunk.chunk_id)
            prints[fingerprint(chunk.text)].append(chunk)
            if chunk.title and chunk.text.startswith(chunk.title):
                # String corpora often prefix the title ("Title\ntext"); golds usually quote the body only.
                body_print = fingerprint(chunk.text[len(chunk.title):])
                if body_print and chunk not in prints[body_print]:
                    prints[body_print].append(chunk)
        self._unique_titles = {t: ids[0] for t, ids in titles.items() if len(ids) == 1}
        self._prints = dict(prints)

    def match(self, ref: GoldRef) -> GoldMatch:
        """The chunk a gold reference denotes, and how it was found."""
        if ref.chunk_id is not None:
            return GoldMatch(ref.chunk_id, "given") if ref.chunk_id in self._ids else GoldMatch(None, "unmatched")
        by_title = self._by_title(ref)
        if by_title is not None and not ref.paragraph:
            return by_title
        by_print = self._by_fingerprint(ref)
        return by_print or by_title or GoldMatch(None, "unmatched")

    def _by_title(self, ref: GoldRef) -> GoldMatch | None:
        if ref.title is not None and ref.title in self._unique_titles:
            return GoldMatch(self._unique_titles[ref.title], "title")
        return None

    def _by_fingerprint(self, ref: GoldRef) -> GoldMatch | None:
        if ref.text:
            candidates = self._prints.get(fingerprint(ref.text), [])
            if len(candidates) > 1:
                # Several chunks share the prefix: prefer the one whose whole text (then title) agrees.
                whole = normalise_text(ref.text)
                exact = [c for c in candidates if normalise_text(c.text) == whole]
                titled = [c for c in exact or candidates if ref.title is not None and c.title == ref.title]
                candidates = titled or exact or candidates
            if candidates:
                return GoldMatch(candidates[0].chunk_id, "fingerprint")
        return None


@dataclass(frozen=True)
class QuestionGolds:
    """The matched gold chunk ids of one question and the summary method for Question.gold_match."""

    chunk_ids: list[str]
    method: str | None
    n_refs: int
    n_matched: int


_METHOD_RANK = {"given": 0, "title": 1, "fingerprint": 2}


def match_golds(matcher: GoldMatcher, refs: list[GoldRef]) -> QuestionGolds:
    """Match every reference; the question's method is the weakest one used, "unmatched" if none hit."""
    ids: list[str] = []
    methods: set[str] = set()
    matched = 0
    for ref in refs:
        found = matcher.match(ref)
        if found.chunk_id is None:
            continue
        matched += 1
        methods.add(found.method)
        if found.chunk_id not in ids:
            ids.append(found.chunk_id)
    if not refs:
        return QuestionGolds([], None, 0, 0)
    if not methods:
        return QuestionGolds([], "unmatched", len(refs), 0)
    weakest = max(methods, key=_METHOD_RANK.__getitem__)
    return QuestionGolds(ids, weakest, len(refs), matched)
