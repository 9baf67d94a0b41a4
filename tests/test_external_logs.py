"""Acceptance on every real log in ../shared/data/external_logs: what an independent reading of the raw file
counts (its own small parser per format) equals what the warehouse holds after `trajscope ingest`."""
from __future__ import annotations

import json
import re
import string
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.warehouse import open_readonly

LOGS = Path("../shared/data/external_logs")
AUTOACT = LOGS / "autoact" / "hard.jsonl"
FIREACT = LOGS / "fireact" / (
    "hotpotqa_dev_0_500_ft_gpt-3.5-turbo-0613_princeton-nlp__7woQRsdi_0.0_2023-09-21-16-19-51.json")
FIREACT_QUESTIONS = LOGS / "fireact" / "hotpotqa_dev_questions.json"
INSPECT = LOGS / "inspect_docent_ctf" / "log.eval"
SWE = LOGS / "swe_agent" / "pydicom__pydicom-1458.traj"
PHOENIX = LOGS / "phoenix_openinference" / "openinference_spans.jsonl"
OTEL = LOGS / "otel_genai" / "otel_genai_otlp.jsonl"
RUNS = {"autoact": "autoact:hard.jsonl", "fireact": f"react:{FIREACT.name}", "inspect": "inspect:log.eval",
        "swe": f"swe_agent:{SWE.name}", "phoenix": f"openinference:{PHOENIX.name}",
        "otel": f"otel_genai:{OTEL.name}"}

pytestmark = pytest.mark.skipif(not LOGS.is_dir(), reason="real logs ../shared/data/external_logs are not present")


# --- independent readings of the raw files -----------------------------------------------------------

def raw_autoact() -> dict:
    records = [json.loads(line) for line in AUTOACT.read_text().splitlines() if line.strip()]
    actions: Counter[str] = Counter()
    with_finish = 0
    for r in records:
        names = re.findall(r"^Action: (\w+)\[", r["prompt"], re.M)
        actions.update(names)
        with_finish += "Finish" in names
    return {"trajectories": len(records), "actions": dict(actions), "with_final": with_finish,
            "gold": sum(bool(r["answer"]) for r in records), "correct": sum(r["correct"] for r in records),
            "judged": len(records), "halted": sum(r["halted"] for r in records)}


def raw_fireact() -> dict:
    data = json.loads(FIREACT.read_text())
    actions: Counter[str] = Counter()
    for record in data.values():
        for m in record["traj"]:
            if m["role"] == "assistant":  # FireAct runs the action after the first "\nAction: "
                hit = re.search(r"\nAction: *([A-Za-z_]+)\[", m["content"]) or re.match(
                    r"\s*Action: *([A-Za-z_]+)\[", m["content"])
                actions[hit.group(1).lower() if hit else None] += 1
    return {"trajectories": len(data), "actions": dict(actions), "with_final": len(data), "gold": len(data),
            "correct": sum(bool(r["em"]) for r in data.values()), "judged": len(data)}


def raw_inspect() -> dict:
    calls: Counter[str] = Counter()
    closing = correct = n = 0
    with zipfile.ZipFile(INSPECT) as archive:
        for name in archive.namelist():
            if not name.startswith("samples/"):
                continue
            sample = json.loads(archive.read(name))
            n += 1
            assistant = [m for m in sample["messages"] if m["role"] == "assistant"]
            for m in assistant:
                calls.update(tc["function"] for tc in m.get("tool_calls") or [])
            closing += not assistant[-1].get("tool_calls")
            correct += sample["scores"]["includes"]["value"] == "C"
    return {"trajectories": n, "actions": dict(calls), "closing_answers": closing, "correct": correct}


def raw_swe() -> dict:
    data = json.loads(SWE.read_text())
    return {"trajectories": 1, "actions": dict(Counter(s["action"].split()[0] for s in data["trajectory"]))}


def raw_spans(path: Path) -> dict:
    """Tool calls and retrievals of span exports (Phoenix JSONL, or OTLP requests one per line)."""
    tools: Counter[str] = Counter()
    traces, golds, read_ok = set(), {}, Counter()  # read_ok: reads per trace that did not fail
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        spans = ([s for rs in record["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]]
                 if "resourceSpans" in record else [record])
        for span in spans:
            if "resourceSpans" in record:
                attrs = {a["key"]: next(iter(a["value"].values())) for a in span.get("attributes", [])}
                traces.add(span["traceId"])
                op = attrs.get("gen_ai.operation.name")
                if op == "execute_tool":
                    tools[attrs["gen_ai.tool.name"]] += 1
                    if attrs["gen_ai.tool.name"] == "read" and span.get("status", {}).get("code") != 2:
                        read_ok[span["traceId"]] += 1
                if attrs.get("rag.gold_answer"):
                    golds[attrs["rag.question_id"]] = attrs["rag.gold_answer"]
            else:
                attrs = span["attributes"]
                traces.add(span["context"]["trace_id"])
                if span["span_kind"] == "TOOL":
                    tools[attrs["tool"]["name"]] += 1
                    if attrs["tool"]["name"] == "read" and span.get("status_code") != "ERROR":
                        read_ok[span["context"]["trace_id"]] += 1
                meta = attrs.get("metadata") or {}
                if isinstance(meta, dict) and meta.get("gold_answer"):
                    golds[meta["question_id"]] = meta["gold_answer"]
    return {"trajectories": len(traces), "tools": dict(tools), "golds": golds, "read_ok": read_ok}


# --- the warehouse after `trajscope ingest` ---------------------------------------------------------

@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("external") / "w.duckdb"
    runner = CliRunner()
    first = runner.invoke(cli, ["ingest", str(FIREACT), "--questions", str(FIREACT_QUESTIONS), "--db", str(db)])
    assert first.exit_code == 0, first.output
    rest = runner.invoke(cli, ["ingest", *map(str, (AUTOACT, INSPECT, SWE, PHOENIX, OTEL)), "--db", str(db)])
    assert rest.exit_code == 0, rest.output
    # Correctness (Contain-Acc) comes from the judging pass, as a user would run it after ingest.
    judged = runner.invoke(cli, ["judge", RUNS["fireact"], "--db", str(db)])
    assert judged.exit_code == 0, judged.output
    return db


def stored(db: Path, run: str) -> dict:
    with open_readonly(db) as con:
        q = lambda sql: con.execute(sql, [run]).fetchall()  # noqa: E731
        kinds = dict(q("SELECT s.kind, count(*) FROM steps s JOIN trajectories t USING (trajectory_id) "
                       "WHERE t.run_id = ? GROUP BY ALL"))
        tools = dict(q("SELECT s.tool_name, count(*) FROM steps s JOIN trajectories t USING (trajectory_id) "
                       "WHERE t.run_id = ? AND s.kind IN ('tool', 'error') GROUP BY ALL"))
        (n, finals, with_gold), = q(
            "SELECT count(*), count(*) FILTER (WHERE t.end_reason = 'final'), "
            "count(*) FILTER (WHERE qq.gold_answer IS NOT NULL) FROM trajectories t "
            "LEFT JOIN questions qq USING (dataset, question_id) WHERE t.run_id = ?")
        judgments = {j: (c, s) for j, c, s in q(
            "SELECT j.judge, count(*), sum(j.score) FROM judgments j JOIN trajectories t USING (trajectory_id) "
            "WHERE t.run_id = ? AND j.origin = 'record' GROUP BY ALL")}
        ends = dict(q("SELECT end_reason, count(*) FROM trajectories WHERE run_id = ? GROUP BY ALL"))
        candidates = q("SELECT count(*) FROM candidates c JOIN trajectories t USING (trajectory_id) "
                       "WHERE t.run_id = ?")[0][0]
        answered_gold = q("SELECT count(*) FROM trajectories t JOIN questions qq USING (dataset, question_id) "
                          "WHERE t.run_id = ? AND t.final_answer = qq.gold_answer")[0][0]
        discipline = q("SELECT count(*) FROM failure_rg WHERE run_id = ? AND label = 'discipline'")[0][0]
        wrong = q("SELECT count(DISTINCT trajectory_id) FROM failure_rg WHERE run_id = ?")[0][0]
        reads = q("SELECT sum(read_count), sum(failed_read_count), count(*) FILTER (WHERE zero_read_final) "
                  "FROM trajectory_facts WHERE run_id = ?")[0]
    return {"reads": reads, "trajectories": n, "kinds": kinds, "tools": tools, "finals": finals, "gold": with_gold,
            "judgments": judgments, "ends": ends, "discipline": discipline, "wrong": wrong,
            "candidates": candidates, "answered_gold": answered_gold}


def test_autoact(warehouse):
    raw, got = raw_autoact(), stored(warehouse, RUNS["autoact"])
    assert raw["trajectories"] == got["trajectories"] == 100
    # the data README's reference counts
    assert raw["actions"] == {"BingSearch": 163, "Retrieve": 59, "Lookup": 78, "Finish": 105, "Reflect": 104}
    assert got["kinds"] == {"search": raw["actions"]["BingSearch"], "read": raw["actions"]["Retrieve"],
                            "final": raw["actions"]["Finish"],
                            "tool": raw["actions"]["Lookup"] + raw["actions"]["Reflect"]}
    assert got["tools"] == {"Lookup": 78, "Reflect": 104}
    assert got["finals"] == raw["with_final"] and got["gold"] == raw["gold"] == 100
    assert got["judgments"] == {"em": (raw["judged"], float(raw["correct"]))} and raw["correct"] == 23
    assert got["ends"].get("budget") == raw["halted"] == 2


def test_fireact(warehouse):
    raw, got = raw_fireact(), stored(warehouse, RUNS["fireact"])
    assert raw["trajectories"] == got["trajectories"] == 465
    assert got["kinds"] == {"search": raw["actions"]["search"], "final": raw["actions"]["finish"],
                            "tool": raw["actions"]["click"]}
    assert got["finals"] == raw["with_final"] and got["gold"] == raw["gold"]
    assert got["judgments"]["em"] == (raw["judged"], float(raw["correct"]))
    # No read action in FireAct: none of its wrong answers may carry a discipline label.
    assert got["wrong"] > 0 and got["discipline"] == 0


def test_inspect_ctf(warehouse):
    raw, got = raw_inspect(), stored(warehouse, RUNS["inspect"])
    assert raw["trajectories"] == got["trajectories"] == 15
    assert raw["actions"] == {"python": 55, "bash": 44, "submit": 22}
    assert got["kinds"] == {"tool": raw["actions"]["python"] + raw["actions"]["bash"],
                            "final": raw["actions"]["submit"] + raw["closing_answers"]}
    assert got["judgments"] == {"contain": (15, float(raw["correct"]))} and raw["correct"] == 9
    assert got["discipline"] == 0


def test_swe_agent(warehouse):
    raw, got = raw_swe(), stored(warehouse, RUNS["swe"])
    assert raw["actions"] == {"edit": 5, "python": 2, "create": 1, "find_file": 1, "open": 1, "rm": 1, "submit": 1}
    assert got["trajectories"] == 1
    assert got["kinds"] == {"search": 1, "read": 1, "final": 1, "tool": 9}
    assert got["tools"] == {"edit": 5, "python": 2, "create": 1, "rm": 1}
    assert got["gold"] == 0 and got["judgments"] == {}
    # Each step keeps the history index of the assistant message that ran it (demonstrations skipped).
    history = json.loads(SWE.read_text())["history"]
    turns = [f"history:{i}" for i, m in enumerate(history) if m["role"] == "assistant" and not m.get("is_demo")]
    with open_readonly(warehouse) as con:
        refs = [r for (r,) in con.execute("SELECT s.source_ref FROM steps s JOIN trajectories t USING (trajectory_id) "
                                         "WHERE t.run_id = ? ORDER BY s.step_index", [RUNS["swe"]]).fetchall()]
    assert refs == turns and refs[:2] == ["history:3", "history:5"] and len(refs) == 12


@pytest.mark.parametrize("name, path", [("phoenix", PHOENIX), ("otel", OTEL)])
def test_span_exports(warehouse, name, path):
    raw, got = raw_spans(path), stored(warehouse, RUNS[name])
    assert raw["trajectories"] == got["trajectories"] == 5
    assert raw["tools"] == {"search": 6, "read": 9}
    # one read fails on a bad chunk id: it is an error step that keeps the tool's name
    assert got["kinds"] == {"search": 6, "read": 8, "error": 1, "final": 5}
    assert got["tools"] == {"read": 1}
    assert got["finals"] == 5 and got["gold"] == len(raw["golds"]) == 5
    # six retrievals with three documents each; four answers equal their gold (q5 answers 1790, gold 1802)
    assert got["candidates"] == 18 and got["answered_gold"] == 4
    # every read that did not fail returned its passage (the tool's output), and every trace read
    assert sum(raw["read_ok"].values()) == 8 and len(raw["read_ok"]) == 5
    assert got["reads"] == (8, 0, 0)  # read_count, failed_read_count, zero-read finals


EXPECTED_PROFILES = {
    "autoact": dict(search_candidates=False, snippets=True, read_action=True, gold_answers=True,
                    gold_passages=False, judgments=True),
    "fireact": dict(search_candidates=False, snippets=True, read_action=False, gold_answers=True,
                    gold_passages=False, judgments=True),
    "inspect": dict(search_candidates=False, snippets=False, read_action=False, gold_answers=True,
                    gold_passages=False, judgments=True),
    "swe": dict(search_candidates=False, snippets=True, read_action=True, gold_answers=False,
                gold_passages=False, judgments=False),
    "phoenix": dict(search_candidates=True, snippets=True, read_action=True, gold_answers=True,
                    gold_passages=False, judgments=False),
    "otel": dict(search_candidates=True, snippets=False, read_action=True, gold_answers=True,
                 gold_passages=False, judgments=False),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_PROFILES))
def test_each_log_carries_the_right_capability_profile(tmp_path, name):
    from trajscope.ingest.importers import ImportOptions, convert_file

    path = {"autoact": AUTOACT, "fireact": FIREACT, "inspect": INSPECT, "swe": SWE, "phoenix": PHOENIX,
            "otel": OTEL}[name]
    options = ImportOptions(questions=FIREACT_QUESTIONS if name == "fireact" else None)
    (run,) = convert_file(path, tmp_path / "out.jsonl", options).runs
    assert {k: getattr(run.profile, k) for k in EXPECTED_PROFILES[name]} == EXPECTED_PROFILES[name]


def test_the_warehouse_holds_each_logs_profile_and_its_reasons(warehouse):
    with open_readonly(warehouse) as con:
        rows = con.execute("SELECT run_id, search_candidates, snippets, read_action, gold_answers, gold_passages, "
                           "judgments, read_action_reason, profile_source FROM run_capabilities").fetchall()
    got = {r[0]: r[1:] for r in rows}
    names = ("search_candidates", "snippets", "read_action", "gold_answers", "gold_passages", "judgments")
    for name, run in RUNS.items():
        values, reason, source = got[run][:6], got[run][6], got[run][7]
        assert dict(zip(names, values, strict=True)) == EXPECTED_PROFILES[name], name
        assert source == "recorded by the log"
        if not EXPECTED_PROFILES[name]["read_action"]:
            assert reason.startswith("no read action in this log: discipline metrics do not apply")


# --- passage text not its JSON, reads without captured content, the source's own verdicts --------

def _otel_spans(path: Path) -> list[tuple[dict, dict]]:
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            for rs in json.loads(line)["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        out.append((s, {a["key"]: next(iter(a["value"].values())) for a in s.get("attributes", [])}))
    return out


def test_span_read_passages_hold_the_documents_text_not_their_json(warehouse):
    expected: Counter[str] = Counter()
    for _span, attrs in _otel_spans(OTEL):
        if attrs.get("gen_ai.tool.name") == "read" and "gen_ai.tool.call.result" in attrs:
            doc = json.loads(attrs["gen_ai.tool.call.result"])
            text = doc["text"] if doc["text"].startswith(doc["title"]) else f"{doc['title']}\n{doc['text']}"
            expected[(doc["chunk_id"], text)] += 1
    with open_readonly(warehouse) as con:
        got = Counter(con.execute("SELECT r.chunk_id, r.text FROM reads r JOIN trajectories t USING (trajectory_id) "
                                  "WHERE t.run_id = ? AND r.via = 'read'", [RUNS["otel"]]).fetchall())
    assert sum(expected.values()) == 8 and got == expected


def test_otel_without_content_capture_reads_are_reads_and_answers_are_not_judged(tmp_path):
    """The real OTel file as the instrumentation writes it with content capture off."""
    content = {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result", "gen_ai.input.messages",
               "gen_ai.output.messages", "gen_ai.retrieval.query.text", "gen_ai.retrieval.documents"}
    lines = []
    for line in OTEL.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            for rs in record["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for s in ss["spans"]:
                        s["attributes"] = [a for a in s.get("attributes", []) if a["key"] not in content]
            lines.append(json.dumps(record))
    log = tmp_path / "otel_nocontent.jsonl"
    log.write_text("\n".join(lines) + "\n")
    ok_reads = sum(1 for s, a in _otel_spans(log) if a.get("gen_ai.tool.name") == "read"
                   and s.get("status", {}).get("code") != 2)
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    result = runner.invoke(cli, ["ingest", str(log), "--questions", str(_questions_of(tmp_path)), "--db", str(db)])
    assert result.exit_code == 0, result.output
    judged = runner.invoke(cli, ["judge", "otel_genai:otel_nocontent.jsonl", "--db", str(db)])
    assert judged.exit_code == 0, judged.output
    assert "5 no answer text: not judged" in judged.output
    with open_readonly(db) as con:
        reads = con.execute("SELECT sum(read_count), sum(failed_read_count) FROM trajectories").fetchone()
        n_judgments = con.execute("SELECT count(*) FROM judgments").fetchone()[0]
    assert ok_reads == 8 and reads == (8, 0) and n_judgments == 0


def _questions_of(tmp_path: Path) -> Path:
    """Question texts for the five traces (without content capture the spans carry none), from the real file."""
    texts = {}
    for _, attrs in _otel_spans(OTEL):
        if attrs.get("rag.question_id") and attrs.get("gen_ai.input.messages"):
            msgs = json.loads(attrs["gen_ai.input.messages"])
            texts[attrs["rag.question_id"]] = next(p["content"] for m in msgs if m["role"] == "user"
                                                   for p in m["parts"] if p.get("type") == "text")
        elif attrs.get("rag.question_id"):
            texts.setdefault(attrs["rag.question_id"], None)
    path = tmp_path / "questions.json"
    path.write_text(json.dumps([{"id": k, "question": v or k} for k, v in texts.items()]))
    return path


def _squad(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    return " ".join(w for w in text.split() if w not in ("a", "an", "the"))


def test_inspect_scorer_verdicts_are_kept_beside_a_disagreeing_normalised_em(tmp_path):
    disagree = 0
    with zipfile.ZipFile(INSPECT) as archive:
        for name in archive.namelist():
            if name.startswith("samples/"):
                sample = json.loads(archive.read(name))
                answer = sample["scores"]["includes"].get("answer") or ""
                target = sample["target"] if isinstance(sample["target"], str) else sample["target"][0]
                disagree += (sample["scores"]["includes"]["value"] == "C") != (_squad(answer) == _squad(target))
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(INSPECT), "--db", str(db)]).exit_code == 0
    judged = runner.invoke(cli, ["judge", RUNS["inspect"], "--db", str(db)])
    assert judged.exit_code == 0, judged.output
    with open_readonly(db) as con:
        rows = con.execute("SELECT source_judge, source_score, trajscope_judge, trajscope_score "
                           "FROM verdict_conflicts").fetchall()
        record = con.execute("SELECT count(*) FROM judgments WHERE origin = 'record'").fetchone()[0]
    assert disagree == 1 and rows == [("contain", 0.0, "em", 1.0)]
    assert record == 15  # every sample's own verdict kept
    assert f"{disagree} where trajscope's normalised verdict disagrees" in judged.output
