"""Each loader format against a hand-written fixture with exactly expected canonical records."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajscope.format import Chunk, GoldHop, Question
from trajscope.ingest.datasets import DatasetError, fingerprint, load_dataset, resolve_source

FIX = Path(__file__).parent / "fixtures" / "datasets"


def Q(qid: str, text: str, ds: str, answer: str, qtype: str | None, hops: int, golds: list[str], match: str,
      aliases: list[str] | None = None, paragraphs: int | None = None, order: str | None = None,
      hop_facts: list[tuple[str | None, list[str]]] | None = None, distractors: list[str] | None = None) -> Question:
    # paragraphs: supporting paragraphs the source names; by default every one matched a gold chunk.
    # hop_facts: (bridge entity, answers) per gold chunk, in golds' order.
    # distractors: context paragraphs the source marks not supporting, as chunks (none by default).
    return Question(question_id=qid, text=text, dataset=ds, gold_answer=answer, aliases=aliases or [],
                    question_type=qtype, hop_count=hops, gold_chunk_ids=golds, gold_match=match,
                    gold_paragraphs=paragraphs if paragraphs is not None else (len(golds) or None),
                    gold_order=order,  # type: ignore[arg-type]
                    gold_hops=[GoldHop(chunk_id=c, entity=e, answers=a)
                               for c, (e, a) in zip(golds, hop_facts or [], strict=True)] if hop_facts else [],
                    distractor_chunk_ids=distractors or [])


HOTPOT_QUESTIONS = [
    Q("5a0000000000000000000001", "Which river runs through the town where Ada Quill was born?", "hotpotqa",
      "River Tamber", "bridge", 2, ["hotpotqa:0", "hotpotqa:1"], "title", order="supporting_facts",
      distractors=["hotpotqa:2"]),
    Q("5a0000000000000000000002", "Who was born first, Ada Quill or Bo Lenn?", "hotpotqa", "Bo Lenn",
      "comparison", 2, ["hotpotqa:0", "hotpotqa:3"], "title", order="supporting_facts",
      distractors=["hotpotqa:2"]),
]
HOTPOT_CHUNKS = [
    Chunk(chunk_id="hotpotqa:0", text="Ada Quill was a printer. She was born in Lowbridge.", dataset="hotpotqa",
          title="Ada Quill"),
    Chunk(chunk_id="hotpotqa:1", text="Lowbridge is a town. It has a mill. The River Tamber runs through it.",
          dataset="hotpotqa", title="Lowbridge"),
    Chunk(chunk_id="hotpotqa:2", text="Highmoor is a village on the River Ost.", dataset="hotpotqa", title="Highmoor"),
    Chunk(chunk_id="hotpotqa:3", text="Bo Lenn (born 1801) was a painter.", dataset="hotpotqa", title="Bo Lenn"),
]


@pytest.mark.parametrize("fixture", ["hotpotqa_list.json", "hotpotqa_hf.json"])
def test_hotpotqa_list_and_hf_forms_give_the_same_records_with_a_deduplicated_corpus(fixture: str) -> None:
    ds = load_dataset(FIX / fixture)
    assert ds.source_format == "hotpotqa"
    assert ds.questions == HOTPOT_QUESTIONS
    assert ds.chunks == HOTPOT_CHUNKS  # Ada Quill and Highmoor repeat across questions: one chunk each
    assert ds.contexts == {"5a0000000000000000000001": ["hotpotqa:0", "hotpotqa:1", "hotpotqa:2"],
                           "5a0000000000000000000002": ["hotpotqa:3", "hotpotqa:0", "hotpotqa:2"]}
    assert (ds.n_gold, ds.n_gold_matched, ds.gold_match_rate) == (4, 4, 1.0)


def test_2wiki_official_uses_supporting_titles_and_counts_hops_per_gold_passage() -> None:
    ds = load_dataset(FIX / "2wiki_official.json")
    w = "2wikimultihopqa"
    assert ds.source_format == "2wiki"
    assert ds.questions == [
        Q("aa000000000000000000000000000001", "Who is the mother of the director of Grey Lantern?", w, "Mina Orr",
          "compositional", 2, [f"{w}:1", f"{w}:0"], "title", order="evidence",
          hop_facts=[("Grey Lantern", ["Tal Orr"]), ("Tal Orr", ["Mina Orr"])],
          distractors=[f"{w}:2"]),  # "Tal Ore": in the context, named by no supporting fact
        # Supporting facts name the set; the evidence triples give the hop order (both chains interleaved).
        Q("aa000000000000000000000000000002", "Which film has the director born later, Grey Lantern or Salt Road?",
          w, "Salt Road", "bridge_comparison", 4, [f"{w}:1", f"{w}:3", f"{w}:0", f"{w}:4"], "title",
          order="evidence", hop_facts=[("Grey Lantern", ["Tal Orr"]), ("Salt Road", ["Pim Vale"]),
                                       ("Tal Orr", ["1901"]), ("Pim Vale", ["1920"])]),
    ]
    assert [(c.chunk_id, c.title) for c in ds.chunks] == [
        (f"{w}:0", "Tal Orr"), (f"{w}:1", "Grey Lantern"), (f"{w}:2", "Tal Ore"), (f"{w}:3", "Salt Road"),
        (f"{w}:4", "Pim Vale")]


def test_2wiki_hipporag_layout_matches_evidence_subjects_to_corpus_titles() -> None:
    ds = load_dataset(FIX / "2wiki_hipporag")
    w = "2wikimultihopqa"
    assert ds.source_format == "2wiki"
    assert ds.questions == [
        Q("bb01", "Who is the mother of the director of Grey Lantern?", w, "Mina Orr", "compositional", 2,
          [f"{w}:0", f"{w}:1"], "title", order="evidence",
          hop_facts=[("Grey Lantern", ["Tal Orr"]), ("Tal Orr", ["Mina Orr"])]),
        # "Ember Hill" is no corpus title: one of the two golds stays unmatched.
        # Two supporting paragraphs named, one matched: both stay in the recall denominator.
        Q("bb02", "Which film came out first, Salt Road or Ember Hill?", w, "Ember Hill", "comparison", 2,
          [f"{w}:2"], "title", paragraphs=2, order="evidence", hop_facts=[("Salt Road", ["1961"])]),
    ]
    assert (ds.n_gold, ds.n_gold_matched, ds.gold_match_rate) == (4, 3, 0.75)
    assert ds.gold_counts == {"bb01": (2, 2), "bb02": (2, 1)}


def test_musique_orders_golds_by_decomposition_and_uses_fingerprints_for_repeated_titles() -> None:
    ds = load_dataset(FIX / "musique.jsonl")
    assert ds.source_format == "musique"
    assert ds.questions == [
        Q("2hop__100_200", "Where was the founder of Kelp & Co born?", "musique", "Dunmere", "2hop", 2,
          ["musique:2", "musique:0"], "fingerprint", aliases=["Dunmere town"], order="decomposition",
          hop_facts=[(None, ["Ivo Sand"]), ("Ivo Sand", ["Dunmere"])],
          distractors=["musique:1"]),  # the second "Ivo Sand" paragraph: is_supporting false
        Q("3hop1__300_400_500", "What river flows through the birthplace of the founder of Kelp & Co?", "musique",
          "Orrin", "3hop1", 3, ["musique:2", "musique:0", "musique:3"], "fingerprint", order="decomposition",
          hop_facts=[(None, ["Ivo Sand"]), ("Ivo Sand", ["Dunmere"]), ("Dunmere", ["Orrin"])]),
    ]
    assert [c.text for c in ds.chunks] == [
        "Ivo Sand was born in Dunmere in 1880.", "Ivo Sand later moved to the coast and kept bees.",
        "Kelp & Co was founded by Ivo Sand.", "Dunmere lies on the river Orrin."]


def test_hipporag_supporting_paragraphs_match_by_40_character_fingerprint_else_title() -> None:
    ds = load_dataset(FIX / "hipporag" / "tiny.json")
    assert (ds.name, ds.source_format) == ("tiny", "hipporag")
    assert ds.questions == [
        # "Ivo Sand" titles two corpus passages; the gold's first 40 normalised characters pick tiny:0.
        # Its "Dunmere" paragraph is marked is_supporting false: a distractor here, though q2's gold.
        Q("tiny/q1.json", "Which town is Ivo Sand's birthplace?", "tiny", "Dunmere", None, 1, ["tiny:0"],
          "fingerprint", aliases=["Dunmere town"], distractors=["tiny:2"]),
        # A quoted supporting paragraph: fingerprint first (ExecutionRAG App. E), its unique title the fallback.
        Q("tiny/q2.json", "What river flows through Dunmere?", "tiny", "Orrin", None, 2, ["tiny:2"], "fingerprint",
          paragraphs=2),
    ]
    assert ds.contexts == {"tiny/q1.json": ["tiny:0", "tiny:2"], "tiny/q2.json": ["tiny:2"]}
    assert (ds.n_gold, ds.n_gold_matched) == (3, 2)


def test_linearrag_reads_index_prefixed_chunks_title_lines_and_given_ids() -> None:
    ds = load_dataset(FIX / "linearrag")
    assert (ds.name, ds.source_format) == ("linearrag", "linearrag")
    assert ds.chunks[0] == Chunk(chunk_id="linearrag:0", dataset="linearrag", title="Dunmere",
                                 text="Dunmere\nDunmere lies on the river Orrin. It has a harbour.")
    assert [(c.chunk_id, c.title, c.text) for c in ds.chunks[1:]] == [
        ("linearrag:1", None, "Kelp & Co was founded by Ivo Sand."),
        ("linearrag:2", None, "Ivo Sand was born in Dunmere.")]
    assert ds.questions == [
        Q("lr-1", "What river flows through Dunmere?", "linearrag", "Orrin", "bridge", 1, ["linearrag:0"],
          "fingerprint"),
        Q("lr-2", "Who founded Kelp & Co?", "linearrag", "Ivo Sand", None, 1, ["linearrag:1"], "given",
          aliases=["I. Sand"]),
    ]


def test_linearrag_layout_as_its_run_py_reads_it(tmp_path: Path) -> None:
    # LinearRAG's run.py loads dataset/<name>/chunks.json as a list of strings and numbers them
    # itself (f"{idx}:{chunk}"); questions.json entries carry only `question` and `answer`.
    directory = tmp_path / "novel"
    directory.mkdir()
    chunks = ["Dunmere lies on the river Orrin.", "Ivo Sand founded Kelp & Co."]
    (directory / "chunks.json").write_text(json.dumps(chunks))
    questions = [{"question": "Who founded Kelp & Co?", "answer": "Ivo Sand"}]
    (directory / "questions.json").write_text(json.dumps(questions))
    ds = load_dataset(directory)
    assert ds.source_format == "linearrag"
    assert [(c.chunk_id, c.text) for c in ds.chunks] == [("novel:0", "Dunmere lies on the river Orrin."),
                                                         ("novel:1", "Ivo Sand founded Kelp & Co.")]
    assert [(q.question_id, q.text, q.gold_answer, q.gold_chunk_ids) for q in ds.questions] == [
        ("0", "Who founded Kelp & Co?", "Ivo Sand", [])]
    assert (ds.n_gold, ds.n_gold_matched) == (0, 0)


def test_fingerprint_is_the_first_40_normalised_characters() -> None:
    text = "  Ivo  Sand, a Beekeeper, was born in DUNMERE in 1880!"
    assert fingerprint(text) == "ivo sand a beekeeper was born in dunmere"
    assert len(fingerprint("x" * 100)) == 40


@pytest.mark.parametrize(("fixture", "expected"), [
    ("hotpotqa_list.json", "hotpotqa"), ("hotpotqa_hf.json", "hotpotqa"), ("2wiki_official.json", "2wiki"),
    ("2wiki_hipporag", "2wiki"), ("musique.jsonl", "musique"), ("hipporag/tiny.json", "hipporag"),
    ("hipporag", "hipporag"), ("linearrag", "linearrag"),
])
def test_format_detection(fixture: str, expected: str) -> None:
    assert resolve_source(FIX / fixture).format == expected


def test_explicit_format_overrides_detection_and_name_prefixes_chunk_ids() -> None:
    ds = load_dataset(FIX / "hotpotqa_list.json", "2wiki", name="mine")
    assert ds.source_format == "2wiki" and ds.chunks[0].chunk_id == "mine:0"


def test_bad_records_name_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"_id": "a", "question": "q?", "answer": "x", "context": [["T", ["s."]]]},\n'
                   '  {"_id": "b", "question": 7, "answer": "x", "context": [["T", ["s."]]]}\n]\n')
    with pytest.raises(DatasetError) as err:
        load_dataset(bad, "hotpotqa")
    assert (err.value.line, err.value.field) == (3, "question")
    assert str(err.value).startswith(f"{bad}:3: field question: expected str")

    musique = tmp_path / "m.jsonl"
    musique.write_text('{"id": "2hop__1_2", "question": "q", "answer": "a", "paragraphs": [{"title": "t", '
                       '"paragraph_text": "p", "is_supporting": true}], "question_decomposition": '
                       '[{"paragraph_support_idx": 5}]}\n')
    with pytest.raises(DatasetError, match=r"m\.jsonl:1: field question_decomposition\[0\]\.paragraph_support_idx"):
        load_dataset(musique)

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "1", "question": "q", "paragraphs": []}\n{"id": \n')
    with pytest.raises(DatasetError, match=r"broken\.jsonl:2: not valid JSON"):
        load_dataset(broken, "musique")


def test_duplicate_question_ids_and_unknown_formats_are_refused(tmp_path: Path) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text('[{"_id": "a", "question": "q", "context": [["T", ["s."]]]},\n'
                   ' {"_id": "a", "question": "r", "context": [["T", ["s."]]]}]')
    with pytest.raises(DatasetError, match=r"dup\.json:2: field id: duplicate question id 'a' \(first on line 1\)"):
        load_dataset(dup)
    with pytest.raises(DatasetError, match="unknown format 'squad'"):
        load_dataset(dup, "squad")
    with pytest.raises(DatasetError, match="no such file or directory"):
        load_dataset(tmp_path / "missing.json")
