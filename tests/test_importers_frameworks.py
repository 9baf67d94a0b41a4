"""Agent-framework and tracing families (smolagents, Langfuse, Claude Code, LangSmith, Weave, DSPy, ATIF): each
real file imports with no flags, and the warehouse holds what an independent reading of the raw file counts."""
from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from trajscope.cli import main as cli
from trajscope.format import RecordError
from trajscope.ingest.importers import detect_format, import_file
from trajscope.warehouse import open_readonly

FORMATS = Path("../shared/data/external_logs/formats")
SMOL = FORMATS / "smolagents" / "gpt-4o__tool-calling__simpleqa__2025-07-24.jsonl"
LANGFUSE = sorted((FORMATS / "langfuse").glob("*.trace.json"))
CLAUDE = FORMATS / "claude_code" / "tool_heavy.jsonl"
LANGSMITH = FORMATS / "langsmith" / "langsmith_py_wrap_openai_.json"
WEAVE = FORMATS / "weave" / "weaveclient_getagentspans_gets_agent_spans.yaml"
DSPY = FORMATS / "dspy" / "multihop_llama213b_0.json"
ATIF = FORMATS / "atif_harbor" / "openhands_hello-world.trajectory.json"


def reference(path: Path, family: str | None = None) -> str:
    """The output of the family folder's own count.py (an independent reading of the raw file) for one file."""
    script = FORMATS / family / "count.py" if family else path.parent / "count.py"
    done = subprocess.run([sys.executable, str(script), str(path)], capture_output=True, text=True, check=True)
    return done.stdout


def counted(text: str, label: str) -> tuple[int, dict]:
    """`label: N  by name: {...}` (or `label: N {...}`) in count.py's output: the number and the dict."""
    match = re.search(rf"{re.escape(label)}: (\d+)(?:\s+(?:by \w+: )?(\{{.*\}}))?", text)
    assert match, (label, text)
    return int(match.group(1)), ast.literal_eval(match.group(2) or "{}")


def ingest(db: Path, *paths: Path) -> str:
    """`trajscope ingest` with no flags; the command's output."""
    result = CliRunner().invoke(cli, ["ingest", *map(str, paths), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return result.output


def refused(db: Path, path: Path) -> str:
    """The error of `trajscope ingest` for a malformed file: one line (then "nothing was written")."""
    result = CliRunner().invoke(cli, ["ingest", str(path), "--db", str(db)])
    assert result.exit_code != 0 and not db.exists()
    with pytest.raises(RecordError) as caught:
        list(import_file(path))
    message = str(caught.value)
    assert "\n" not in message and message in result.stderr
    return message


def stored(db: Path, run: str) -> dict:
    """What the warehouse holds for one run: trajectories, steps by kind, tool names by kind, finals, gold."""
    with open_readonly(db) as con:
        q = lambda sql: con.execute(sql, [run]).fetchall()  # noqa: E731
        kinds = dict(q("SELECT s.kind, count(*) FROM steps s JOIN trajectories t USING (trajectory_id) "
                       "WHERE t.run_id = ? GROUP BY ALL"))
        names = Counter({(k, n): c for k, n, c in q(
            "SELECT s.kind, s.tool_name, count(*) FROM steps s JOIN trajectories t USING (trajectory_id) "
            "WHERE t.run_id = ? GROUP BY ALL")})
        (n, finals, gold), = q("SELECT count(*), count(*) FILTER (WHERE t.final_answer IS NOT NULL), "
                               "count(*) FILTER (WHERE qq.gold_answer IS NOT NULL) FROM trajectories t "
                               "LEFT JOIN questions qq USING (dataset, question_id) WHERE t.run_id = ?")
        exact = q("SELECT count(*) FROM trajectories t JOIN questions qq USING (dataset, question_id) "
                  "WHERE t.run_id = ? AND lower(trim(t.final_answer)) = lower(trim(qq.gold_answer))")[0][0]
        caps = q("SELECT search_candidates, snippets, read_action, gold_answers, gold_passages, judgments "
                 "FROM run_capabilities WHERE run_id = ?")
    return {"trajectories": n, "kinds": kinds, "names": names, "finals": finals, "gold": gold, "exact": exact,
            "caps": caps}


# --- smolagents ------------------------------------------------------------------------------------

def _smol_text(message: dict) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content or [])


def raw_smolagents(path: Path) -> dict:
    """count.py's reading: calls named in `tool-call` messages, tools called inside python code, answers."""
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    declared: Counter[str] = Counter()
    in_code: Counter[str] = Counter()
    answered = exact = 0
    for r in rows:
        steps = r["intermediate_steps"] if isinstance(r["intermediate_steps"], list) else []
        code_tools = set(re.findall(r"^def (\w+)\(", _smol_text(steps[0]), re.M)) if steps else set()
        for m in steps:
            if m["role"] == "tool-call":
                calls = ast.literal_eval(_smol_text(m).split("\n", 1)[1])
                for c in calls:
                    declared[c["function"]["name"]] += 1
                    if c["function"]["name"] == "python_interpreter":
                        for tool in code_tools:
                            in_code[tool] += len(re.findall(rf"\b{tool}\(", c["function"]["arguments"]))
        if r.get("answer") not in (None, "", "None"):
            answered += 1
            exact += str(r["answer"]).strip().lower() == str(r["true_answer"]).strip().lower()
    return {"rows": len(rows), "declared": declared, "in_code": in_code, "answered": answered, "exact": exact,
            "gold": sum(r.get("true_answer") is not None for r in rows)}


def test_smolagents_tool_calling_file_has_its_reference_counts(tmp_path):
    assert detect_format(SMOL) == "smolagents"
    raw = raw_smolagents(SMOL)
    db = tmp_path / "w.duckdb"
    ingest(db, SMOL)
    got = stored(db, f"smolagents:{SMOL.name}")
    # count.py's reference counts (SOURCE.md) from the independent reading above
    assert raw["rows"] == got["trajectories"] == 50
    assert raw["declared"] == {"web_search": 54, "final_answer": 50, "visit_webpage": 7}
    assert got["names"] == {("search", "web_search"): raw["declared"]["web_search"],
                            ("read", "visit_webpage"): raw["declared"]["visit_webpage"],
                            ("final", "final_answer"): raw["declared"]["final_answer"]}
    assert got["finals"] == raw["answered"] and got["gold"] == raw["gold"] == 50
    assert got["exact"] == raw["exact"] == 44
    # web search returns free text: snippets yes, no candidate ids; visit_webpage is a read
    assert got["caps"] == [(False, True, True, True, False, False)]


def _code_row(answer: str, code: str, observation: str) -> dict:
    call = [{"id": "call_1", "type": "function", "function": {"name": "python_interpreter", "arguments": code}}]
    system = ("You are an expert assistant who can solve any task using code blobs.\n"
              "def web_search(query: string) -> string:\n    \"\"\"Searches the web.\"\"\"\n"
              "def visit_webpage(url: string) -> string:\n    \"\"\"Visits a page.\"\"\"\n"
              "def final_answer(answer: any) -> any:\n    \"\"\"Gives the answer.\"\"\"\n")
    text = lambda t: [{"type": "text", "text": t}]  # noqa: E731
    return {"model_id": "m", "agent_action_type": "code", "question": "Who wrote Velm?", "answer": answer,
            "true_answer": "Ada", "source": "SimpleQA", "intermediate_steps": [
                {"role": "system", "content": text(system)},
                {"role": "user", "content": text("New task:\nWho wrote Velm?")},
                {"role": "assistant", "content": text("Thought: search then answer")},
                {"role": "tool-call", "content": text("Calling tools:\n" + repr(call))},
                {"role": "tool-response", "content": text(observation)}]}


def test_smolagents_code_agent_calls_inside_the_code_are_steps(tmp_path):
    code = ("r = web_search(query='Velm author')\nprint(r)\npage = visit_webpage('https://w.example/Velm')\n"
            "final_answer(\"Ada\")")
    path = tmp_path / "code.jsonl"
    path.write_text(json.dumps(_code_row("Ada", code, "Observation:\nExecution logs:\nAda wrote Velm")) + "\n")
    raw = raw_smolagents(path)
    assert detect_format(path) == "smolagents"
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "smolagents:code.jsonl")
    assert got["names"] == {("tool", "python_interpreter"): raw["declared"]["python_interpreter"],
                            ("search", "web_search"): raw["in_code"]["web_search"],
                            ("read", "visit_webpage"): raw["in_code"]["visit_webpage"],
                            ("final", "final_answer"): raw["in_code"]["final_answer"]}
    with open_readonly(db) as con:
        query, = con.execute("SELECT query FROM steps WHERE kind = 'search'").fetchone()
        read, = con.execute("SELECT chunk_ids[1] FROM steps WHERE kind = 'read'").fetchone()
    assert (query, read) == ("Velm author", "https://w.example/Velm")
    assert got["exact"] == raw["exact"] == 1


def test_smolagents_vanilla_run_has_only_its_answer(tmp_path):
    rows = [{"model_id": "gpt-4o", "agent_action_type": "vanilla", "question": q, "answer": a, "true_answer": g,
             "source": "SimpleQA", "intermediate_steps": a, "token_counts": {"input": 0, "output": 0}}
            for q, a, g in (("When was Velm founded?", "1541", "1541"), ("Who wrote Velm?", "Ada", "Bo"))]
    path = tmp_path / "vanilla.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    raw = raw_smolagents(path)
    assert detect_format(path) == "smolagents"
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "smolagents:vanilla.jsonl")
    assert got["kinds"] == {"final": raw["answered"]} and got["exact"] == raw["exact"] == 1


def test_smolagents_malformed_call_list_names_file_line_and_field(tmp_path):
    good = json.loads(SMOL.read_text().splitlines()[0])
    bad = json.loads(json.dumps(good))
    bad["intermediate_steps"][3]["content"][0]["text"] = "Calling tools:\n[{'id': 'x', 'function': "
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    line = refused(tmp_path / "w.duckdb", path)
    assert "bad.jsonl:2" in line and "intermediate_steps[3].content" in line


# --- Langfuse ----------------------------------------------------------------------------------------

def _langfuse_expected(path: Path, family: str | None = None) -> dict:
    text = reference(path, family)
    n_obs, by_type = counted(text, "observations")
    n_req, requested = counted(text, "tool calls requested by model")
    n_exec, executed = counted(text, "tool executions (TOOL obs / SPAN named as tool)")
    n_final, _ = counted(text, "final answers")
    final = re.search(r"final answers: \d+\s+-> (.*)$", text, re.M).group(1)
    return {"observations": by_type, "requested": requested, "executed": executed, "finals": n_final,
            "final_head": ast.literal_eval(final)}


def test_langfuse_traces_have_their_reference_counts(tmp_path):
    db = tmp_path / "w.duckdb"
    assert [detect_format(p) for p in LANGFUSE] == ["langfuse"] * len(LANGFUSE) == ["langfuse"] * 2
    ingest(db, *LANGFUSE)
    for path in LANGFUSE:
        want, got = _langfuse_expected(path), stored(db, f"langfuse:{path.name}")
        assert got["trajectories"] == 1 and want["requested"] == want["executed"]
        # each executed tool is a step (its name kept; a search tool by the name rules), then the answer
        assert Counter({name: c for (kind, name), c in got["names"].items() if kind != "final"}) == want["executed"]
        assert got["kinds"] == {"search": sum(want["executed"].values()), "final": want["finals"]}
        with open_readonly(db) as con:
            answer, meta = con.execute("SELECT final_answer, metadata FROM trajectories WHERE run_id = ?",
                                       [f"langfuse:{path.name}"]).fetchone()
        assert answer.startswith(want["final_head"]) and json.loads(meta)["observations"] == want["observations"]
        assert got["caps"][0][4] is False  # no gold passages in a Langfuse trace


def _public_api(export: dict) -> dict:
    """The same trace as Langfuse's public API returns it: observations inside, outputs JSON text encoded twice."""
    trace = {k: v for k, v in export["trace"].items() if k != "observations"}
    trace["observations"] = [{**o, "output": json.dumps(json.dumps(o["output"]))} for o in export["observations"]]
    return trace


def test_langfuse_public_api_shape_and_flat_observations_give_the_same_records(tmp_path):
    db = tmp_path / "w.duckdb"
    export = json.loads(LANGFUSE[1].read_text())
    api = tmp_path / "api.json"
    api.write_text(json.dumps({"data": [_public_api(export)], "meta": {"page": 1}}))
    flat = tmp_path / "flat.jsonl"
    flat.write_text("".join(json.dumps(o) + "\n" for o in export["observations"]))
    assert detect_format(api) == detect_format(flat) == "langfuse"
    ingest(db, LANGFUSE[1], api, flat)
    want = stored(db, f"langfuse:{LANGFUSE[1].name}")
    for run in ("langfuse:api.json", "langfuse:flat.jsonl"):
        got = stored(db, run)
        assert (got["names"], got["finals"]) == (want["names"], want["finals"])


def _observation(oid: str, kind: str, name: str, parent: str | None, start: str, **fields) -> dict:
    return {"id": oid, "traceId": "t1", "type": kind, "name": name, "parentObservationId": parent,
            "startTime": f"2025-09-30T09:04:{start}Z", "endTime": f"2025-09-30T09:04:{start}Z", "level": "DEFAULT",
            "input": None, "output": None, **fields}


def test_langfuse_openai_agents_shape_responses_api_and_a_tool_that_names_no_passage(tmp_path):
    call = {"arguments": '{"city":"Tokyo"}', "call_id": "call_1", "name": "get_weather", "type": "function_call"}
    answer = {"output": [{"type": "message", "role": "assistant",
                          "content": [{"type": "output_text", "text": "It is sunny in Tokyo."}]}]}
    observations = [
        _observation("a", "AGENT", "Agent workflow", None, "00.000"),
        _observation("g1", "GENERATION", "response", "a", "01.000", model="gpt-4.1",
                     input=json.dumps([{"content": "What's the weather in Tokyo?", "role": "user"}]),
                     output=json.dumps({"output": [call]}), usageDetails={"input": 55, "output": 15}),
        _observation("t", "TOOL", "get_weather", "a", "02.000", input='{"city":"Tokyo"}',
                     output="The weather in Tokyo is sunny."),
        _observation("g2", "GENERATION", "response", "a", "03.000", model="gpt-4.1",
                     output=json.dumps(answer), usageDetails={"input": 85, "output": 29})]
    trace = {"id": "t1", "name": "Agent workflow", "input": None, "output": None, "observations": observations}
    path = tmp_path / "openai-agents.trace.json"
    path.write_text(json.dumps({"trace": trace, "observations": observations}, indent=2))
    want = _langfuse_expected(path, "langfuse")
    assert detect_format(path) == "langfuse" and want["executed"] == want["requested"] == {"get_weather": 1}
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "langfuse:openai-agents.trace.json")
    # get_weather(city) names no passage: a tool, not a read that failed
    assert got["names"] == {("tool", "get_weather"): 1, ("final", None): want["finals"]}
    with open_readonly(db) as con:
        row = con.execute("SELECT q.text, t.final_answer, t.total_tokens_in FROM trajectories t JOIN questions q "
                          "USING (dataset, question_id)").fetchone()
    assert row == ("What's the weather in Tokyo?", want["final_head"], 55 + 85)


def test_langfuse_pydantic_ai_shape_text_question_and_a_single_choice_answer(tmp_path):
    question, answer = "What is Langfuse?", "Langfuse is an observability tool for LLM applications."
    choice = {"index": 0, "message": {"role": "assistant", "content": answer}, "event.name": "gen_ai.choice"}
    observations = [_observation("r", "SPAN", "qa-trace", None, "00.000"),
                    _observation("g", "GENERATION", "chat gpt-4o", "r", "01.000", model="gpt-4o",
                                 input=json.dumps([{"content": "Be concise.", "role": "system"}]),
                                 output=json.dumps(choice), usageDetails={"input": 31, "output": 96})]
    # the trace's input and output are JSON text of strings, as pydantic-ai's export writes them
    trace = {"id": "t1", "name": "qa-trace", "input": json.dumps(question), "output": json.dumps(answer),
             "observations": observations}
    path = tmp_path / "pydantic-ai.trace.json"
    path.write_text(json.dumps({"trace": trace, "observations": observations}))
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    with open_readonly(db) as con:
        row = con.execute("SELECT q.text, t.final_answer FROM trajectories t JOIN questions q "
                          "USING (dataset, question_id)").fetchone()
    assert row == (question, answer)


def test_langfuse_observation_without_id_names_file_line_and_field(tmp_path):
    export = json.loads(LANGFUSE[0].read_text())
    del export["observations"][2]["id"]
    path = tmp_path / "bad.trace.json"
    path.write_text(json.dumps(export))
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:1: field observations[2].id:")


# --- Claude Code ---------------------------------------------------------------------------------------

_CLAUDE_KINDS = {"WebSearch": "search", "WebFetch": "read", "Read": "read", "Glob": "keyword_search",
                 "Grep": "keyword_search"}


def test_claude_code_session_has_its_reference_counts(tmp_path):
    text = reference(CLAUDE)
    n_calls, by_name = counted(text, "tool calls")
    matched = re.search(r"tool results matched to a tool_use: (\d+) / (\d+)", text).groups()
    final = ast.literal_eval(re.search(r"final answer \(last assistant text\): (.*)$", text, re.M).group(1))
    assert detect_format(CLAUDE) == "claude_code"
    db = tmp_path / "w.duckdb"
    ingest(db, CLAUDE)
    got = stored(db, f"claude_code:{CLAUDE.name}")
    assert got["trajectories"] == 1 and n_calls == 6 and matched == ("6", "6")
    assert got["names"] == {**{(_CLAUDE_KINDS.get(n, "tool"), n): c for n, c in by_name.items()},
                            ("final", None): 1}
    with open_readonly(db) as con:
        answer, = con.execute("SELECT final_answer FROM trajectories").fetchone()
        unmatched, = con.execute("SELECT count(*) FROM steps WHERE kind <> 'final' AND observation IS NULL")\
            .fetchone()
        thoughts = [t for (t,) in con.execute("SELECT thought FROM steps WHERE thought IS NOT NULL").fetchall()]
    assert answer.startswith(final) and unmatched == 0  # every tool_use has its tool_result
    raw = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    thinking = [b["thinking"] for r in raw if r["type"] == "assistant" for b in r["message"]["content"]
                if b["type"] == "thinking"]
    assert thinking and all(any(t in th for th in thoughts) for t in thinking)


def test_claude_code_side_chain_is_its_own_trajectory(tmp_path):
    raw = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    side = [{**r, "isSidechain": True, "agentId": "a1"} for r in raw if r["type"] in ("user", "assistant")]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in raw + side))
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    with open_readonly(db) as con:
        rows = con.execute("SELECT question_id, count(s.step_index) FROM trajectories t JOIN steps s "
                           "USING (trajectory_id) GROUP BY ALL ORDER BY 1").fetchall()
        agents = con.execute("SELECT DISTINCT agent FROM steps ORDER BY 1 NULLS FIRST").fetchall()
    session = raw[3]["sessionId"]
    assert rows == [(session, 7), (f"{session}:a1", 7)] and agents == [(None,), ("a1",)]


def test_claude_code_record_without_message_names_file_line_and_field(tmp_path):
    lines = CLAUDE.read_text().splitlines()
    record = json.loads(lines[4])
    record["message"] = "oops"
    lines[4] = json.dumps(record)
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:5: field message:")


# --- LangSmith -----------------------------------------------------------------------------------------

def _langsmith_expected(path: Path) -> dict:
    text = reference(path, "langsmith")
    traces = int(re.search(r"traces: (\d+)", text).group(1))
    types = ast.literal_eval(re.search(r"by run_type: (\{.*?\})", text).group(1))
    n_calls, calls = counted(text, "tool calls requested")
    finals = ast.literal_eval(re.search(r"final answers: \d+ -> (.*)$", text, re.M).group(1))
    return {"traces": traces, "types": types, "calls": calls, "finals": finals}


def test_langsmith_payload_has_its_reference_counts(tmp_path):
    want = _langsmith_expected(LANGSMITH)
    assert detect_format(LANGSMITH) == "langsmith"
    db = tmp_path / "w.duckdb"
    ingest(db, LANGSMITH)
    got = stored(db, f"langsmith:{LANGSMITH.name}")
    assert got["trajectories"] == want["traces"] == 1 and want["types"] == {"llm": 1} and want["calls"] == {}
    assert got["kinds"] == {"final": len(want["finals"])}
    with open_readonly(db) as con:
        answer, question = con.execute("SELECT t.final_answer, q.text FROM trajectories t JOIN questions q "
                                       "USING (dataset, question_id)").fetchone()
    raw = json.loads(LANGSMITH.read_text())
    assert answer.startswith(want["finals"][0]) and question == raw["post"][0]["inputs"]["messages"][0]["content"]


def _run(run_id: str, run_type: str, name: str, inputs: dict, outputs: dict, children=(), **extra) -> dict:
    return {"id": run_id, "trace_id": "t1", "run_type": run_type, "name": name, "inputs": inputs,
            "outputs": outputs, "child_runs": list(children), "dotted_order": f"2024{run_id}", **extra}


def _llm_calling(tool: str, args: dict, call_id: str) -> dict:
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
    return {"choices": [{"message": {"role": "assistant", "content": None, "tool_calls": [call]}}]}


def test_langsmith_run_tree_with_tool_retriever_and_chain_runs(tmp_path):
    docs = [{"page_content": "Velm is on the Oder.", "metadata": {"id": "d7", "title": "Velm"}},
            {"page_content": "Oder is a river.", "metadata": {"id": "d9", "title": "Oder"}}]
    tree = _run("1", "chain", "AgentExecutor", {"question": "Which river flows through Velm?"}, {"output": "Oder"}, [
        _run("2", "llm", "ChatOpenAI", {"messages": []}, _llm_calling("wiki_search", {"query": "Velm"}, "c1")),
        _run("3", "tool", "wiki_search", {"query": "Velm"}, {"output": "Velm: a town"}),
        _run("4", "retriever", "VectorStoreRetriever", {"query": "Velm river"}, {"documents": docs}),
        _run("5", "llm", "ChatOpenAI", {"messages": []}, _llm_calling("read_page", {"page": "Velm"}, "c2")),
        _run("6", "tool", "read_page", {"page": "Velm"}, {"output": "Velm is a town on the Oder river."}),
        _run("7", "tool", "calculator", {"input": "1+1"}, {}, error="ZeroDivisionError"),
        _run("8", "llm", "ChatOpenAI", {"messages": []}, {"choices": [{"message": {"content": "Oder"}}]}),
    ])
    path = tmp_path / "tree.json"
    path.write_text(json.dumps({"post": [tree]}, indent=1))
    want = _langsmith_expected(path)
    assert detect_format(path) == "langsmith"
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "langsmith:tree.json")
    assert want["types"] == {"chain": 1, "llm": 3, "tool": 3, "retriever": 1}
    # count.py takes nested runs (no parent_run_id of their own) as roots: the closing LLM run's text is its answer
    assert want["calls"] == {"wiki_search": 1, "read_page": 1} and want["finals"] == ["Oder"]
    assert got["names"] == {("search", "wiki_search"): 1, ("search", "VectorStoreRetriever"): 1,
                            ("read", "read_page"): 1, ("error", "calculator"): 1, ("final", None): 1}
    with open_readonly(db) as con:
        cands = con.execute("SELECT chunk_id, snippet FROM candidates ORDER BY rank").fetchall()
        answer, = con.execute("SELECT final_answer FROM trajectories").fetchone()
    assert cands == [(d["metadata"]["id"], d["page_content"]) for d in docs] and [answer] == want["finals"]


def test_langsmith_run_without_id_names_file_line_and_field(tmp_path):
    raw = json.loads(LANGSMITH.read_text())
    del raw["patch"][0]["id"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:1: field patch[0].id:")


# --- Weave ---------------------------------------------------------------------------------------------

def _weave_expected(path: Path) -> dict:
    text = reference(path, "weave")
    traces, spans = map(int, re.search(r"traces: (\d+)\s+spans: (\d+)", text).groups())
    ops = ast.literal_eval(re.search(r"by operation_name: (\{.*?\})", text).group(1))
    n_calls, calls = counted(text, "tool calls")
    finals = ast.literal_eval(re.search(r"final answers: \d+ -> (.*)$", text, re.M).group(1))
    return {"traces": traces, "spans": spans, "ops": ops, "calls": calls, "finals": finals}


def test_weave_agent_spans_have_their_reference_counts(tmp_path):
    want = _weave_expected(WEAVE)
    assert detect_format(WEAVE) == "weave"
    db = tmp_path / "w.duckdb"
    ingest(db, WEAVE)
    got = stored(db, f"weave:{WEAVE.name}")
    assert got["trajectories"] == want["traces"] == 2 and want["spans"] == 5
    assert got["names"] == {("tool", n): c for n, c in want["calls"].items()} and want["calls"] == {"calculate": 1}
    assert got["finals"] == len(want["finals"]) == 0  # the spans API returned no output messages
    with open_readonly(db) as con:
        ops = Counter()
        for (meta,) in con.execute("SELECT metadata FROM trajectories").fetchall():
            ops.update(json.loads(meta)["spans"])
    assert ops == want["ops"]


def _cassette(tmp_path: Path, url: str, body: dict) -> Path:
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump([{"request": {"url": "https://trace.wandb.ai/health", "body": ""},
                                     "response": {"status": 200, "body": '{"status":"ok"}'}},
                                    {"request": {"url": url, "body": "{}"},
                                     "response": {"status": 200, "body": json.dumps(body)}}]))
    return path


def test_weave_chat_view_gives_question_tool_calls_and_answer(tmp_path):
    body = {"trace_id": "t9", "messages": [
        {"type": "user_message", "user_message": {"text": "Which river flows through Velm?"}},
        {"type": "agent_start", "agent_start": {"agent_name": "Assistant"}},
        {"type": "tool_call", "tool_call": {"name": "web_search", "arguments": '{"query": "Velm river"}',
                                            "result": "Velm lies on the Oder."}},
        {"type": "assistant_message", "assistant_message": {"text": "The Oder."}}]}
    path = _cassette(tmp_path, "https://trace.wandb.ai/agents/traces/chat", body)
    want = _weave_expected(path)
    assert detect_format(path) == "weave"
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "weave:cassette.yaml")
    assert got["trajectories"] == want["traces"] == 1 and want["calls"] == {"web_search": 1}
    assert got["names"] == {("search", "web_search"): 1, ("final", None): len(want["finals"])}
    with open_readonly(db) as con:
        row = con.execute("SELECT q.text, t.final_answer, s.query FROM trajectories t JOIN questions q "
                          "USING (dataset, question_id) JOIN steps s USING (trajectory_id) WHERE s.kind = 'search'"
                          ).fetchone()
    assert row == (body["messages"][0]["user_message"]["text"], want["finals"][0], "Velm river")


def test_weave_calls_leaf_calls_are_tools_and_the_root_output_answers(tmp_path):
    op = "weave:///e/p/op/{}:abc"
    tool_call = {"id": "c1", "type": "function", "function": {"name": "search_docs", "arguments": '{"q": "Velm"}'}}
    calls = [
        {"id": "r", "trace_id": "t1", "parent_id": None, "project_id": "e/p", "op_name": op.format("Agent.run"),
         "inputs": {"self": "Agent", "question": "Which river flows through Velm?"}, "output": "Oder",
         "started_at": "2025-01-01T00:00:00Z"},
        {"id": "l", "trace_id": "t1", "parent_id": "r", "project_id": "e/p",
         "op_name": op.format("openai.chat.completions.create"), "inputs": {"messages": []},
         "output": {"choices": [{"message": {"content": None, "tool_calls": [tool_call]}}]},
         "started_at": "2025-01-01T00:00:01Z"},
        {"id": "s", "trace_id": "t1", "parent_id": "r", "project_id": "e/p", "op_name": op.format("search_docs"),
         "inputs": {"q": "Velm"}, "output": [{"id": "d7", "text": "Velm is on the Oder."}],
         "started_at": "2025-01-01T00:00:02Z"}]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    assert detect_format(path) == "weave"
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    got = stored(db, "weave:calls.jsonl")
    assert got["names"] == {("search", "search_docs"): 1, ("final", None): 1}
    with open_readonly(db) as con:
        assert con.execute("SELECT chunk_id FROM candidates").fetchall() == [("d7",)]
        assert con.execute("SELECT final_answer FROM trajectories").fetchone() == (calls[0]["output"],)


def test_weave_span_without_trace_id_names_file_line_and_field(tmp_path):
    interactions = yaml.safe_load(WEAVE.read_text())
    body = json.loads(interactions[2]["response"]["body"])
    del body["spans"][1]["trace_id"]
    interactions[2]["response"]["body"] = json.dumps(body)
    path = tmp_path / "bad.yaml"
    text = yaml.safe_dump(interactions)
    path.write_text(text)
    third = [i for i, x in enumerate(text.splitlines(), start=1) if x.startswith("- ")][2]  # the 3rd interaction
    field = "[2].response.body.spans[1].trace_id"
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:{third}: field {field}:")


# --- DSPy ----------------------------------------------------------------------------------------------

def test_dspy_program_traces_have_their_reference_counts(tmp_path):
    text = reference(DSPY)
    traces = int(re.search(r"traces \(distinct dspy_uuid of augmented demos\): (\d+)", text).group(1))
    n_search = int(re.search(r"retrieval \(search\) calls: (\d+)", text).group(1))
    queries = ast.literal_eval(re.search(r"queries: (\[.*\])$", text, re.M).group(1))
    finals = ast.literal_eval(re.search(r"final answers: \d+ -> (.*)$", text, re.M).group(1))
    assert detect_format(DSPY) == "dspy"
    db = tmp_path / "w.duckdb"
    ingest(db, DSPY)
    got = stored(db, f"dspy:{DSPY.name}")
    assert got["trajectories"] == traces == 2 and got["kinds"] == {"search": n_search, "final": len(finals)}
    raw = json.loads(DSPY.read_text())
    answer_contexts = {d["dspy_uuid"]: d["context"] for d in raw["generate_answer"]["demos"] if d.get("augmented")}
    with open_readonly(db) as con:
        got_queries = [q for (q,) in con.execute("SELECT query FROM steps WHERE kind = 'search'").fetchall()]
        answers = sorted(a for (a,) in con.execute("SELECT final_answer FROM trajectories").fetchall())
        per_trace = dict(con.execute("SELECT json_extract_string(t.metadata, '$.dspy_uuid'), count(c.chunk_id) "
                                     "FROM trajectories t JOIN candidates c USING (trajectory_id) GROUP BY ALL")
                         .fetchall())
        titles = {c for (c,) in con.execute("SELECT chunk_id FROM candidates").fetchall()}
    assert sorted(q[:60] for q in got_queries) == sorted(queries) and answers == sorted(finals)
    # every passage of the answer's context came from one retrieval hop, known by its title
    assert per_trace == {u: len(set(c)) for u, c in answer_contexts.items()}
    assert titles == {"title:" + p.split(" | ")[0] for c in answer_contexts.values() for p in c}


def test_dspy_demos_without_run_ids_join_by_question(tmp_path):
    raw = json.loads(DSPY.read_text())
    for state in raw.values():
        for demo in state.get("demos", []) if isinstance(state, dict) else []:
            demo.pop("dspy_uuid", None)  # DSPy after 2.4 writes no run id
    path = tmp_path / "multihop_new.json"
    path.write_text(json.dumps(raw, indent=1))
    db = tmp_path / "w.duckdb"
    ingest(db, DSPY, path)
    assert stored(db, "dspy:multihop_new.json")["names"] == stored(db, f"dspy:{DSPY.name}")["names"]


def test_dspy_demo_without_run_id_or_question_names_file_line_and_field(tmp_path):
    raw = json.loads(DSPY.read_text())
    del raw["generate_query[1]"]["demos"][1]["dspy_uuid"]
    del raw["generate_query[1]"]["demos"][1]["question"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw, indent=1))
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:1: field generate_query[1].demos[1].dspy_uuid:")


# --- ATIF ----------------------------------------------------------------------------------------------

def _atif_expected(path: Path) -> dict:
    text = reference(path, "atif_harbor")
    sources = ast.literal_eval(re.search(r"by source: (\{.*?\})", text).group(1))
    n_calls, calls = counted(text, "structured tool calls")
    commands = int(re.search(r"terminal commands \(JSON protocol\): (\d+)", text).group(1))
    final = ast.literal_eval(re.search(r"final answer: (.*)$", text, re.M).group(1))
    return {"sources": sources, "calls": calls, "commands": commands, "final": final}


def test_atif_harbor_trajectory_has_its_reference_counts(tmp_path):
    want = _atif_expected(ATIF)
    db = tmp_path / "w.duckdb"
    ingest(db, ATIF)
    got = stored(db, f"atif:{ATIF.name}")
    assert got["trajectories"] == 1 and want["sources"] == {"system": 3, "user": 1, "agent": 2}
    assert want["calls"] == {"str_replace_editor": 1, "finish": 1}
    assert got["names"] == {("tool", "str_replace_editor"): 1, ("final", "finish"): 1}
    with open_readonly(db) as con:
        answer, = con.execute("SELECT final_answer FROM trajectories").fetchone()
    assert answer.startswith(want["final"])


def _terminus_step(step_id: int, analysis: str, keystrokes: list[str], output: str, copied: bool = False) -> dict:
    message = json.dumps({"analysis": analysis, "plan": "next", "commands": [
        {"keystrokes": k, "duration": 0.1} for k in keystrokes], "task_complete": not keystrokes})
    return {"step_id": step_id, "source": "agent", "message": message, "is_copied_context": copied,
            "observation": {"results": [{"content": output}]}, "metrics": {"prompt_tokens": 10,
                                                                           "completion_tokens": 5}}


def _terminus(tmp_path: Path) -> tuple[Path, Path]:
    """A Terminus-2 run in ATIF v1.7 whose context hand-off continues it in a second file."""
    task = {"step_id": 1, "source": "user", "message": "Create file1.txt and file2.txt."}
    first = [_terminus_step(2, "Start.", ["ls\n"], "(empty)"),
             _terminus_step(3, "Create file1.", ["echo a > file1.txt\n", "ls\n"], "file1.txt")]
    main = {"schema_version": "ATIF-v1.7", "session_id": "s1", "agent": {"name": "terminus-2", "version": "2.0.0",
            "model_name": "openai/gpt-4o"}, "steps": [task, *first],
            "final_metrics": {"total_prompt_tokens": 20, "total_completion_tokens": 10},
            "continued_trajectory_ref": "trajectory.cont-1.json"}
    cont = {**{k: v for k, v in main.items() if k != "continued_trajectory_ref"},
            "steps": [{**task, "is_copied_context": True}, *({**s, "is_copied_context": True} for s in first),
                      _terminus_step(4, "Create file2.", ["echo b > file2.txt\n"], "file2.txt"),
                      _terminus_step(5, "Done.", [], "")]}
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "trajectory.json").write_text(json.dumps(main, indent=1))
    (folder / "trajectory.cont-1.json").write_text(json.dumps(cont, indent=1))
    return folder / "trajectory.json", folder / "trajectory.cont-1.json"


def test_atif_continued_trajectory_is_joined_and_copied_context_taken_once(tmp_path):
    main, cont = _terminus(tmp_path)
    want_main, want_cont = _atif_expected(main), _atif_expected(cont)
    raw_cont = json.loads(cont.read_text())
    copied_commands = sum(len(json.loads(s["message"])["commands"]) for s in raw_cont["steps"]
                          if s["source"] == "agent" and s["is_copied_context"])
    assert detect_format(main) == detect_format(cont) == "atif"
    for name, paths in (("file", [main]), ("folder", [main.parent])):
        db = tmp_path / f"{name}.duckdb"
        ingest(db, *paths)
        with open_readonly(db) as con:
            (n, answer, tokens_in), = con.execute("SELECT count(*), any_value(final_answer), "
                                                  "any_value(total_tokens_in) FROM trajectories").fetchall()
            commands = con.execute("SELECT count(*) FROM steps WHERE tool_name = 'terminal_command'").fetchone()[0]
            finals = con.execute("SELECT count(*) FROM steps WHERE kind = 'final'").fetchone()[0]
        assert n == 1 and finals == 1 and answer == want_cont["final"]
        assert commands == want_main["commands"] + want_cont["commands"] - copied_commands == 4
        assert tokens_in == sum(json.loads(p.read_text())["final_metrics"]["total_prompt_tokens"] for p in (main, cont))


def test_atif_embedded_subagent_trajectory_is_its_own_trajectory(tmp_path):
    search = {"tool_call_id": "c1", "function_name": "web_search", "arguments": {"query": "Velm river"}}
    sub = {"trajectory_id": "sub1", "agent": {"name": "researcher", "version": "1"}, "steps": [
        {"step_id": 1, "source": "user", "message": "Find the river of Velm."},
        {"step_id": 2, "source": "agent", "message": "", "tool_calls": [search],
         "observation": {"results": [{"source_call_id": "c1", "content": "Velm lies on the Oder."}]}},
        {"step_id": 3, "source": "agent", "message": "The Oder."}]}
    doc = {"schema_version": "ATIF-v1.7", "session_id": "s9", "agent": {"name": "lead", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": "Which river flows through Velm?"},
                     {"step_id": 2, "source": "agent", "message": "Oder"}],
           "subagent_trajectories": [sub]}
    path = tmp_path / "lead.json"
    path.write_text(json.dumps(doc, indent=1))
    db = tmp_path / "w.duckdb"
    ingest(db, path)
    with open_readonly(db) as con:
        rows = con.execute("SELECT t.question_id, s.kind, s.agent FROM trajectories t JOIN steps s "
                           "USING (trajectory_id) ORDER BY 1, s.step_index").fetchall()
    assert rows == [(doc["session_id"], "final", None),
                    (f"{doc['session_id']}:{sub['trajectory_id']}", "search", sub["agent"]["name"]),
                    (f"{doc['session_id']}:{sub['trajectory_id']}", "final", sub["agent"]["name"])]


def test_atif_step_with_an_unknown_source_names_file_line_and_field(tmp_path):
    raw = json.loads(ATIF.read_text())
    raw["steps"][2]["source"] = "robot"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw, indent=1))
    assert refused(tmp_path / "w.duckdb", path).startswith(f"{path}:1: field steps[2].source:")


# --- every shared file of these families, into one warehouse ---------------------------------------------

def test_all_framework_files_ingest_together_into_one_warehouse(tmp_path):
    files = {"smolagents": [SMOL], "langfuse": LANGFUSE, "claude_code": [CLAUDE], "langsmith": [LANGSMITH],
             "weave": [WEAVE], "dspy": [DSPY], "atif": [ATIF]}
    db = tmp_path / "w.duckdb"
    ingest(db, *(p for paths in files.values() for p in paths))
    smol = raw_smolagents(SMOL)
    dspy_text = reference(DSPY)
    claude_calls, _ = counted(reference(CLAUDE), "tool calls")
    weave = _weave_expected(WEAVE)
    expected = {  # run -> (trajectories, final answers, steps that are not the answer)
        f"smolagents:{SMOL.name}": (smol["rows"], smol["answered"],
                                    sum(smol["declared"].values()) - smol["declared"]["final_answer"]),
        f"claude_code:{CLAUDE.name}": (1, 1, claude_calls),
        f"langsmith:{LANGSMITH.name}": (1, len(_langsmith_expected(LANGSMITH)["finals"]), 0),
        f"weave:{WEAVE.name}": (weave["traces"], len(weave["finals"]), sum(weave["calls"].values())),
        f"dspy:{DSPY.name}": (int(re.search(r"traces \(distinct dspy_uuid of augmented demos\): (\d+)",
                                            dspy_text).group(1)),
                              len(ast.literal_eval(re.search(r"final answers: \d+ -> (.*)$", dspy_text,
                                                             re.M).group(1))),
                              int(re.search(r"retrieval \(search\) calls: (\d+)", dspy_text).group(1))),
        f"atif:{ATIF.name}": (1, 1, sum(_atif_expected(ATIF)["calls"].values()) - 1),
        **{f"langfuse:{p.name}": (1, _langfuse_expected(p)["finals"], sum(_langfuse_expected(p)["executed"].values()))
           for p in LANGFUSE},
    }
    with open_readonly(db) as con:
        got = {run: (n, finals, others) for run, n, finals, others in con.execute(
            "SELECT t.run_id, count(DISTINCT t.trajectory_id), count(DISTINCT t.trajectory_id) FILTER "
            "(WHERE t.final_answer IS NOT NULL), count(s.step_index) FILTER (WHERE s.kind <> 'final') "
            "FROM trajectories t LEFT JOIN steps s USING (trajectory_id) GROUP BY ALL").fetchall()}
        sources = {src for (src,) in con.execute("SELECT DISTINCT source FROM runs").fetchall()}
    assert got == expected
    assert sources == {f"import:{fmt}" for fmt in files}
