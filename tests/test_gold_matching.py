"""Gold supporting passages to corpus chunks: MuSiQue paragraphs by 40-character fingerprint first, title as fallback (ExecutionRAG App. E)."""
from __future__ import annotations

from ingest.datasets import FINGERPRINT_CHARS, GoldMatcher, GoldRef
from ingest.datasets._matching import GoldMatch
from trajscope.format import Chunk

CHUNKS = [
    # The corpus's only "Dunmere" passage is an older revision; the quoted paragraph is the other chunk's text.
    Chunk(chunk_id="k0", title="Dunmere", text="Dunmere is a hamlet on the moor, once a mining village."),
    Chunk(chunk_id="k1", title="Dunmere (town)", text="Dunmere lies on the river Orrin and has a harbour."),
    Chunk(chunk_id="k2", title="Orrin", text="The Orrin is a river that flows into the northern sea."),
]


def test_a_quoted_paragraph_is_matched_by_fingerprint_before_its_title():
    ref = GoldRef(title="Dunmere", text="Dunmere lies on the river Orrin and has a harbour!", paragraph=True)
    assert GoldMatcher(CHUNKS).match(ref) == GoldMatch("k1", "fingerprint")
    # The same reference as a title-named gold (HotpotQA supporting facts) keeps the unique title.
    titled = GoldRef(title="Dunmere", text=ref.text)
    assert GoldMatcher(CHUNKS).match(titled) == GoldMatch("k0", "title")


def test_title_is_the_fallback_and_the_fingerprint_is_forty_normalised_characters():
    matcher = GoldMatcher(CHUNKS)
    reworded = GoldRef(title="Orrin", text="A river, the Orrin, flows north.", paragraph=True)
    assert matcher.match(reworded) == GoldMatch("k2", "title")
    assert FINGERPRINT_CHARS == 40
    same_prefix = GoldRef(text="The Orrin is a river that flows into the XX entirely different ending", paragraph=True)
    assert matcher.match(same_prefix) == GoldMatch("k2", "fingerprint")
    assert matcher.match(GoldRef(title="Nowhere", text="Nothing like any passage.", paragraph=True)) == GoldMatch(None, "unmatched")
