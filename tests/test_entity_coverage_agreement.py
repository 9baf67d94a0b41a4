"""The +lowev gate and the low-evidence label agree: one extractor, one matching rule, one threshold."""
from __future__ import annotations

import pytest
from fixtures.forensics.builders import final, llm, read, search, trajectory

from trajscope.engine.controllers import EvidenceState, low_evidence_gate
from trajscope.engine.entities import extract_regex_entities, question_coverage
from trajscope.engine.judge_pass import judge_run
from trajscope.format import LOW_EVIDENCE_THRESHOLD, Run
from trajscope.warehouse import ingest_trajectories, open_warehouse

# (case id, question, read passages, entities the regex extractor must find, low-evidence?)
TRICKY = [
    ("possessive", "Where was Obama's wife born?",
     ["Barack Obama married Michelle Robinson in 1992."], ["Obama"], False),
    ("possessive_plural", "Which of Jesus' disciples was a tax collector?",
     ["Matthew, one of the disciples of Jesus, was a tax collector."], ["Jesus"], False),
    ("article", "Who founded The Beatles?",
     ["John Lennon founded the Beatles in Liverpool."], ["Beatles"], False),
    ("joiner", "When did the Museum of Modern Art open?",
     ["The Museum of Modern Art opened in Manhattan in 1929."], ["Museum of Modern Art"], False),
    ("joiner_missing", "When did the Museum of Modern Art open?",
     ["The Museum of Fine Arts opened in Boston in 1876."], ["Museum of Modern Art"], True),
    ("initials", "Which university did J. R. R. Tolkien teach at?",
     ["J.R.R. Tolkien was a professor at the University of Oxford."], ["J. R. R. Tolkien"], False),
    ("title", "Where was President Lincoln born?",
     ["Abraham Lincoln was born in a log cabin in Kentucky."], ["Lincoln"], False),
    ("title_doctor", "Which film did Dr. Dre produce in 2015?",
     ["Dre produced the film Straight Outta Compton."], ["Dre", "2015"], True),
    ("hyphenated", "Which films did Jean-Luc Godard direct?",
     ["Jean Luc Godard directed Breathless."], ["Jean-Luc Godard"], False),
    ("nested", 'Who wrote "Harry Potter and the Goblet of Fire"?',
     ["Harry Potter and the Goblet of Fire is a novel by J. K. Rowling."],
     ["Harry Potter and the Goblet of Fire"], False),
    ("nested_missing", 'Who wrote "Harry Potter and the Goblet of Fire"?',
     ["Harry Potter is a series of novels by J. K. Rowling."], ["Harry Potter and the Goblet of Fire"], True),
    ("two_of_three", "Are Ed Wood, Scott Derrickson and Tim Burton all American?",
     ["Ed Wood was American.", "Scott Derrickson is an American director."],
     ["Ed Wood", "Scott Derrickson", "Tim Burton", "American"], True),
    ("four_of_five", "Did Anna Karina, Jean Seberg, Brigitte Bardot, Jeanne Moreau and Delphine Seyrig act for Godard?",
     ["Anna Karina, Jean Seberg, Brigitte Bardot and Jeanne Moreau acted in films of Godard."],
     ["Anna Karina", "Jean Seberg", "Brigitte Bardot", "Jeanne Moreau", "Delphine Seyrig", "Godard"], False),
    ("no_entities", "what is the tallest mountain?", ["Everest is the tallest."], [], False),
]


@pytest.mark.parametrize("case, question, passages, entities, low", TRICKY, ids=[c[0] for c in TRICKY])
def test_regex_extractor_and_gate_on_tricky_questions(case, question, passages, entities, low):
    assert extract_regex_entities(question) == entities
    decision = low_evidence_gate("x", EvidenceState(question, search_count=1, read_count=1, read_texts=passages))
    assert (decision is not None) is low
    assert question_coverage(question, passages).low_evidence is low


def test_four_of_five_sits_exactly_on_the_threshold():
    # 5 of 6 entities found: 0.83 >= 0.8, so not low; the boundary value itself is not low either.
    found = question_coverage(TRICKY[12][1], TRICKY[12][2])
    assert found.coverage == pytest.approx(5 / 6) and not found.low_evidence
    assert LOW_EVIDENCE_THRESHOLD == 0.8


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    path = tmp_path_factory.mktemp("agreement") / "wh.duckdb"
    run = Run(run_id="tricky", dataset="hotpotqa", condition="baseline")
    records = [
        trajectory(run, case, question, "gold", [search(("c0", "snippet")),
                   read(*[(f"{case}-{i}", text) for i, text in enumerate(passages)]), final("wrong")],
                   gold_chunks=("never",), judgments=(llm(0.0),))
        for case, question, passages, _, _ in TRICKY
    ]
    ingest_trajectories(path, records)
    judge_run(path, "tricky", extractors=("regex",))
    with open_warehouse(path) as con:
        rows = con.execute("SELECT question_id, low_evidence, entity_coverage FROM failure_rg "
                           "WHERE extractor = 'regex'").fetchall()
    return {qid: (low, coverage) for qid, low, coverage in rows}


@pytest.mark.parametrize("case, question, passages, entities, low", TRICKY, ids=[c[0] for c in TRICKY])
def test_gate_and_warehouse_label_agree(labelled, case, question, passages, entities, low):
    label_low, label_coverage = labelled[case]
    gate = low_evidence_gate("x", EvidenceState(question, search_count=1, read_count=1, read_texts=passages))
    assert label_low is (gate is not None) is low
    assert label_coverage == question_coverage(question, passages).coverage
