"""`trajscope report`'s evidence-funnel stage tables (rg_funnel, er_funnel): every cell against counts written by
hand from the fixture's flags, McNemar against statsmodels, and stages a log cannot show named, never 0."""

from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner
from funnel_records import reason_mismatches
from statsmodels.stats.contingency_tables import mcnemar

from trajscope.analysis.queries import compare_funnels
from trajscope.analysis.report import build_report
from trajscope.cli import main
from trajscope.format import (
    Candidate,
    Capabilities,
    Chunk,
    FinalStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    RegisterEvent,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
)
from trajscope.warehouse import ingest_trajectories, load_chunks, open_readonly

DATASET = "fx"
N = 12
WORDS = ("Lothair", "Ermengarde", "Xanten", "Aachen", "Verdun", "Trier", "Speyer", "Mainz", "Basel", "Konstanz",
         "Regensburg", "Passau")


# (query names hop 1's title, hop 2 read, final right, hop 1 resolved in a register) per run and question.
FLAGS = {name: [
    {"b1": (i < 6, i < 4, i < 3, i % 3 == 0), "b2": (i < 5, i < 5, i < 4, i % 4 == 0),
     "g1": (i < 8, i < 9, i < 7, i % 2 == 0), "g2": (i < 7, 1 <= i < 10, i < 8, i % 2 == 1)}[name]
    for i in range(N)] for name in ("b1", "b2", "g1", "g2")}


def _chunks() -> list[Chunk]:
    return [Chunk(chunk_id=f"{DATASET}:{i}:{h}", dataset=DATASET, title=f"{WORDS[i]} {('castle', 'abbey')[h - 1]}",
                  text=f"text {i} {h}") for i in range(N) for h in (1, 2)]


def _question(i: int) -> Question:
    return Question(question_id=f"q{i}", text=f"question {i}", dataset=DATASET, gold_answer=f"answer{i}",
                    gold_chunk_ids=[f"{DATASET}:{i}:1", f"{DATASET}:{i}:2"], gold_order="chain")


# The run without tools says why per capability: each funnel stage must carry its own capability's reason.
BLIND_REASONS = {"search_candidates": "its search tool returns text only", "read_action": "it has no read tool"}


def _run(run_id: str, controller: str, condition: str, seed: int, *, tools: bool = True) -> Run:
    return Run(run_id=run_id, dataset=DATASET, controller=controller, condition=condition, seed=seed, model="m",
               retriever=RetrieverSettings(kind="bm25", top_k=5),
               capabilities=Capabilities(search_candidates=tools, read_action=tools, gold_passages=True,
                                         gold_answers=True, judgments=True,
                                         reasons={} if tools else BLIND_REASONS))


def _trajectory(run: Run, i: int, flags: tuple[bool, bool, bool, bool] | None) -> Trajectory:
    g1, g2 = f"{DATASET}:{i}:1", f"{DATASET}:{i}:2"
    if flags is None:  # a log without candidates or reads: a query, then the answer
        steps: list = [SearchStep(query=f"{WORDS[i]} castle"), FinalStep(answer="wrong")]
        final, register = "wrong", []
    else:
        queried, read2, right, resolved = flags
        listed = [Candidate(chunk_id=g1, rank=1, score=1.0), Candidate(chunk_id=g2, rank=2, score=0.5)]
        steps = [SearchStep(query=f"{WORDS[i]} castle" if queried else "zzz qqq", candidates=listed),
                 ReadStep(chunk_ids=[g1], passages=[Passage(chunk_id=g1, text="t")])]
        if read2:
            steps.append(ReadStep(chunk_ids=[g2], passages=[Passage(chunk_id=g2, text="t")]))
        final = f"answer{i}" if right else "wrong"
        steps.append(FinalStep(answer=final))
        register = [RegisterEvent(item_id="r1", step_index=1, from_status="open", to_status="resolved",
                                  supporting_chunk_ids=[g1])] if resolved else []
    return Trajectory(trajectory_id=f"{run.run_id}::{i}", run=run, question=_question(i), steps=steps,
                      final_answer=final, end_reason="final", register_events=register,
                      judgments=[Judgment(judge="contain", score=float(final == f"answer{i}"))])


RG_RUNS = {"b1": ("rg-base-s1", "baseline", 1), "b2": ("rg-base-s2", "baseline", 2),
           "g1": ("rg-gate-s1", "read_gate", 1), "g2": ("rg-gate-s2", "read_gate", 2)}
ER_RUNS = {"b1": ("er-arag-s1", "arag", "baseline", 1), "g1": ("er-reg-s1", "execution_rag", "register", 1)}


def _records() -> list[Trajectory]:
    out = []
    for name, (rid, condition, seed) in RG_RUNS.items():
        run = _run(rid, "react", condition, seed)
        out += [_trajectory(run, i, FLAGS[name][i]) for i in range(N)]
    blind = _run("rg-strict-s1", "react", "strict_prompt", 1, tools=False)
    out += [_trajectory(blind, i, None) for i in range(N)]
    for name, (rid, controller, condition, seed) in ER_RUNS.items():
        run = _run(rid, controller, condition, seed)
        out += [_trajectory(run, i, FLAGS[name][i]) for i in range(N)]
    return out


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("funnel-report") / "w.duckdb"
    ingest_trajectories(path, _records())
    load_chunks(path, _chunks(), DATASET)
    return path


def _passage_stages(flags: tuple[bool, bool, bool, bool]) -> dict[str, tuple[bool, bool]]:
    """(hop 1, hop 2) per stage, by hand: both listed in the top-5, hop 1 always read; hop 2 used when the
    final names the gold answer (the last hop's answer), hop 1 when the register resolved it."""
    queried, read2, right, resolved = flags
    return {"queried": (queried, False), "retrieved": (True, True), "snippet_shown": (True, True),
            "read": (True, read2), "used": (resolved, right)}


STAGES = ("queried", "retrieved", "snippet_shown", "read", "used")
LABELS = {"queried": "Queried for", "retrieved": "Retrieved", "snippet_shown": "Snippet shown", "read": "Read",
          "used": "Used"}


def _rows(table, condition: str) -> dict[str, dict]:
    keys = [c.key for c in table.columns]
    return {r[2]: dict(zip(keys, r, strict=True)) for r in table.rows if r[1] == condition}


def _expect(table, condition: str, seeds: list[str], reference: list[str] | None) -> None:
    rows = _rows(table, condition)
    for stage in STAGES:
        row = rows[LABELS[stage]]
        reached = sum(sum(_passage_stages(FLAGS[s][i])[stage]) for s in seeds for i in range(N))
        assert row["n_passages"] == 2 * N * len(seeds)
        assert row["reached"] == pytest.approx(100 * reached / (2 * N * len(seeds)), abs=1e-9)
        assert row["not_applicable"] is None
        if reference is None:
            assert row["n_questions"] is None and row["mcnemar_p"] is None
            continue
        # Question level (every gold passage reached), seed s against reference seed s, cells summed.
        cells = [[0, 0], [0, 0]]
        for ref, arm in zip(reference, seeds, strict=True):
            for i in range(N):
                a = all(_passage_stages(FLAGS[ref][i])[stage])
                b = all(_passage_stages(FLAGS[arm][i])[stage])
                cells[0 if a else 1][0 if b else 1] += 1
        lost, gained = cells[0][1], cells[1][0]
        assert (row["n_questions"], row["gained"], row["lost"]) == (N * len(seeds), gained, lost)
        assert row["delta"] == pytest.approx(100 * (gained - lost) / (N * len(seeds)), abs=1e-9)
        assert row["mcnemar_p"] == pytest.approx(mcnemar(cells, exact=True).pvalue, abs=1e-12)


@pytest.fixture(scope="module")
def rg(db):
    with open_readonly(db) as con:
        tables = build_report(con, "read-gate", [*(r for r, _, _ in RG_RUNS.values()), "rg-strict-s1"], db_path=db)
    return next(t for t in tables if t.name == "rg_funnel")


def test_read_gate_funnel_shares_and_paired_mcnemar(rg):
    assert rg.not_applicable is None
    _expect(rg, "baseline", ["b1", "b2"], None)
    _expect(rg, "read_gate", ["g1", "g2"], ["b1", "b2"])
    # The known counts behind the cells: hop 2 read under the gate on questions 0-8 (seed 1) and 1-9 (seed 2),
    # under the baseline on 0-3 and 0-4: gained 5 + 5, lost 0 + 1 (question 0, seed 2).
    read = _rows(rg, "read_gate")["Read"]
    assert (read["gained"], read["lost"]) == (10, 1) and read["reference"] == "baseline"
    assert read["mcnemar_p"] == pytest.approx(2 * (1 + 11) / 2**11)


def test_stages_the_log_cannot_show_say_so_never_zero(rg, db):
    rows = _rows(rg, "strict_prompt")
    for stage in ("Retrieved", "Snippet shown", "Read"):
        assert rows[stage]["reached"] is None and rows[stage]["n_passages"] == 0
        assert rows[stage]["mcnemar_p"] is None and rows[stage]["delta"] is None
        assert "not apply" in rows[stage]["not_applicable"]
    # Each stage names itself and its own capability's reason (evidence_funnel.<stage>_reason).
    assert rows["Read"]["not_applicable"] == "read does not apply: it has no read tool"
    assert rows["Retrieved"]["not_applicable"] == "retrieved does not apply: its search tool returns text only"
    assert rows["Snippet shown"]["not_applicable"] == (
        "snippet_shown does not apply: its search tool returns text only")
    with open_readonly(db) as con:  # the rows behind those cells: a reason exactly where the stage is NULL
        assert reason_mismatches(con) == []
        blind = con.execute("SELECT count(*) FROM evidence_funnel WHERE retrieved_reason IS NOT NULL").fetchall()
    assert blind == [(2 * N,)]
    # Queried for and used apply to any log: the strict run's queries name hop 1 (12 of 24 passages).
    assert rows["Queried for"]["reached"] == pytest.approx(50.0) and rows["Queried for"]["not_applicable"] is None
    assert rows["Used"]["reached"] == 0.0 and rows["Used"]["n_questions"] == N


def test_execution_rag_funnel_pairs_the_register_with_arag(db):
    with open_readonly(db) as con:
        tables = build_report(con, "execution-rag", [r for r, *_ in ER_RUNS.values()], db_path=db)
    table = next(t for t in tables if t.name == "er_funnel")
    _expect(table, "A-RAG", ["b1"], None)
    _expect(table, "ExecutionRAG", ["g1"], ["b1"])
    assert _rows(table, "ExecutionRAG")["Read"]["reference"] == "A-RAG"


def test_funnel_table_in_csv_and_latex(db):
    runs = [r for r, _, _ in RG_RUNS.values()]
    out = CliRunner().invoke(main, ["report", "read-gate", *runs, "--format", "csv", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "Evidence funnel" in out.output
    block = out.output[out.output.index("dataset,condition,stage,n_passages,reached"):]
    rows = list(csv.DictReader(io.StringIO(block.split("\n\n")[0])))
    read = next(r for r in rows if r["condition"] == "read_gate" and r["stage"] == "Read")
    assert (read["gained"], read["lost"], read["n_questions"]) == ("10", "1", "24")
    latex = CliRunner().invoke(main, ["report", "read-gate", *runs, "--format", "latex", "--db", str(db)])
    assert latex.exit_code == 0 and "Evidence funnel" in latex.output and "McNemar p" in latex.output


def test_without_gold_passages_the_table_says_why(tmp_path):
    path = tmp_path / "w.duckdb"
    run = _run("nogold", "react", "baseline", 1)
    q = Question(question_id="q", text="q", dataset=DATASET, gold_answer="a")
    ingest_trajectories(path, [Trajectory(trajectory_id="nogold::0", run=run, question=q,
                                          steps=[FinalStep(answer="a")], final_answer="a", end_reason="final")])
    with open_readonly(path) as con:
        table = next(t for t in build_report(con, "read-gate", ["nogold"], db_path=path) if t.name == "rg_funnel")
    assert table.rows == () and "no chosen run has gold passages" in table.not_applicable


def test_report_pairs_agree_with_compare_funnel(db, rg):
    # `trajscope compare --funnel` and the report count the same discordant questions, seed pair by seed pair.
    with open_readonly(db) as con:
        frames = [compare_funnels(con, a, b).frame for a, b in (("rg-base-s1", "rg-gate-s1"),
                                                               ("rg-base-s2", "rg-gate-s2"))]
    rows = _rows(rg, "read_gate")
    for stage in STAGES:
        cells = [r for f in frames for r in f.iter_rows(named=True) if r["scope"] == "all hops" and r["stage"] == stage]
        row = rows[LABELS[stage]]
        assert (row["n_questions"], row["gained"], row["lost"]) == (
            sum(r["n_pairs"] for r in cells), sum(r["b_only"] for r in cells), sum(r["a_only"] for r in cells))
