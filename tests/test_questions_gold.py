"""A questions file carries gold evidence (passage ids, or titles with sentence ids) and may
be keyed by line number; titles are matched to the corpus the warehouse holds, else kept and reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main
from trajscope.format import Chunk, Question
from trajscope.ingest.importers import ImportOptions, convert_file, import_file
from trajscope.warehouse import load_chunks, open_readonly

F = Path("tests/fixtures/questions_gold")


def _expected(ids: tuple[str, str, str]) -> list[Question]:
    return [
        Question(question_id=ids[0], text="Which river flows through Velm?", gold_answer="Oder",
                 gold_chunk_ids=["d7", "9"], gold_match="given", gold_paragraphs=2),
        # [title, sentence id] pairs name the title's passage, once, in first-mention order.
        Question(question_id=ids[1], text="Which town lies on the Oder?", gold_answer="Velm",
                 gold_chunk_ids=["title:Oder", "title:Velm"], gold_match="title", gold_paragraphs=2),
        Question(question_id=ids[2], text="Who founded the Velm Review?", gold_answer="Ada Brenn",
                 aliases=["A. Brenn"], gold_chunk_ids=["title:Velm Review", "title:Ada Brenn"],
                 gold_match="title", gold_paragraphs=2),
    ]


def test_questions_file_gold_converts_to_exactly_the_expected_questions():
    got = [t.question for t in import_file(F / "log.jsonl", questions=F / "questions.json")]
    assert got == _expected(("q1", "q2", "q3"))


def test_a_file_keyed_by_line_number_joins_a_log_without_ids_by_position():
    got = [t.question for t in import_file(F / "log_no_ids.jsonl", questions=F / "questions_by_line.jsonl")]
    assert got == _expected(("1", "2", "3"))


def test_without_a_corpus_titles_are_kept_and_the_report_says_so(tmp_path):
    report = convert_file(F / "log.jsonl", tmp_path / "out.jsonl", ImportOptions(questions=F / "questions.json"))
    assert any(w.startswith("2 question(s) name gold passages by title only, matched to no corpus chunk: kept as "
                            "title:<title> ids") for w in report.warnings), report.warnings


def _gold(db: Path) -> dict[str, tuple[str | None, list[str], str | None]]:
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, dataset, gold_chunk_ids, gold_match FROM questions").fetchall()
    return {qid: (dataset, list(gold), match) for qid, dataset, gold, match in rows}


def test_ingest_matches_titles_to_the_corpus_the_warehouse_holds(tmp_path):
    db = tmp_path / "wh.duckdb"
    load_chunks(db, [Chunk(chunk_id="m1", text="Velm is a town.", title="Velm"),
                     Chunk(chunk_id="m2", text="The Oder is a river.", title="Oder"),
                     Chunk(chunk_id="m3", text="The Velm Review is a journal.", title="Velm Review")], "mini")
    result = CliRunner().invoke(main, ["ingest", str(F / "log.jsonl"), "--questions", str(F / "questions.json"),
                                       "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "1 title(s) not in the warehouse's corpus (no unique chunk with that title; kept as title ids), " \
           "e.g. Ada Brenn" in result.output
    gold = _gold(db)
    assert gold["q2"] == ("mini", ["m2", "m1"], "title")
    assert gold["q3"] == ("mini", ["m3", "title:Ada Brenn"], "title")
    assert gold["q1"][1:] == (["d7", "9"], "given")  # ids pass unchanged


@pytest.mark.parametrize("corpus", [False, True])
def test_ingest_into_a_warehouse_without_a_corpus_keeps_titles(tmp_path, corpus):
    db = tmp_path / "wh.duckdb"
    args = ["ingest", str(F / "log.jsonl"), "--questions", str(F / "questions.json"), "--db", str(db)]
    result = CliRunner().invoke(main, args + (["--corpus", "demo"] if corpus else []))
    assert result.exit_code == 0, result.output
    gold = _gold(db)
    if corpus:  # a named corpus wins over the warehouse's; none of these titles is in the demo corpus
        assert "4 title(s) not in corpus demo" in result.output
    else:
        assert "2 question(s) name gold passages by title only" in result.output
    assert [gold[q][1] for q in ("q2", "q3")] == [["title:Oder", "title:Velm"],
                                                  ["title:Velm Review", "title:Ada Brenn"]]


def test_the_upload_page_matches_titles_to_the_corpus_the_warehouse_holds(tmp_path):
    from trajscope.app.upload import discard_upload, prepare_upload

    db = tmp_path / "wh.duckdb"
    load_chunks(db, [Chunk(chunk_id="m1", text="Velm is a town.", title="Velm"),
                     Chunk(chunk_id="m2", text="The Oder is a river.", title="Oder")], "mini")
    questions = ("questions.json", (F / "questions.json").read_bytes())
    matched = prepare_upload("log.jsonl", (F / "log.jsonl").read_bytes(), questions=questions, db_path=db)
    kept = prepare_upload("log.jsonl", (F / "log.jsonl").read_bytes(), questions=questions)
    try:
        assert matched.ok and kept.ok, (matched.errors, kept.errors)
        gold = {t.question.question_id: t.question.gold_chunk_ids for t in matched.preview}
        assert gold["q2"] == ["m2", "m1"] and gold["q3"] == ["title:Velm Review", "title:Ada Brenn"]
        assert [t.question.gold_chunk_ids for t in kept.preview][1] == ["title:Oder", "title:Velm"]
    finally:
        for prepared in (matched, kept):
            discard_upload(prepared)
