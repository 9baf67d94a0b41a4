"""The evidence funnel's stored stages (evidence_funnel_facts) equal the per-query definition they replaced, on the
fixtures and on real data, and never go stale: changed gold, a replaced run, question and corpus upserts, and a
warehouse whose facts were computed by another definition."""
from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from funnel_records import CHUNKS, DATASET, H1, H2, cases, correct_trajectory, reason_mismatches

from bench.synthetic import write_synthetic_log
from trajscope.analysis.queries import FUNNEL_STAGES
from trajscope.cli import main as cli
from trajscope.format import (
    Candidate,
    Chunk,
    FinalStep,
    GoldHop,
    Passage,
    Question,
    ReadStep,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
)
from trajscope.ingest.datasets import load_dataset
from trajscope.warehouse import (
    ingest_paths,
    ingest_trajectories,
    load_chunks,
    load_questions,
    open_readonly,
    open_warehouse,
)
from trajscope.warehouse._derived import funnel_facts_hash
from trajscope.warehouse.read._upgrade import upgrade_if_warehouse

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).parent / "fixtures" / "funnel" / "evidence_funnel_per_query.sql"
DATA = ROOT.parent / "shared" / "data"
LOGS = DATA / "external_logs"
WIKI = DATA / "2wikimultihopqa"
HOTPOT = DATA / "hotpotqa" / "hotpotqa_distractor_dev_100.json"


def _reference_query() -> str:
    """The view's SELECT before migration 0016, every stage computed per query."""
    body = REFERENCE.read_text().split("CREATE OR REPLACE VIEW evidence_funnel AS", 1)[1]
    return body.strip().rstrip(";")


# Columns the view has and the per-query definition had not: one reason per stage (stage_reason joins them),
# then the marks evidence_funnel_summary counts trajectories by.
PER_STAGE_REASONS = tuple(f"{s}_reason" for s in FUNNEL_STAGES)
COUNT_MARKS = ("first_of_trajectory", "first_of_hop")


QUESTION_VIEW = Path(__file__).parent / "fixtures" / "funnel" / "evidence_funnel_question_grouped.sql"


def _question_rows(db: Path, reference: str | None) -> list[tuple]:
    """evidence_funnel_question's rows, or (reference given) those of the fixture's definition, which groups every
    hop of evidence_funnel instead of reading the stored per-trajectory stage counts."""
    with open_readonly(db) as con:
        sql = "evidence_funnel_question"
        if reference is not None:
            body = reference.split("CREATE OR REPLACE VIEW evidence_funnel_question AS", 1)[1]
            sql = "(" + body.split(";\n", 1)[0] + ")"
        return con.execute(f"SELECT * FROM {sql} ORDER BY ALL").fetchall()


def _summary_mismatches(db: Path) -> list[tuple]:
    """Rows where evidence_funnel_summary's trajectory count differs from count(DISTINCT trajectory_id) over
    evidence_funnel in the same grouping (the definition the stored marks replaced)."""
    with open_readonly(db) as con:
        return con.execute("""
            WITH distinct_counts AS (
                SELECT run_id, CASE WHEN grouping(hop) = 0 THEN 'hop' WHEN grouping(question_type) = 0
                                    THEN 'question_type' ELSE 'run' END AS grouped_by,
                       hop, question_type, count(DISTINCT trajectory_id) AS n
                FROM evidence_funnel
                GROUP BY GROUPING SETS ((run_id), (run_id, hop), (run_id, question_type)))
            SELECT * FROM distinct_counts d
            FULL JOIN evidence_funnel_summary s ON s.run_id = d.run_id AND s.grouped_by = d.grouped_by
                 AND s.hop IS NOT DISTINCT FROM d.hop AND s.question_type IS NOT DISTINCT FROM d.question_type
            WHERE s.n_trajectories IS DISTINCT FROM d.n""").fetchall()


def _funnels(db: Path) -> tuple[list[tuple], list[tuple], list[tuple], list[tuple]]:
    """(stored view's columns, reference columns, stored view's rows, reference rows), rows sorted; the view's
    columns are the reference's in its order, then the per-stage reasons it added."""
    with open_readonly(db) as con:
        ref = _reference_query()
        cols = con.execute("SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM evidence_funnel)").fetchall()
        ref_cols = con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ({ref}))").fetchall()
        shared = ", ".join(c for c, _ in ref_cols)
        rows = con.execute(f"SELECT {shared} FROM evidence_funnel ORDER BY ALL").fetchall()
        ref_rows = con.execute(f"SELECT * FROM ({ref}) ORDER BY ALL").fetchall()
    return cols, ref_cols, rows, ref_rows


def _assert_current(db: Path) -> int:
    """The stored funnel equals the per-query definition, column for column and row for row, and each stage's
    reason is there exactly when the stage is NULL; returns its rows."""
    cols, ref_cols, rows, ref_rows = _funnels(db)
    assert cols == ref_cols + [(c, "VARCHAR") for c in PER_STAGE_REASONS] + [(c, "BOOLEAN") for c in COUNT_MARKS]
    assert rows == ref_rows
    assert _summary_mismatches(db) == []
    assert _question_rows(db, QUESTION_VIEW.read_text()) == _question_rows(db, None)
    with open_readonly(db) as con:
        assert reason_mismatches(con) == []
    return len(rows)


def _one(db: Path, sql: str, *params):
    with open_readonly(db) as con:
        return con.execute(sql, list(params)).fetchall()


# --- the same rows as the per-query definition -------------------------------------------------------------------

def test_fixture_funnel_equals_the_per_query_definition(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [t for t, *_ in cases().values()] + [correct_trajectory()])
    # The corpus after the logs, as `make demo` loads it: titles and texts reach the stored facts by the upsert.
    load_chunks(db, CHUNKS, DATASET)
    n = _assert_current(db)
    assert n == 2 * len(cases())  # two hops for each trajectory (the correct one too) but the one with no gold
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE queried AND title IS NOT NULL")[0][0] > 0


def test_synthetic_bench_log_funnel_equals_the_per_query_definition(tmp_path):
    log, db = tmp_path / "s.jsonl", tmp_path / "w.duckdb"
    write_synthetic_log(log, 400, seed=3)
    ingest_paths(db, [log], progress=False)
    assert _assert_current(db) > 400
    # Hops by first appearance, ranks and reads occur in it (it has no corpus titles, so nothing is queried).
    (retrieved, read, hops), = _one(db, "SELECT count(retrieved_step), count(read_step), max(hop) FROM evidence_funnel")
    assert retrieved > 0 and read > 0 and hops >= 3


def _needs(*paths: Path):
    return pytest.mark.skipif(not all(p.exists() for p in paths), reason="needs ../shared/data")


@_needs(LOGS / "phoenix_openinference", LOGS / "fireact", LOGS / "autoact", WIKI, HOTPOT)
def test_real_logs_and_datasets_funnel_equals_the_per_query_definition(tmp_path):
    db = tmp_path / "w.duckdb"
    fireact = next((LOGS / "fireact").glob("hotpotqa_dev_0_500_*.json"))
    runner = CliRunner()
    questions = LOGS / "fireact" / "hotpotqa_dev_questions.json"
    out = runner.invoke(cli, ["ingest", str(fireact), "--questions", str(questions), "--db", str(db)])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["ingest", str(LOGS / "autoact" / "hard.jsonl"),
                              str(LOGS / "phoenix_openinference" / "openinference_spans.jsonl"),
                              str(LOGS / "otel_genai" / "otel_genai_otlp.jsonl"), "--db", str(db)])
    assert out.exit_code == 0, out.output
    # These logs name no gold passages (their runs' gold_passages capability is false), so the funnel holds no
    # row for them: both definitions agree on that, and on the trajectories below.
    assert _assert_current(db) == 0
    assert _one(db, "SELECT count(*) FROM trajectories")[0][0] == 465 + 100 + 5 + 5
    # Real questions and corpora (2Wiki's evidence order, HotpotQA's supporting facts): one search per question
    # whose query is the question text (it names some titles), listing the gold passages in reverse.
    for path, corpus, run_id in ((WIKI / "questions_1000.json", WIKI / "corpus_6119.json", "wiki_rev"),
                                 (HOTPOT, None, "hotpot_rev")):
        ds = load_dataset(path, corpus=corpus)
        run = Run(run_id=run_id, dataset=ds.name, retriever=RetrieverSettings(top_k=2))
        questions = [q for q in ds.questions if q.gold_chunk_ids][:60]
        ingest_trajectories(db, [Trajectory(
            trajectory_id=f"{run_id}::{q.question_id}", run=run, question=q,
            steps=[SearchStep(query=q.text, candidates=[Candidate(chunk_id=c, rank=i)
                                                        for i, c in enumerate(reversed(q.gold_chunk_ids), 1)]),
                   ReadStep(chunk_ids=q.gold_chunk_ids[:1], passages=[Passage(chunk_id=q.gold_chunk_ids[0], text="t")]),
                   FinalStep(answer=q.gold_answer)], final_answer=q.gold_answer, end_reason="final")
            for q in questions])
        load_chunks(db, ds.chunks, ds.name)
    n = _assert_current(db)
    assert n > 200
    orders = dict(_one(db, "SELECT hop_order, count(*) FROM evidence_funnel GROUP BY ALL"))
    assert set(orders) == {"evidence", "supporting_facts"}
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE queried")[0][0] > 0
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE used_via = 'final'")[0][0] > 0


# --- never stale --------------------------------------------------------------------------------------------------

def _question(gold: list[str], hops: list[GoldHop] | None = None, order: str | None = "chain") -> Question:
    return Question(question_id="q1", text="When did Lothair II's mother die?", dataset=DATASET,
                    gold_answer="20 March 851", gold_chunk_ids=gold, gold_order=order, gold_hops=hops or [])


def _trajectory(run_id: str, question: Question, read: str | None = None) -> Trajectory:
    listed = [Candidate(chunk_id=H2, rank=1), Candidate(chunk_id=H1, rank=2)]
    steps = [SearchStep(query="Lothair II", candidates=listed)]
    if read:
        steps.append(ReadStep(chunk_ids=[read], passages=[Passage(chunk_id=read, text="t")]))
    steps.append(FinalStep(answer="20 March 851"))
    return Trajectory(trajectory_id=f"{run_id}::q1", run=Run(run_id=run_id, dataset=DATASET), question=question,
                      steps=steps, final_answer="20 March 851", end_reason="final")


def _hops(db: Path, run_id: str) -> list[tuple]:
    return _one(db, "SELECT chunk_id, hop, bridge_entity, read_step FROM evidence_funnel WHERE run_id = ? "
                    "ORDER BY hop", run_id)


def test_reingest_with_changed_gold_recomputes_the_facts(tmp_path):
    db = tmp_path / "w.duckdb"
    load_chunks(db, CHUNKS, DATASET)
    ingest_trajectories(db, [_trajectory("a", _question([H1, H2]))])
    assert [r[:2] for r in _hops(db, "a")] == [(H1, 1), (H2, 2)]
    ingest_trajectories(db, [_trajectory("a", _question([H2, H1]))])  # the same trajectory, its gold reordered
    assert [r[:2] for r in _hops(db, "a")] == [(H2, 1), (H1, 2)]
    _assert_current(db)


def test_another_runs_restated_question_recomputes_the_stored_runs_facts(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [_trajectory("a", _question([H1, H2]))])
    assert [r[2] for r in _hops(db, "a")] == [None, None]
    # Run b states the same question with hop entities: the question row is replaced, and run a's stored facts
    # (loaded in an earlier ingest) must say what the view over the new row says.
    hops = [GoldHop(chunk_id=H1, entity="Lothair II", answers=["Ermengarde of Tours"]),
            GoldHop(chunk_id=H2, entity="Ermengarde of Tours", answers=["20 March 851"])]
    ingest_trajectories(db, [_trajectory("b", _question([H1, H2], hops))])
    assert [r[2] for r in _hops(db, "a")] == ["Lothair II", "Ermengarde of Tours"]
    _assert_current(db)


def test_a_replaced_run_recomputes_its_facts(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [_trajectory("a", _question([H1, H2]))])
    assert [r[3] for r in _hops(db, "a")] == [None, None]
    ingest_trajectories(db, [_trajectory("a", _question([H1, H2]), read=H2)])  # the run again, now reading H2
    assert [r[3] for r in _hops(db, "a")] == [None, 1]
    _assert_current(db)


def test_question_and_corpus_upserts_recompute_the_facts_they_change(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [_trajectory("a", _question([H1, H2]))])
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE queried")[0][0] == 0  # no titles yet
    load_chunks(db, CHUNKS, DATASET)
    assert _one(db, "SELECT chunk_id FROM evidence_funnel WHERE queried")[0][0] == H1  # "Lothair II" names H1
    renamed = [Chunk(chunk_id=H1, dataset=DATASET, title="Lothar of Lotharingia", text=CHUNKS[0].text)]
    load_chunks(db, renamed, DATASET)
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE queried")[0][0] == 0
    load_questions(db, [_question([H1, H2], order=None)], DATASET)
    assert {r for r, in _one(db, "SELECT hop_order FROM evidence_funnel")} == {"first_appearance"}
    # H2 was listed first (rank 1 at step 0, with H1): first appearance keeps list order between the two.
    assert [r[:2] for r in _hops(db, "a")] == [(H1, 1), (H2, 2)]
    _assert_current(db)


def test_facts_of_another_definition_are_recomputed_on_the_next_open(tmp_path, monkeypatch):
    monkeypatch.setattr("trajscope.warehouse._derived._RECOMPUTE_SLICE", 3)  # several slices, as at scale
    db = tmp_path / "w.duckdb"
    load_chunks(db, CHUNKS, DATASET)
    ingest_trajectories(db, [t for t, *_ in cases().values()])
    with open_warehouse(db) as con:  # as older code would have left them: other numbers, another hash
        con.execute("UPDATE evidence_funnel_facts SET best_rank = 99, hop = NULL")
        con.execute("UPDATE derived_facts_state SET definition_hash = 'old'")
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE best_rank = 99")[0][0] > 0
    # Every read goes through upgrade_if_warehouse: it sees the old hash and recomputes.
    assert upgrade_if_warehouse(db) == "upgraded"
    state = "SELECT definition_hash FROM derived_facts_state WHERE name = 'evidence_funnel_facts'"
    assert _one(db, state)[0][0] == funnel_facts_hash()
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE best_rank = 99")[0][0] == 0
    # The slices are runs of consecutive ids, written in order: the stored rows stay clustered by trajectory id
    # (what lets a run or trajectory filter skip row groups), where hash slices scattered them.
    stored = [tid for tid, in _one(db, "SELECT trajectory_id FROM evidence_funnel_facts ORDER BY rowid")]
    ranks = {tid: i for i, (tid,) in enumerate(_one(db, "SELECT trajectory_id FROM trajectories ORDER BY 1"))}
    slices = [ranks[tid] // 3 for tid in stored]
    assert len(set(slices)) > 2 and slices == sorted(slices)
    _assert_current(db)


def test_migration_fills_the_facts_of_an_existing_warehouse(tmp_path):
    db = tmp_path / "w.duckdb"
    load_chunks(db, CHUNKS, DATASET)
    ingest_trajectories(db, [t for t, *_ in cases().values()])
    with open_warehouse(db) as con:  # back to schema 15: no facts table, no state
        con.execute("DROP VIEW IF EXISTS evidence_funnel CASCADE")
        con.execute("DROP TABLE evidence_funnel_facts")
        con.execute("DROP TABLE derived_facts_state")
        con.execute("DELETE FROM schema_migrations WHERE version >= 16")
        con.execute("DELETE FROM views_state")
    with open_warehouse(db):
        pass
    assert _one(db, "SELECT count(*) FROM evidence_funnel_facts")[0][0] == 2 * (len(cases()) - 1)
    _assert_current(db)


def test_a_log_with_changed_gold_loaded_in_several_batches_keeps_every_batch_current(tmp_path, monkeypatch):
    # Small batches: the second ingest's batches each restate questions the other batches' trajectories ask.
    monkeypatch.setattr("trajscope.warehouse._loader._BATCH_BYTES", 40_000)
    log = tmp_path / "s.jsonl"
    db = tmp_path / "w.duckdb"
    write_synthetic_log(log, 120, seed=1)
    ingest_paths(db, [log], progress=False)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for r in records:
        r["question"]["gold_order"] = "chain"
    log.write_bytes(b"".join(msgspec.json.encode(r) + b"\n" for r in records))
    ingest_paths(db, [log], progress=False)
    assert {r for r, in _one(db, "SELECT DISTINCT hop_order FROM evidence_funnel")} == {"chain"}
    _assert_current(db)


def test_a_warehouse_with_the_old_view_gets_the_per_stage_reasons_on_the_next_open(tmp_path):
    db = tmp_path / "w.duckdb"
    load_chunks(db, CHUNKS, DATASET)
    ingest_trajectories(db, [t for t, *_ in cases().values()])
    with open_warehouse(db) as con:  # as older code left it: the view with stage_reason only, another views hash
        con.execute("CREATE OR REPLACE VIEW evidence_funnel AS " + _reference_query())
        con.execute("UPDATE views_state SET views_hash = 'old'")
    columns = "SELECT column_name FROM duckdb_columns() WHERE table_name = 'evidence_funnel'"
    assert "read_reason" not in {c for c, in _one(db, columns)}
    assert upgrade_if_warehouse(db) == "upgraded"
    assert set(PER_STAGE_REASONS) <= {c for c, in _one(db, columns)}
    assert _one(db, "SELECT count(*) FROM evidence_funnel WHERE read_reason IS NOT NULL")[0][0] > 0
    _assert_current(db)


def test_funnel_stage_all_is_the_bool_and_of_funnel_stage_over_every_case(tmp_path):
    # Every mix of passages that did and did not reach a stage (1-3 passages), under a log that shows the stage,
    # one that does not, and an unknown capability: the stored counts give what bool_and over the hops gave.
    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, [t for t, *_ in cases().values()])  # installs the measure macros
    with open_readonly(db) as con:
        got = con.execute("""
            WITH cases AS (
                SELECT c.id, c.reached, s.log_shows
                FROM (SELECT row_number() OVER () AS id, r AS reached
                      FROM (SELECT unnest([[true], [false], [true, true], [true, false], [false, false],
                                           [true, true, false], [false, false, false], [false, true, true]]) AS r)) c
                CROSS JOIN (SELECT unnest([true, false, NULL]) AS log_shows) s
            ), hops AS (
                SELECT id, log_shows, unnest(reached) AS reached FROM cases
            )
            SELECT id, log_shows,
                   bool_and(funnel_stage(CASE WHEN reached THEN 1 END, log_shows)) AS by_hops,
                   funnel_stage_all(count(*) FILTER (reached), count(*), log_shows) AS by_counts
            FROM hops GROUP BY id, log_shows""").fetchall()
    assert len(got) == 24
    assert [r for r in got if r[2] is not r[3]] == []
    assert {r[2] for r in got} == {True, False, None}  # each outcome is met
