"""A study has several models and reasoning efforts per dataset: reports pair arms only within one setting, say
which groups they made, build Read-Gate's Table 12 across models, and name tables by what they hold."""
from __future__ import annotations

import pytest

from trajscope.analysis.report import build_report
from trajscope.format import (
    Candidate,
    FinalStep,
    Judgment,
    ModelSettings,
    Passage,
    Question,
    ReadStep,
    RetrieverSettings,
    Run,
    SearchStep,
    Trajectory,
    make_trajectory_id,
)
from trajscope.warehouse import ingest_trajectories, open_readonly

N = 11
# (run id, model, effort, condition) -> the questions it answers right
RIGHT = {
    ("base-m-medium", "m", "medium", "baseline"): range(11),
    ("base-m-minimal", "m", "minimal", "baseline"): range(3),
    ("gate-m-minimal", "m", "minimal", "read_gate"): range(7),
    ("base-m2-minimal", "m2", "minimal", "baseline"): range(5),
    ("gate-m2-minimal", "m2", "minimal", "read_gate"): range(4),
}


def _records() -> list[Trajectory]:
    records = []
    for (rid, model, effort, condition), right in RIGHT.items():
        run = Run(run_id=rid, dataset="hotpotqa", controller="read_gate", condition=condition, model=model,
                  model_settings=ModelSettings(reasoning_effort=effort))
        for i in range(N):
            gold = f"g{i}"
            steps = [SearchStep(query="Ann Lee", candidates=[Candidate(chunk_id=gold, rank=1, snippet="Ann Lee")]),
                     ReadStep(chunk_ids=[gold], passages=[Passage(chunk_id=gold, text="Ann Lee is from Paris.")])]
            answer = "Paris" if i in right else "Lyon"
            records.append(Trajectory(
                trajectory_id=make_trajectory_id(rid, f"q{i}"), run=run,
                question=Question(question_id=f"q{i}", text="Where is Ann Lee from?", dataset="hotpotqa",
                                  gold_answer="Paris", gold_chunk_ids=[gold]),
                steps=[*steps, FinalStep(answer=answer)], final_answer=answer, end_reason="final",
                judgments=[Judgment(judge="contain", score=1.0 if i in right else 0.0)]))
    return records


def _delta(base: str, gate: str) -> float:
    """Paired Δ in points, from the fixture's own right-answer sets (every question pairs)."""
    right = {k[0]: set(v) for k, v in RIGHT.items()}
    return 100 * (len(right[gate]) - len(right[base])) / N


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    path = tmp_path_factory.mktemp("groups") / "wh.duckdb"
    ingest_trajectories(path, _records())
    return path


def _tables(path, runs):
    with open_readonly(path) as con:
        return {t.name: t for t in build_report(con, "read-gate", runs, db_path=path)}


def _rows(table):
    return [dict(zip([c.key for c in table.columns], r, strict=True)) for r in table.rows]


def test_table_3_pairs_the_gate_with_the_baseline_of_its_own_effort(warehouse):
    tables = _tables(warehouse, ["base-m-medium", "base-m-minimal", "gate-m-minimal"])
    (row,) = _rows(tables["rg_t3"])
    assert row["dataset"] == "hotpotqa [reasoning_effort=minimal]"
    assert row["n"] == N
    # Minimal vs minimal: +36.4; the medium baseline (all right) paired with the gate would give -36.4.
    assert row["delta"].value == pytest.approx(_delta("base-m-minimal", "gate-m-minimal"))
    assert round(row["delta"].value, 1) == 36.4
    assert _delta("base-m-medium", "gate-m-minimal") == pytest.approx(-row["delta"].value)
    note = next(n for n in tables["rg_t3"].notes if n.startswith("Groups:"))
    assert "reasoning_effort" in note
    assert "hotpotqa [reasoning_effort=medium] (1 run(s))" in note
    assert "hotpotqa [reasoning_effort=minimal] (2 run(s))" in note


def test_arms_of_different_efforts_do_not_pair(warehouse):
    tables = _tables(warehouse, ["base-m-medium", "gate-m-minimal"])
    assert tables["rg_t3"].not_applicable is not None
    assert tables["rg_t2"].not_applicable is not None  # Table 2 pools no arms across efforts either


def test_table_12_transfer_across_models_pairs_within_each_model(warehouse):
    runs = ["base-m-minimal", "gate-m-minimal", "base-m2-minimal", "gate-m2-minimal"]
    tables = _tables(warehouse, runs)
    rows = {r["model"]: r for r in _rows(tables["rg_t12"])}
    assert set(rows) == {"m", "m2"}
    assert rows["m"]["delta"].value == pytest.approx(_delta("base-m-minimal", "gate-m-minimal"))
    assert rows["m2"]["delta"].value == pytest.approx(_delta("base-m2-minimal", "gate-m2-minimal"))
    assert rows["m2"]["no_gate"] == pytest.approx(100 * 5 / N) and rows["m2"]["n"] == N
    assert all(r["dataset"] == "hotpotqa" for r in rows.values())
    # Table 3 has one row per model, not one pooled over both.
    assert {r["dataset"] for r in _rows(tables["rg_t3"])} == {"hotpotqa [model=m]", "hotpotqa [model=m2]"}
    one_model = _tables(warehouse, ["base-m-minimal", "gate-m-minimal"])["rg_t12"]
    assert "one model" in one_model.not_applicable


def _register_run(rid: str, dataset: str, embedding: str | None) -> list[Trajectory]:
    run = Run(run_id=rid, dataset=dataset, controller="execution_rag", condition="register", model="m",
              retriever=RetrieverSettings(embedding_model=embedding))
    return [Trajectory(
        trajectory_id=make_trajectory_id(rid, f"q{i}"), run=run,
        question=Question(question_id=f"q{i}", text="Where is Ann Lee from?", dataset=dataset, gold_answer="Paris",
                          hop_count=2 + i % 2),
        steps=[FinalStep(answer="Paris")], final_answer="Paris", end_reason="final",
        judgments=[Judgment(judge="contain", score=1.0)]) for i in range(4)]


def test_per_category_tables_are_named_by_backbone_not_position(tmp_path):
    """ER Tables 3-5 are MiniLM, 6-8 Qwen3-Embedding: a Qwen-only MuSiQue run is Table 6 (by position it was
    the first backbone: Table 3); a third backbone gets a table named by dataset and backbone."""
    records = (_register_run("mq-qwen", "musique", "Qwen3-Embedding-0.6B")
               + _register_run("mq-bge", "musique", "bge-small"))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "execution-rag", ["mq-qwen", "mq-bge"], db_path=path)}
    assert "er_t6" in tables and "er_t3" not in tables
    assert "Qwen3-Embedding-0.6B" in tables["er_t6"].caption
    assert tables["er_category_musique_bge_small"].title == "Per-category (musique, bge-small)"
    assert sum(r[1] for r in tables["er_t6"].rows) == 4


def _ablation_run(rid: str, condition: str, variant: str | None) -> list[Trajectory]:
    run = Run(run_id=rid, dataset="musique", controller="execution_rag", condition=condition, model="m")
    out = []
    for i in range(3):
        t = Trajectory(
            trajectory_id=make_trajectory_id(rid, f"q{i}"), run=run,
            question=Question(question_id=f"q{i}", text="Where is Ann Lee from?", dataset="musique",
                              gold_answer="Paris", hop_count=2),
            steps=[FinalStep(answer="Paris")], final_answer="Paris", end_reason="final",
            judgments=[Judgment(judge="contain", score=1.0)], metadata={"variant": variant} if variant else {})
        out.append(t)
    return out


def test_ablation_tables_warn_when_an_arm_ran_another_variant(tmp_path):
    """ER Table 2 removes one component of one system: a `no_updates` run recorded as the composed variant
    beside an agent `register` run is flagged under Tables 2 and 10 (and only there)."""
    records = (_ablation_run("reg", "register", "agent") + _ablation_run("noup", "no_updates", "composed")
               + _ablation_run("noup-agent", "no_updates", "agent") + _ablation_run("old", "no_updates", None))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        mixed = {t.name: t for t in build_report(con, "execution-rag", ["reg", "noup"], db_path=path)}
        matched = {t.name: t for t in build_report(con, "execution-rag", ["reg", "noup-agent"], db_path=path)}
        old = {t.name: t for t in build_report(con, "execution-rag", ["reg", "old"], db_path=path)}
    for name in ("er_t2", "er_t10"):
        warning = [n for n in mixed[name].notes if n.startswith("VARIANT NOT MATCHED on musique")]
        assert len(warning) == 1 and "noup" in warning[0] and "composed" in warning[0] and "agent" in warning[0]
        assert not any("VARIANT" in n or "Variant not checked" in n for n in matched[name].notes)
        assert any(n.startswith("Variant not checked on musique: run(s) old") for n in old[name].notes)
    assert not any("VARIANT" in n for n in mixed["er_t1"].notes)


def _scored_run(rid: str, dataset: str, controller: str, condition: str, right: int, n: int) -> list[Trajectory]:
    run = Run(run_id=rid, dataset=dataset, controller=controller, condition=condition, model="m",
              retriever=RetrieverSettings(embedding_model="Qwen3-Embedding-0.6B"))
    return [Trajectory(
        trajectory_id=make_trajectory_id(rid, f"q{i}"), run=run,
        question=Question(question_id=f"q{i}", text="Where is Ann Lee from?", dataset=dataset, gold_answer="Paris"),
        steps=[FinalStep(answer="Paris" if i < right else "Lyon")], final_answer="Paris" if i < right else "Lyon",
        end_reason="final", judgments=[Judgment(judge="contain", score=1.0 if i < right else 0.0)])
        for i in range(n)]


def test_figure_3_averages_the_benchmarks_not_the_questions(tmp_path):
    """ER Figure 3 (right): the average accuracy across benchmarks. 9/10 on HotpotQA and 1/4 on 2Wiki average
    57.5, where pooling the 14 questions would say 71.4; a method missing a benchmark has no average."""
    records = (_scored_run("h-erag", "hotpotqa", "execution_rag", "register", 9, 10)
               + _scored_run("w-erag", "2wiki", "execution_rag", "register", 1, 4)
               + _scored_run("h-arag", "hotpotqa", "arag", "baseline", 5, 10))
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, records)
    with open_readonly(path) as con:
        fig3 = next(t for t in build_report(con, "execution-rag", ["h-erag", "w-erag", "h-arag"], db_path=path)
                    if t.name == "er_fig3")
    rows = {r["method"]: r for r in _rows(fig3)}
    erag, arag = rows["ExecutionRAG"], rows["A-RAG"]
    expected = (100 * 9 / 10 + 100 * 1 / 4) / 2
    assert erag["avg_contain"] == pytest.approx(expected) and round(expected, 1) == 57.5
    assert erag["avg_contain"] != pytest.approx(100 * 10 / 14)
    assert erag["hotpotqa_contain"] == pytest.approx(90.0) and erag["2wiki_contain"] == pytest.approx(25.0)
    assert arag["avg_contain"] is None and arag["2wiki_contain"] is None
    assert erag["embedding"] == "Qwen3-Embedding-0.6B"


def test_the_dashboards_plane_arrows_join_a_baseline_of_the_same_effort(warehouse):
    from trajscope.app.queries import plane_arrows_sql

    with open_readonly(warehouse) as con:
        arrows = con.execute(plane_arrows_sql("regex", [])).fetchall()
    pairs = {(a[1], a[2]) for a in arrows}
    expected = {(b[0], g[0]) for b in RIGHT for g in RIGHT
                if b[3] == "baseline" and g[3] != "baseline" and (b[1], b[2]) == (g[1], g[2])}
    assert pairs == expected == {("base-m-minimal", "gate-m-minimal"), ("base-m2-minimal", "gate-m2-minimal")}
