"""first_decisive_error in one grouped pass (so a run or trajectory filter reaches the funnel facts) equals the
definition it replaced, row for row and under the pages' filters, on the per-rule fixture, marked distractors
and the synthetic bench log."""
from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from funnel_records import CHUNKS, DATASET, DECOY, H1, H2, OTHER, _read, _search, _traj, cases, correct_trajectory
from funnel_records import question as fixture_question

from bench.synthetic import write_synthetic_log
from trajscope.format import FinalStep
from trajscope.warehouse import ingest_paths, ingest_trajectories, load_chunks, open_readonly

BEFORE = Path(__file__).parent / "fixtures" / "funnel" / "first_decisive_error_before.sql"


def _before() -> str:
    """The view's SELECT before the rewrite."""
    return BEFORE.read_text().split("CREATE OR REPLACE VIEW first_decisive_error AS", 1)[1].strip().rstrip(";")


def _rules_db(path: Path) -> Path:
    ingest_trajectories(path, [t for t, *_ in cases().values()] + [correct_trajectory()])
    load_chunks(path, CHUNKS, DATASET)
    return path


def _marked_db(path: Path) -> Path:
    # The source marks Xanten (OTHER) and Lothair III (DECOY) as distractors; answers taken from each, and a bridge.
    q = msgspec.structs.replace(fixture_question(), distractor_chunk_ids=[OTHER, DECOY])
    both = [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2), _read(H2)]
    ingest_trajectories(path, [
        _traj("from_marked", [*both, _search("Xanten", OTHER), _read(OTHER), FinalStep(answer="Rhine")], "Rhine", q=q),
        _traj("namesake", [*both, _search("Lothair III", DECOY), _read(DECOY), FinalStep(answer="Hedwig of Formbach")],
              "Hedwig of Formbach", q=q),
        _traj("bridge", [*both, FinalStep(answer="Ermengarde of Tours")], "Ermengarde of Tours", q=q),
        _traj("listed_only", [_search("Lothair II", H1, OTHER), FinalStep(answer="1 January 900")], "1 January 900",
              q=q),
    ])
    load_chunks(path, CHUNKS, DATASET)
    return path


def _synthetic_db(path: Path) -> Path:
    log = path.with_suffix(".jsonl")
    write_synthetic_log(log, 400, seed=5)
    ingest_paths(path, [log], progress=False)
    return path


@pytest.fixture(scope="module", params=["rules", "marked", "synthetic"])
def db(request, tmp_path_factory) -> Path:
    build = {"rules": _rules_db, "marked": _marked_db, "synthetic": _synthetic_db}[request.param]
    return build(tmp_path_factory.mktemp(request.param) / "w.duckdb")


def _both(con, where: str = "") -> tuple[list, list]:
    now = con.execute(f"SELECT * FROM first_decisive_error {where} ORDER BY ALL").fetchall()
    before = con.execute(f"SELECT * FROM ({_before()}) {where} ORDER BY ALL").fetchall()
    return now, before


def test_same_columns_and_rows_as_before(db):
    with open_readonly(db) as con:
        cols = con.execute("DESCRIBE SELECT * FROM first_decisive_error").fetchall()
        assert cols == con.execute(f"DESCRIBE SELECT * FROM ({_before()})").fetchall()
        now, before = _both(con)
        rules = {r[0] for r in con.execute("SELECT DISTINCT rule FROM first_decisive_error").fetchall()}
    assert now == before
    assert len(now) >= 4
    assert len(rules) >= 2  # the fixture is not one rule only: each warehouse decides several


def test_rules_fixture_covers_every_rule_and_confusion(tmp_path):
    # The equality above means something only if the fixture reaches every branch of the rewrite.
    with open_readonly(_rules_db(tmp_path / "w.duckdb")) as con:
        got = con.execute("SELECT rule, confusion, missing_capability FROM first_decisive_error").fetchall()
    assert {r for r, _, _ in got} == {"never_queried", "never_retrieved", "ranked_out", "not_read",
                                      "other_passage_entity", "reasoning", "gave_up", "run_error", None}
    assert {c for _, c, _ in got} >= {"bridge", "decoy"}
    assert {m for _, _, m in got} >= {"read_action", "gold_passages"}


def test_same_rows_under_the_pages_filters(db):
    with open_readonly(db) as con:
        runs = [r[0] for r in con.execute("SELECT DISTINCT run_id FROM first_decisive_error ORDER BY 1").fetchall()]
        tid = con.execute("SELECT min(trajectory_id) FROM first_decisive_error").fetchall()[0][0]
        for where in (f"WHERE run_id = '{runs[0]}'", f"WHERE run_id IN ('{runs[0]}', '{runs[-1]}')",
                      f"WHERE trajectory_id = '{tid}'"):
            now, before = _both(con, where)
            assert now == before and now, where


def test_a_corpus_upsert_reaches_the_stored_walk(tmp_path):
    # Hop 1 is nameable only by its title, which arrives with the corpus after the log: the stored walk
    # (trajectory_funnel_facts.answered_hop) must follow the upsert, or the answer stays "reasoning".
    q = msgspec.structs.replace(fixture_question(), gold_hops=[])
    both = [_search("Lothair II", H1), _read(H1), _search("Ermengarde of Tours", H2), _read(H2)]
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [_traj("title_only", [*both, FinalStep(answer="Lothair II")], "Lothair II", q=q)])
    sql = "SELECT rule, confusion, answered_entity, hop FROM first_decisive_error"
    with open_readonly(db) as con:
        assert con.execute(sql).fetchall() == [("reasoning", None, None, None)]
    load_chunks(db, CHUNKS, DATASET)
    with open_readonly(db) as con:
        assert con.execute(sql).fetchall() == [("other_passage_entity", "bridge", "Lothair II", 1)]
        now, before = _both(con)
    assert now == before
