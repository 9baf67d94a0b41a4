"""BM25 via bm25s must rank exactly as rank-bm25's BM25Okapi with the same tokens."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from trajscope.engine.retrieval import BM25Retriever, indexed_text, make_snippet, okapi_idf, tokenize
from trajscope.format import Chunk

FIXTURE = Path("tests/fixtures/retrieval/corpus.json")
QUERIES = [
    "Who designed Marrow Bridge?",
    "Where was the engineer of the bridge over the Tell born?",
    "novel that won the Lantern Prize",
    "Harrowgate regatta harbour",
    "Mira Solvang Esker novelist",
    "cat mat",
    "Grey Coast harbour workers strike shipyard",
    "publisher founded prize paperback",
    "the the the",  # stop words only: no terms
    "river river Tell",  # repeated query term counts twice in both implementations
]


def fixture_chunks() -> list[Chunk]:
    return [Chunk(**row) for row in json.loads(FIXTURE.read_text())]


def reference(chunks: list[Chunk]) -> BM25Okapi:
    return BM25Okapi([tokenize(indexed_text(c)) for c in chunks], k1=1.5, b=0.75, epsilon=0.25)


def assert_same_ranking(ours: BM25Retriever, ref: BM25Okapi, query: str, k: int) -> None:
    expected = ref.get_scores(tokenize(query))
    np.testing.assert_allclose(ours.scores(query), expected, rtol=1e-9, atol=1e-12)
    hits = ours.search(query, k)
    positive = np.flatnonzero(expected != 0)
    assert len(hits) == min(k, len(positive))
    # rank-bm25 breaks ties arbitrarily, so compare the score sequence and, per score, the set of ids.
    ref_order = sorted(positive, key=lambda i: -expected[i])[:k]
    np.testing.assert_allclose([h.score for h in hits], expected[ref_order], rtol=1e-9)
    ids = ours.chunk_ids
    for h in hits:
        tied = {ids[i] for i in positive if np.isclose(expected[i], h.score, rtol=1e-9)}
        assert h.chunk_id in tied
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


@pytest.mark.parametrize("query", QUERIES)
def test_ranking_parity_with_rank_bm25_on_fixture(query: str) -> None:
    chunks = fixture_chunks()
    assert_same_ranking(BM25Retriever(chunks), reference(chunks), query, k=5)


def test_parity_on_random_corpora_with_negative_idf() -> None:
    # Words in more than half the documents get a negative Robertson IDF: the epsilon floor must match.
    rng = random.Random(7)
    common = ["alpha", "beta", "gamma"]
    vocab = [f"w{i}" for i in range(60)]
    for _trial in range(5):
        docs = []
        for _ in range(40):
            words = [rng.choice(vocab) for _ in range(rng.randint(3, 30))]
            words += [w for w in common if rng.random() < 0.8]
            docs.append(" ".join(words))
        chunks = [Chunk(chunk_id=f"d{i}", text=t) for i, t in enumerate(docs)]
        ref = reference(chunks)
        assert any(ref.idf[w] == pytest.approx(0.25 * ref.average_idf) for w in common)  # floor exercised
        ours = BM25Retriever(chunks)
        for _ in range(10):
            query = " ".join(rng.choice(vocab + common) for _ in range(rng.randint(1, 5)))
            assert_same_ranking(ours, ref, query, k=10)


def test_okapi_idf_matches_rank_bm25_idf_table() -> None:
    chunks = fixture_chunks()
    ref = reference(chunks)
    words = sorted(ref.idf)
    doc_sets = [set(tokenize(indexed_text(c))) for c in chunks]
    df = np.array([sum(w in d for d in doc_sets) for w in words], dtype=float)
    np.testing.assert_allclose(okapi_idf(df, len(chunks), 0.25), [ref.idf[w] for w in words], rtol=1e-12)


def test_query_without_known_terms_returns_nothing() -> None:
    retriever = BM25Retriever(fixture_chunks())
    assert retriever.search("zzzz qqqq") == []
    assert retriever.search("") == []
    assert retriever.search_batch(["zzzz", "Marrow Bridge"], k=1)[1][0].chunk_id == "r01"


def test_hits_carry_snippets_of_configured_length() -> None:
    chunks = fixture_chunks()
    retriever = BM25Retriever(chunks, snippet_chars=40)
    hit = retriever.search("Marrow Bridge engineer", k=1)[0]
    assert hit.retriever == "bm25" and hit.rank == 1 and hit.chunk_id == "r01"
    assert hit.snippet == "Marrow Bridge is a stone arch bridge..."
    assert chunks[0].text.startswith(hit.snippet[:-3])


def test_make_snippet_cuts_at_a_word_boundary() -> None:
    assert make_snippet("short text", 200) == "short text"
    assert make_snippet("one two three four five", 15) == "one two three..."
    assert make_snippet("  spaced\n\nout   words ", 200) == "spaced out words"
    assert make_snippet("x" * 30, 10) == "x" * 10 + "..."


def test_duplicate_chunk_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="duplicate chunk_id 'a'"):
        BM25Retriever([Chunk(chunk_id="a", text="x"), Chunk(chunk_id="a", text="y")])


def test_tokenizer_drops_stop_words_and_keeps_numbers() -> None:
    assert tokenize("The Bridge of 1861, in Esker!") == ["bridge", "1861", "esker"]


def test_rank_gives_the_rows_and_scores_behind_search() -> None:
    retriever = BM25Retriever(fixture_chunks())
    rows, scores = retriever.rank("Marrow Bridge engineer", 4)
    hits = retriever.search("Marrow Bridge engineer", 4)
    assert [retriever.chunk_ids[r] for r in rows] == [h.chunk_id for h in hits]
    assert list(scores) == [h.score for h in hits]
    assert (scores > 0).all()
    empty_rows, empty_scores = retriever.rank("zzzz", 4)  # no known term: every score is 0, nothing ranked
    assert len(empty_rows) == len(empty_scores) == 0


# Prints every demo question's top-10 hits with the exact bits of each score, and the vocabulary's token ids.
_SCORES_IN_A_FRESH_PROCESS = """
import json, tempfile
from trajscope.engine.retrieval import build_retriever
from trajscope.ingest.datasets import load_dataset
ds = load_dataset("demo")
r = build_retriever(ds.chunks, kind="bm25", cache_dir=tempfile.mkdtemp())  # built here, not loaded
hits = [[(h.chunk_id, h.score.hex()) for h in r.search(q.text, 10)] for q in ds.questions]
print(json.dumps({"hits": hits, "vocab": r._index.vocab_dict}))
"""


def test_an_index_built_in_another_process_scores_bit_for_bit_the_same() -> None:
    # A fork replays its parent's searches in a new process and compares them exactly: a vocabulary
    # ordered by string hashes summed the IDF floor in another order, and a score differed in its last bit
    # (seeds 0 and 3 differed on 4 of the demo's 60 questions).
    runs = [subprocess.run([sys.executable, "-c", _SCORES_IN_A_FRESH_PROCESS], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": seed}, cwd=Path(__file__).parent.parent)
            for seed in ("0", "3")]
    first, second = (json.loads(r.stdout) for r in runs)
    assert sum(map(len, first["hits"])) > 100
    assert first["vocab"] == second["vocab"]
    assert first["hits"] == second["hits"]
