"""Clustering a slice: k-means over all-MiniLM-L6-v2 embeddings recovers planted behaviours (adjusted Rand
index above a stated bound); propose-then-assign against the mock, with "other" for what fits no theme."""
from __future__ import annotations

import re

import pytest
from fixtures.forensics.builders import final, read, search, trajectory
from sklearn.metrics import adjusted_rand_score

from trajscope.engine.llm import resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_json, reply_text
from trajscope.engine.scanners import cluster
from trajscope.format import ErrorStep, ForcedAnswerStep, Run, SearchStep, ToolStep
from trajscope.warehouse import ingest_trajectories, open_readonly

PER_CLUSTER = 8
ARI_BOUND = 0.8  # three behaviours whose action texts share little vocabulary: k-means should nearly separate them
TOPICS = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal"]


def _planted() -> tuple[list, list[int]]:
    run = Run(run_id="mix", dataset="fx", condition="mix")
    records, truth = [], []
    for i, name in enumerate(TOPICS[:PER_CLUSTER]):
        # 0: searches the same thing over and over and answers without reading.
        loop = [SearchStep(query=f"{name} birthplace city", candidates=[]) for _ in range(3 + i % 3)] + [final("x")]
        # 1: one search, reads the passage, answers from it.
        reader = [search((f"p{i}", f"{name} biography")), read((f"p{i}", f"{name} was born in Paris.")), final("Paris")]
        # 2: calls a calculator tool that fails, then is forced to answer at the budget.
        broken = [ToolStep(tool_name="calculator", args={"expr": f"{i}+{i}"}), ErrorStep(error_type="tool_error",
                  message="calculator timed out"), ForcedAnswerStep(answer="unknown")]
        for c, steps in enumerate((loop, reader, broken)):
            records.append(trajectory(run, f"c{c}-{i}", f"Where was {name} born?", "Paris", steps))
            truth.append(c)
    return records, truth


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("cluster") / "wh.duckdb"
    ingest_trajectories(path, _planted()[0])
    return path


def test_embedding_clustering_recovers_the_planted_behaviours(db):
    report = cluster(db, ["mix"], "embedding", 3)
    truth = {f"c{c}-{i}": c for c in range(3) for i in range(PER_CLUSTER)}
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, m.cluster_index FROM cluster_members m JOIN trajectories t "
                           "USING (trajectory_id) WHERE clustering_id = ?", [report.clustering_id]).fetchall()
        named = con.execute("SELECT count(*) FROM clusters WHERE clustering_id = ? AND name <> '' AND "
                            "len(examples) BETWEEN 1 AND 3", [report.clustering_id]).fetchone()[0]
    assert len(rows) == 3 * PER_CLUSTER and named == 3
    ari = adjusted_rand_score([truth[q] for q, _ in rows], [c for _, c in rows])
    print(f"adjusted Rand index of the embedding clustering on the planted fixture: {ari:.3f}")
    assert ari >= ARI_BOUND


def test_propose_then_assign_against_the_mock(db):
    themes = [{"name": "search loop", "description": "searches repeatedly, never reads"},
              {"name": "tool failure", "description": "a tool fails and the answer is forced"}]

    def respond(request):
        text = request.text()
        if "Propose at most 2" in text:
            return reply_json({"themes": themes + [{"name": "other", "description": "dropped: reserved"}]})
        qid = re.search(r"Where was (\w+) born", text).group(1)
        if "forced_answer" in text:
            return reply_json({"theme": "tool failure", "explanation": "calculator failed"})
        if "[1] read" in text:
            return reply_text("garbage") if qid == "Ann" else reply_json({"theme": "reads fine", "explanation": "?"})
        return reply_json({"theme": "Search loop", "explanation": "searched again and again"})

    with MockLLMServer(respond) as server:
        report = cluster(db, ["mix"], "propose-assign", 2, config=resolve_model(server.model_spec))
    assert [c.name for c in report.clusters] == ["search loop", "tool failure", "other"]
    got = {m.trajectory_id: m.cluster_index for m in report.members}
    with open_readonly(db) as con:
        ids = dict(con.execute("SELECT question_id, trajectory_id FROM trajectories").fetchall())
        stored = con.execute("SELECT count(*) FROM cluster_members WHERE clustering_id = ?",
                             [report.clustering_id]).fetchone()[0]
    assert stored == 3 * PER_CLUSTER
    assert all(got[ids[f"c0-{i}"]] == 0 and got[ids[f"c2-{i}"]] == 1 and got[ids[f"c1-{i}"]] == 2
               for i in range(PER_CLUSTER))
    assert len(report.errors) == 1 and "malformed" in report.errors[0]  # Ann's reader: garbage reply -> other


def test_cli_cluster_embedding_prints_the_clusters(db):
    from click.testing import CliRunner

    from trajscope.cli import main

    out = CliRunner().invoke(main, ["cluster", "--runs", "mix", "--k", "3", "--db", str(db)])
    assert out.exit_code == 0, out.output
    assert "(embedding, all-MiniLM-L6-v2): 24 trajectories" in out.output
    assert len(re.findall(r"^  \[\d\] .+ \(8\): ", out.output, re.M)) == 3
