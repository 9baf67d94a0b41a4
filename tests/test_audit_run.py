"""The whole audit against loopback mock OpenAI-compatible servers: pipelines, edits sent, resume, CLI report."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.analysis.audit import causal_effects
from trajscope.cli import main
from trajscope.engine.audit import AuditSpec, placebo, remove_answer, run_audit
from trajscope.engine.llm import resolve_model
from trajscope.engine.mock_llm import MockLLMServer, reply_error
from trajscope.format import Chunk, Question, read_audit_records
from trajscope.ingest.datasets import Dataset, write_dataset
from trajscope.warehouse import open_readonly

FIXTURE = json.loads((Path(__file__).parent / "fixtures" / "audit" / "mini_dataset.json").read_text())
BY_TEXT = {q["text"]: q for q in FIXTURE["questions"]}
READER_RE = re.compile(r"^Context: (?P<context>.*)\nQuestion: (?P<question>.*)\nAnswer concisely:$", re.S)


def _dataset() -> Dataset:
    return Dataset(
        name="audit-mini",
        questions=[Question(question_id=q["question_id"], text=q["text"], gold_answer=q["gold"], dataset="audit-mini")
                   for q in FIXTURE["questions"]],
        chunks=[Chunk(chunk_id=p["chunk_id"], title=p["title"], text=p["text"], dataset="audit-mini")
                for p in FIXTURE["passages"]],
        gold_match_rate=0.0, n_gold=0, n_gold_matched=0, source="fixture",
        contexts={q["question_id"]: q["context_ids"] for q in FIXTURE["questions"]},
    )


class Scripted:
    """Server A compiles B2 and reads; server B compiles B3 and verifies (hard: the summary unchanged)."""

    def __init__(self, compile_key: str):
        self.compile_key = compile_key
        self.fail_reader_for: str | None = None

    def __call__(self, request):
        text = request.messages[-1]["content"]
        if text.startswith("Identify all facts"):
            question = re.search(r"^Query: (.*)$", text, re.M).group(1)
            return BY_TEXT[question][self.compile_key]
        if text.startswith("Compare the summary"):
            return text.split("Summary:\n", 1)[1].rsplit("\n\nOutput:", 1)[0]
        m = READER_RE.match(text)
        assert m, f"unexpected prompt {text[:80]!r}"
        gold = BY_TEXT[m["question"]]["gold"]
        if self.fail_reader_for == m["question"]:
            return reply_error(500, "scripted outage")
        return gold if gold.lower() in m["context"].lower() else "unknown"


@pytest.fixture()
def servers():
    a, b = Scripted("b2"), Scripted("b3")
    with MockLLMServer(a) as server_a, MockLLMServer(b) as server_b:
        yield {"a": server_a, "b": server_b, "script_a": a}


def _configs(servers) -> dict:
    a = resolve_model(servers["a"].model_spec).with_overrides(max_retries=0)
    return {"compiler_a": a, "compiler_b": resolve_model(servers["b"].model_spec).with_overrides(max_retries=0),
            "reader": a}


def _spec(tmp_path: Path, **changes) -> AuditSpec:
    settings = dict(dataset="audit-mini", out_dir=tmp_path / "runs", db_path=tmp_path / "w.duckdb",
                    cache_path=tmp_path / "cache.sqlite", progress=False, cell="T", concurrency=3)
    settings.update(changes)
    return AuditSpec(**settings)


def test_full_audit_writes_exact_contexts_edits_and_tables(tmp_path, servers):
    spec = _spec(tmp_path)
    summary = run_audit(spec, _dataset(), model_configs=_configs(servers))
    assert (summary.n_selected, summary.n_written, summary.n_excluded, summary.n_failed) == (5, 5, 1, 0)
    records = {r.question_id: r for r in read_audit_records(spec.log_path())}
    assert set(records) == {"q00", "q01", "q10", "q11", "qshort"}
    assert records["qshort"].contexts == {} and records["qshort"].outputs == []
    q11 = records["q11"]
    spec_q = BY_TEXT[q11.question]
    assert q11.contexts == {
        "b1": "Vellmar: Vellmar is a river town. Its founder was Ada Brenn, a cartographer.\n\n"
              "Ada Brenn: Ada Brenn was born in Oskar Bay. She mapped the northern coast.",
        "b2": spec_q["b2"], "b3": spec_q["b3"], "b4": spec_q["b2"],
    }
    outputs = {(o.baseline, o.intervention, o.sentinel): o for o in q11.outputs}
    # ans_in_compile = 1 on b2: the whole panel plus the placebo; b3 / b4 get [MASK] only
    assert sorted(k for k in outputs if k[0] == "b2") == sorted(
        [("b2", "none", None), ("b2", "placebo", "[MASK]")]
        + [("b2", "remove", s) for s in ("[MASK]", "[REMOVED]", "the answer was removed", "thing", "###")])
    assert sorted(k for k in outputs if k[0] == "b3") == [("b3", "none", None), ("b3", "placebo", "[MASK]"),
                                                          ("b3", "remove", "[MASK]")]
    assert outputs[("b2", "remove", "thing")].context == remove_answer(spec_q["b2"], "Oskar Bay", "thing").text
    assert outputs[("b2", "placebo", "[MASK]")].context == placebo(spec_q["b2"], "Oskar Bay").text
    assert outputs[("b2", "none", None)].f1 == 1.0 and outputs[("b2", "remove", "[MASK]")].f1 == 0.0
    q00 = {(o.baseline, o.intervention) for o in records["q00"].outputs}
    assert {("b2", "insert_prepend"), ("b2", "insert_mid"), ("b2", "identity")} <= q00
    assert ("b3", "remove") in q00  # b3 surfaced the gold (0->1)

    # what the reader was sent is exactly the edited context, with the paper's decoding
    sent = [r.body for r in servers["a"].chat_requests]
    reader_bodies = [b for b in sent if b["messages"][-1]["content"].startswith("Context: ")]
    edited = outputs[("b2", "remove", "[MASK]")].context
    assert any(READER_RE.match(b["messages"][-1]["content"])["context"] == edited for b in reader_bodies)
    assert {(b["temperature"], b["top_p"], b["max_tokens"]) for b in reader_bodies} == {(0.01, 0.95, 512)}
    compile_bodies = [b for b in sent if b["messages"][-1]["content"].startswith("Identify all facts")]
    assert {(b["temperature"], b["top_p"], b["max_tokens"]) for b in compile_bodies} == {(0.2, 0.95, 2048)}

    with open_readonly(spec.db_path) as con:
        causal = causal_effects(con).sort("baseline").rows(named=True)
        buckets = con.execute("SELECT question_id, baseline, bucket FROM audit_buckets ORDER BY 1, 2").fetchall()
    assert [(r["baseline"], r["n"], r["delta_remove_pts"], r["delta_placebo_pts"], r["delta_causal_pts"])
            for r in causal] == [("b2", 2, -100.0, 0.0, -100.0), ("b3", 2, -100.0, 0.0, -100.0),
                                 ("b4", 2, -100.0, 0.0, -100.0)]
    assert buckets == [
        ("q00", "b2", "0->0"), ("q00", "b3", "0->1"), ("q00", "b4", "0->0"),
        ("q01", "b2", "1->1"), ("q01", "b3", "1->1"), ("q01", "b4", "1->1"),
        ("q10", "b2", "1->0"), ("q10", "b3", "1->0"), ("q10", "b4", "1->0"),
        ("q11", "b2", "1->1"), ("q11", "b3", "1->1"), ("q11", "b4", "1->1"),
    ]


def test_identity_rerun_bypasses_the_cache(tmp_path, servers):
    configs = _configs(servers)
    run_audit(_spec(tmp_path, audit_id="first"), _dataset(), model_configs=configs)
    before = len(servers["a"].chat_requests)
    second = run_audit(_spec(tmp_path, audit_id="second"), _dataset(), model_configs=configs)
    records = read_audit_records(_spec(tmp_path, audit_id="second").log_path())
    identity_calls = sum(o.intervention == "identity" for r in records for o in r.outputs)
    assert identity_calls == 5  # q00: b2, b4; q10: b2, b3, b4
    # everything else came from the cache; only the identity reruns reached the server again
    assert len(servers["a"].chat_requests) - before == identity_calls
    assert all(o.cached is False for r in records for o in r.outputs if o.intervention == "identity")
    assert second.cache_hits > 0


def test_a_failed_question_is_redone_on_resume_and_replaced_in_the_warehouse(tmp_path, servers):
    spec = _spec(tmp_path)
    servers["script_a"].fail_reader_for = "Who led the Copper Guild?"
    first = run_audit(spec, _dataset(), model_configs=_configs(servers))
    assert (first.n_written, first.n_failed) == (5, 1)
    with open_readonly(spec.db_path) as con:
        assert con.execute("SELECT n_failed, n_analysable FROM audit_cells").fetchone() == (1, 3)
    servers["script_a"].fail_reader_for = None
    second = run_audit(spec, _dataset(), model_configs=_configs(servers))
    assert (second.n_skipped, second.n_written, second.n_failed) == (4, 1, 0)
    assert len(spec.log_path().read_text().splitlines()) == 6
    with open_readonly(spec.db_path) as con:
        assert con.execute("SELECT n_records, n_failed, n_analysable FROM audit_cells").fetchone() == (5, 0, 4)


def test_cli_audit_and_report_against_the_mock(tmp_path, servers):
    data_dir = write_dataset(_dataset(), tmp_path / "mini")
    db = tmp_path / "cli.duckdb"
    runner = CliRunner()
    result = runner.invoke(main, [
        "audit", "--dataset", str(data_dir), "--compiler-a", servers["a"].model_spec,
        "--compiler-b", servers["b"].model_spec, "--reader", servers["a"].model_spec, "--n", "4",
        "--db", str(db), "--out-dir", str(tmp_path / "runs"), "--cell", "S1", "--quiet",
    ], env={"TRAJSCOPE_CACHE": str(tmp_path / "cache")})
    assert result.exit_code == 0, result.output
    assert "records written" in result.output
    report = runner.invoke(main, ["audit-report", "--db", str(db), "--format", "markdown", "--table", "causal"])
    assert report.exit_code == 0, report.output
    assert "| S1 | b2 |" in report.output and "-100.0 [-100.0, -100.0]" in report.output
    latex = runner.invoke(main, ["audit-report", "--db", str(db), "--format", "latex", "--table", "sentinel_verdicts"])
    assert latex.exit_code == 0 and r"\begin{tabular}" in latex.output and "sentinel-robust" in latex.output
    csv = runner.invoke(main, ["audit-report", "--db", str(db), "--format", "csv", "--table", "buckets"])
    assert csv.output.splitlines()[1] == ("cell,baseline,n,0->0,0->1,1->1,1->0,ans_in_b1_rate,"
                                          "ans_in_compile_rate")
    empty = runner.invoke(main, ["audit-report", "--db", str(tmp_path / "none.duckdb")])
    assert empty.exit_code == 1 and "no warehouse here yet" in empty.output
