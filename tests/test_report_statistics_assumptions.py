"""A statistic whose assumptions fail prints "does not apply" or a warning, never a bare p-value: no discordant
pair for McNemar, fewer question clusters than regression terms, fewer paired questions than the stated floor."""
from __future__ import annotations

import pytest

from trajscope.analysis.report import build_report
from trajscope.format import (
    Candidate,
    FinalStep,
    Judgment,
    Passage,
    Question,
    ReadStep,
    Run,
    SearchStep,
    Trajectory,
    make_trajectory_id,
)
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse.audit import load_audit_records


def _arm(condition: str, right: set[int], n: int) -> list[Trajectory]:
    run = Run(run_id=f"rg-{condition}", dataset="hotpotqa", controller="read_gate", condition=condition, model="m")
    out = []
    for i in range(n):
        gold = f"g{i}"
        steps = [SearchStep(query="Ann Lee", candidates=[Candidate(chunk_id=gold, rank=1, snippet="Ann Lee")]),
                 ReadStep(chunk_ids=[gold], passages=[Passage(chunk_id=gold, text="Ann Lee is from Paris.")]),
                 FinalStep(answer="Paris" if i in right else "Lyon")]
        out.append(Trajectory(
            trajectory_id=make_trajectory_id(run.run_id, f"q{i}"), run=run,
            question=Question(question_id=f"q{i}", text="Where is Ann Lee from?", dataset="hotpotqa",
                              gold_answer="Paris", gold_chunk_ids=[gold]),
            steps=steps, final_answer=steps[-1].answer, end_reason="final",
            judgments=[Judgment(judge="contain", score=1.0 if i in right else 0.0)]))
    return out


def _t3(tmp_path, base_right, gate_right, n):
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, _arm("baseline", base_right, n) + _arm("read_gate", gate_right, n))
    with open_readonly(path) as con:
        tables = {t.name: t for t in build_report(con, "read-gate", ["rg-baseline", "rg-read_gate"], db_path=path)}
    table = tables["rg_t3"]
    return dict(zip([c.key for c in table.columns], table.rows[0], strict=True)), table.notes


def test_mcnemar_does_not_apply_without_a_discordant_pair(tmp_path):
    same = set(range(7))  # both arms right on the same 7 of 12 questions: b = c = 0
    row, notes = _t3(tmp_path, same, same, 12)
    discordant = len(same ^ same)
    assert discordant == 0
    assert row["mcnemar_p"] is None and row["holm_p"] is None  # not the bare p = 1.0 of a test on nothing
    assert row["delta"].value == pytest.approx(0.0)
    assert any(n.startswith("McNemar does not apply on hotpotqa: no discordant pair") for n in notes)
    assert not any(n.startswith("Warning on hotpotqa") for n in notes)  # 12 questions: above the floor


def test_a_paired_row_below_the_floor_carries_a_warning(tmp_path):
    row, notes = _t3(tmp_path, {0}, {0, 1, 2}, 4)
    assert row["n"] == 4 and row["mcnemar_p"] == pytest.approx(0.5)  # exact binomial, 2 discordant: 2 * 0.5**2
    assert any(n.startswith("Warning on hotpotqa: 4 paired question(s), below the floor of 10") for n in notes)


def test_cluster_robust_p_values_do_not_apply_with_fewer_clusters_than_terms(tmp_path):
    from fixtures.report.audit import build

    records = build()
    keep = sorted({r.question_id for r in records if r.cell == "C1"})[:4]
    few = [r for r in records if r.cell == "C1" and r.question_id in keep]
    path = tmp_path / "au.duckdb"
    load_audit_records(path, few)
    with open_readonly(path) as con:
        ols = next(t for t in build_report(con, "audit", [], db_path=path) if t.name == "au_ols")
    settings = sorted({o.baseline for r in few for o in r.outputs if not o.baseline.endswith("_blind")})
    terms = 1 + 2 * (len(settings) - 1) + 2  # const, setting dummies, log length, answer-in, interactions
    assert len(keep) < terms
    rows = [dict(zip([c.key for c in ols.columns], r, strict=True)) for r in ols.rows]
    assert len(rows) == terms and all(r["clusters"] == len(keep) for r in rows)
    assert all(r["p"] is None and r["se"] is None for r in rows)
    assert all(r["coef"] is not None for r in rows)
    assert any(f"C1 ({len(keep)} question clusters, {terms} terms)" in n for n in [ols.footnote, *ols.notes])


def test_compare_calls_an_unjudged_shared_question_unscored_not_only_in_one_run(tmp_path):
    """Both runs answered q0-q5; run B has no verdict on q4, q5: they are shared but unscored (judge them),
    not "only in A" (and nothing is only in B)."""
    from trajscope.analysis.queries import compare_runs

    base, gate = _arm("baseline", {0, 1}, 6), _arm("read_gate", {0, 1, 2}, 6)
    unjudged = {"q4", "q5"}
    gate = [t if t.question.question_id not in unjudged else Trajectory(
        trajectory_id=t.trajectory_id, run=t.run, question=t.question, steps=t.steps, final_answer=t.final_answer,
        end_reason=t.end_reason, judgments=[]) for t in gate]
    path = tmp_path / "wh.duckdb"
    ingest_trajectories(path, base + gate)
    with open_readonly(path) as con:
        result = compare_runs(con, "rg-baseline", "rg-read_gate")
    shared = {t.question.question_id for t in base} & {t.question.question_id for t in gate}
    assert result.overall.n == len(shared) - len(unjudged) == 4
    assert result.pairing == ("paired on the 4 shared question ids; 2 shared question(s) lacking a score under "
                           "'correct' in a run (`trajscope judge` on both runs scores them) are excluded")
    assert not result.only_a and not result.only_b


def test_the_audit_regression_is_titled_by_its_cells_dataset(tmp_path):
    """AP §11: Table 6 is HotpotQA, Table 7 Qasper; a Qasper cell printed as "Table 6" was the old title."""
    import msgspec
    from fixtures.report.audit import build

    records = [r for r in build() if r.cell == "C1"]
    qasper = [msgspec.structs.replace(r, cell="Q1", audit_id="audit-Q1", dataset="qasper") for r in records]
    titles = {}
    for name, chosen in (("hotpot", records), ("qasper", qasper), ("both", records + qasper)):
        path = tmp_path / f"{name}.duckdb"
        load_audit_records(path, chosen)
        with open_readonly(path) as con:
            titles[name] = next(t for t in build_report(con, "audit", [], db_path=path) if t.name == "au_ols")
    assert titles["hotpot"].title == "Table 6" and titles["qasper"].title == "Table 7"
    assert titles["both"].title == "Tables 6/7"
    assert "Cells by paper table: C1 (hotpotqa): Table 6; Q1 (qasper): Table 7." in titles["both"].notes
