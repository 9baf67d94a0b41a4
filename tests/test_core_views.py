"""Core views on the hand-built fixture; every expected number is worked out by hand."""
import pytest
from foundation_records import fixture_trajectories

from trajscope.warehouse import ingest_trajectories, open_readonly


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("views") / "w.duckdb"
    ingest_trajectories(path, fixture_trajectories())
    return path


def rows(db, sql):
    with open_readonly(db) as con:
        cur = con.execute(sql)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r, strict=False)) for r in cur.fetchall()]


def test_run_summary_run_a(db):
    (r,) = rows(db, "SELECT * FROM run_summary WHERE run_id = 'run_a'")
    assert r["n_trajectories"] == 3
    assert r["em"] == pytest.approx(1 / 3)
    assert r["f1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert r["contain_acc"] == pytest.approx(2 / 3)
    assert r["llm_acc"] == pytest.approx(0.5) and r["n_llm_judged"] == 2  # q1 = 1, q3 = 0, q2 unjudged
    assert r["mean_searches"] == pytest.approx(4 / 3)  # 2 + 1 + 1
    assert r["mean_reads"] == pytest.approx(1.0)  # 1 + 0 + 2 (a re-read is still a read action)
    assert r["zero_read_final_rate"] == pytest.approx(1 / 3)  # only q2; q3 ended on the budget
    assert r["mean_turns"] == pytest.approx((4 + 2 + 3) / 3)  # forced answers are not agent turns
    assert r["tokens_in"] == 1000 and r["tokens_out"] == 100  # 10 steps x (100 in, 10 out)
    assert r["cost_usd"] == pytest.approx(0.010)
    assert r["cost_per_question"] == pytest.approx(0.010 / 3)
    assert r["cached_calls"] == 4  # q3's four steps were served from the response cache
    assert r["incurred_cost_usd"] == pytest.approx(0.010 - 0.004)
    assert r["mean_latency_ms"] == pytest.approx((200 + 100 + 200) / 3)
    assert r["error_trajectories"] == 0
    assert (r["controller"], r["condition"], r["top_k"]) == ("read_gate", "baseline", 5)


def test_run_summary_run_b_has_no_llm_judgments(db):
    (r,) = rows(db, "SELECT * FROM run_summary WHERE run_id = 'run_b'")
    assert r["n_trajectories"] == 1 and r["llm_acc"] is None and r["n_llm_judged"] == 0
    # Injection is not a read action, and nothing in run_b's log shows or declares one: no rate.
    assert r["zero_read_final_rate"] is None and r["zero_read_reason"].startswith("inferred: no read action")


def test_trajectory_facts(db):
    got = {r["trajectory_id"]: r for r in rows(db, "SELECT * FROM trajectory_facts")}
    q1, q3, b1 = got["run_a::q1"], got["run_a::q3"], got["run_b::q1"]
    assert (q1["search_count"], q1["read_count"], q1["passages_read"], q1["turns"]) == (2, 1, 1, 4)
    assert (q3["read_count"], q3["passages_read"], q3["end_reason"], q3["zero_read_final"]) == (2, 1, "budget", False)
    assert (b1["injections"], b1["read_count"], b1["zero_read_final"]) == (1, 0, True)
    # cached: True on all of q3's steps, False on q2's, unset on q1's (None is not a cache hit)
    assert {t: (got[t]["cached_calls"], got[t]["cached_cost_usd"]) for t in ("run_a::q1", "run_a::q2", "run_a::q3")} \
        == {"run_a::q1": (0, None), "run_a::q2": (0, None), "run_a::q3": (4, pytest.approx(0.004))}
    assert q1["hop_count"] == 2 and q3["question_type"] == "comparison"


def test_gold_evidence(db):
    got = {(r["trajectory_id"], r["chunk_id"]): r for r in rows(db, "SELECT * FROM gold_evidence")}
    assert len(got) == 2 + 1 + 1 + 2
    g1, g2 = got[("run_a::q1", "g1")], got[("run_a::q1", "g2")]
    assert (g1["retrieved"], g1["read"], g1["snippet_only"], g1["first_read_step"]) == (True, True, False, 1)
    assert (g2["retrieved"], g2["read"], g2["snippet_only"], g2["first_retrieved_step"]) == (True, False, True, 2)
    g3 = got[("run_a::q2", "g3")]
    assert (g3["retrieved"], g3["snippet_only"], g3["best_rank"]) == (True, True, 2)
    g4 = got[("run_a::q3", "g4")]
    assert (g4["retrieved"], g4["read"], g4["snippet_only"]) == (False, False, False)
    inj = got[("run_b::q1", "g1")]
    assert (inj["injected"], inj["read"], inj["snippet_only"]) == (True, False, False)


def test_trajectory_evidence(db):
    got = {r["trajectory_id"]: r for r in rows(db, "SELECT * FROM trajectory_evidence")}
    q1 = got["run_a::q1"]
    assert (q1["n_gold"], q1["n_gold_retrieved"], q1["n_gold_read"], q1["n_gold_snippet_only"]) == (2, 2, 1, 1)
    assert q1["all_gold_retrieved"] and q1["any_gold_read"] and q1["evidence_recall"] == 1.0
    q3 = got["run_a::q3"]
    assert not q3["all_gold_retrieved"] and q3["evidence_recall"] == 0.0
    b1 = got["run_b::q1"]
    assert b1["evidence_recall"] == 0.5 and not b1["any_gold_read"]


def test_latest_judgment_wins(tmp_path):
    from trajscope.warehouse import open_warehouse
    from trajscope.warehouse._derived import refresh_verdict_facts

    db = tmp_path / "w.duckdb"
    ingest_trajectories(db, fixture_trajectories()[:1])
    with open_warehouse(db) as con:
        con.execute("INSERT INTO judgments (trajectory_id, judge, score, origin, created_at) "
                    "VALUES ('run_a::q1', 'em', 0.0, 'judge', now() + INTERVAL 1 HOUR)")
        # A verdict written past the writers (ingest, judge) is seen once its stored scores, then the signals
        # that read them, are refreshed.
        refresh_verdict_facts(con, "SELECT 'run_a::q1' AS trajectory_id")
    (r,) = rows(db, "SELECT em FROM trajectory_scores")
    assert r["em"] == 0.0
