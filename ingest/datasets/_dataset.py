"""The Dataset value: canonical questions and chunks with the gold-matching statistics."""
from __future__ import annotations

from dataclasses import dataclass, field

from trajscope.format import Chunk, GoldHop, Question

from ._matching import GoldMatcher, GoldRef, match_golds
from ._records import HopInfo


@dataclass(frozen=True)
class Dataset:
    """Questions over a corpus, with gold-matching statistics.

    contexts: question id -> its own paragraphs (gold + distractors) where the source has them;
    gold_counts: question id -> (gold references named by the source, references matched).
    """

    name: str
    questions: list[Question]
    chunks: list[Chunk]
    gold_match_rate: float
    n_gold: int
    n_gold_matched: int
    source: str
    source_format: str | None = None
    contexts: dict[str, list[str]] = field(default_factory=dict)
    gold_counts: dict[str, tuple[int, int]] = field(default_factory=dict)

    def chunk_map(self) -> dict[str, Chunk]:
        """Chunks by id."""
        return {c.chunk_id: c for c in self.chunks}

    def question_map(self) -> dict[str, Question]:
        """Questions by id."""
        return {q.question_id: q for q in self.questions}


@dataclass
class QuestionDraft:
    """A question as a loader read it, before its gold references are matched to chunks."""

    question_id: str
    text: str
    gold_answer: str | None = None
    aliases: list[str] = field(default_factory=list)
    question_type: str | None = None
    hop_count: int | None = None
    gold_refs: list[GoldRef] = field(default_factory=list)
    context_ids: list[str] = field(default_factory=list)
    distractor_ids: list[str] = field(default_factory=list)  # context paragraphs the source marks not supporting
    gold_order: str | None = None  # trajscope.format.GoldOrder of gold_refs
    hops: list[HopInfo] = field(default_factory=list)  # parallel to gold_refs


def _gold_hops(matcher: GoldMatcher, draft: QuestionDraft, chunk_ids: list[str]) -> list[GoldHop]:
    """Hop facts per matched gold chunk, in gold_chunk_ids' order; [] when the source names none."""
    if not any(h.entity or h.answers for h in draft.hops):
        return []
    by_chunk: dict[str, HopInfo] = {}
    for ref, hop in zip(draft.gold_refs, draft.hops, strict=True):
        found = matcher.match(ref).chunk_id
        if found is not None:
            by_chunk.setdefault(found, hop)
    return [GoldHop(chunk_id=c, entity=by_chunk[c].entity, answers=list(by_chunk[c].answers)) for c in chunk_ids]


def match_rate(n_matched: int, n_gold: int) -> float:
    """Matched share of gold references; 0.0 when a dataset names no golds at all."""
    return n_matched / n_gold if n_gold else 0.0


def assemble(
    name: str, source: str, source_format: str, drafts: list[QuestionDraft], chunks: list[Chunk]
) -> Dataset:
    """Match every draft's gold references against the corpus and build the Dataset with its stats."""
    matcher = GoldMatcher(chunks)
    questions: list[Question] = []
    contexts: dict[str, list[str]] = {}
    gold_counts: dict[str, tuple[int, int]] = {}
    n_gold = n_matched = 0
    for draft in drafts:
        golds = match_golds(matcher, draft.gold_refs)
        n_gold += golds.n_refs
        n_matched += golds.n_matched
        gold_counts[draft.question_id] = (golds.n_refs, golds.n_matched)
        aliases = [a for a in dict.fromkeys(draft.aliases) if a and a != draft.gold_answer]
        questions.append(
            Question(
                question_id=draft.question_id,
                text=draft.text,
                dataset=name,
                gold_answer=draft.gold_answer,
                aliases=aliases,
                question_type=draft.question_type,
                hop_count=draft.hop_count,
                gold_chunk_ids=golds.chunk_ids,
                gold_match=golds.method,  # type: ignore[arg-type]
                # Distinct references: a title named by several evidence triples (2Wiki) is one paragraph.
                gold_paragraphs=len(dict.fromkeys(draft.gold_refs)) or None,
                gold_order=draft.gold_order if golds.chunk_ids else None,  # type: ignore[arg-type]
                gold_hops=_gold_hops(matcher, draft, golds.chunk_ids),
                # A paragraph marked a distractor that is also a matched gold chunk (a repeated text) is gold.
                distractor_chunk_ids=[c for c in dict.fromkeys(draft.distractor_ids) if c not in golds.chunk_ids],
            )
        )
        if draft.context_ids:
            contexts[draft.question_id] = list(dict.fromkeys(draft.context_ids))
    return Dataset(
        name=name,
        questions=questions,
        chunks=chunks,
        gold_match_rate=match_rate(n_matched, n_gold),
        n_gold=n_gold,
        n_gold_matched=n_matched,
        source=source,
        source_format=source_format,
        contexts=contexts,
        gold_counts=gold_counts,
    )
