"""`trajscope export-traces`: runs of every controller (scripted mock server, ingested and judged) leave in
OpenInference, OTel GenAI, ATIF and Inspect, and come back through the importers with the same steps, ids,
gold, verdicts and labels; the conventions alone (the trajscope attachment stripped) carry the tool calls,
ids and gold; the OpenInference attribute names are checked against the package's own constants."""
from __future__ import annotations

import json
import re

import msgspec
import pytest
from click.testing import CliRunner
from openinference.semconv.trace import (
    DocumentAttributes,
    MessageAttributes,
    OpenInferenceMimeTypeValues,
    OpenInferenceSpanKindValues,
    SpanAttributes,
    ToolCallAttributes,
)
from test_controllers_register import R1, R2, RegisterModel, route_by_item
from test_controllers_support import CORPUS, QUESTION, RoutedRetriever, mock_server, run_controller

from trajscope.cli import main as cli
from trajscope.engine.controllers import CONTROLLERS, get_controller
from trajscope.engine.judge_pass import judge_run
from trajscope.engine.judges import LLMJudge
from trajscope.engine.llm import ChatModel, ModelConfig
from trajscope.engine.mock_llm import MockLLMServer, reply_json, reply_text, reply_tool_call
from trajscope.format import EXPORT_KEY, Question, RecordError, step_kind
from trajscope.ingest.exporters import EXPORT_FORMATS, JUDGE_SCORERS
from trajscope.ingest.importers import SCORER_JUDGES
from trajscope.warehouse import ingest_trajectories, open_readonly
from trajscope.warehouse._reconstruct import read_trajectory
from trajscope.warehouse.export import exported_trajectories, trajectory_labels

GOLDS = ["c1", "c2"]
FORMATS = list(EXPORT_FORMATS)


def _q(qid: str, golds: list[str] = GOLDS) -> Question:
    return msgspec.structs.replace(QUESTION, question_id=qid, dataset="musique", gold_chunk_ids=golds,
                                   gold_match="given", hop_count=2, aliases=["Helen Pitts"])


def _scripted(replies):
    queue = list(replies)
    return lambda request: queue.pop(0)


def _search(query):
    return reply_tool_call("search", {"query": query})


def _read(chunk_id):
    return reply_tool_call("read", {"chunk_id": chunk_id})


def _final(answer):
    return reply_tool_call("final", {"answer": answer})


ROUTES = {"North Star publisher": ["c1", "c3"], "Douglass wife": ["c2", "c6"]}
RESOLVE = [{"updates": [{"id": "R1", "status": "resolved", "note": "Douglass published it",
                         "supporting_chunk_ids": ["c1"]}]},
           {"updates": [{"id": "R2", "status": "resolved", "note": "he married Helen Pitts",
                         "supporting_chunk_ids": ["c2"]}]}]
# run id -> (controller, condition, [(question id, responder)]): every registered controller, and the
# Read-Gate under both policies (its gate rejection is a step no tool call expresses).
RUNS = {
    "rg_base": ("read_gate", "baseline", [
        ("a_no_read", _scripted([_search("North Star publisher"), _final("Anna Murray")])),
        ("b_read", _scripted([_search("North Star publisher"), _read("c1"), _search("Douglass wife"), _read("c2"),
                              _final("Helen Pitts Douglass")]))]),
    "rg_gate": ("read_gate", "read_gate", [
        ("c_gated", _scripted([_search("North Star publisher"), _final("Frederick"), _read("c1"),
                               _final("Frances Ames")]))]),
    "arag": ("arag", None, [
        ("d_arag", _scripted([reply_tool_call("keyword_search", {"keywords": ["North", "Star", "publisher"]}),
                              reply_tool_call("semantic_search", {"query": "Douglass wife"}),
                              reply_tool_call("read_chunk", {"chunk_id": "c2"}), reply_text("Helen Pitts")]))]),
    "erag": ("execution_rag", "composed", [("e_register", RegisterModel([R1, R2], RESOLVE, answer="Helen Pitts"))]),
    "direct": ("direct", None, [("f_direct", _scripted([reply_text("Anna Murray", tokens_in=40, tokens_out=3)]))]),
    "vanilla": ("vanilla_rag", None, [("g_vanilla", _scripted([reply_text("Helen Pitts Douglass")]))]),
}
RETRIEVER_ROUTES = route_by_item({R1: ["c1", "c3"], R2: ["c2", "c4"], **ROUTES}, seed=["c1", "c7"])


def _judge_reply(request):
    text = request.text()
    gold = text.split("Gold answer: ")[1].split("\n")[0].lower()
    prediction = text.split("Predicted answer: ")[1].split("\n")[0].lower()
    return reply_json({"equivalent": gold in prediction, "rationale": "mock verdict"})


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A judged warehouse with one run per controller (and the Read-Gate under both policies)."""
    trajectories = []
    for run_id, (controller, condition, cases) in RUNS.items():
        for qid, responder in cases:
            with mock_server(responder) as server:
                trajectories.append(run_controller(
                    get_controller(controller, condition), server, question=_q(qid), run_id=run_id,
                    retriever=RoutedRetriever(CORPUS, RETRIEVER_ROUTES), dataset="musique"))
    assert all(t.end_reason != "error" for t in trajectories), [t.error for t in trajectories]
    db = tmp_path_factory.mktemp("source") / "source.duckdb"
    ingest_trajectories(db, trajectories)
    with MockLLMServer(_judge_reply) as server:
        for run_id in RUNS:
            config = ModelConfig(name="mock-judge", base_url=server.base_url, api_key="k", max_retries=0,
                                 timeout_s=10.0, temperature=0.0, prices={"mock-judge": (0.0, 0.0)})
            judge_run(db, run_id, llm_judge=LLMJudge(ChatModel(config)))
    with open_readonly(db) as con:
        records = {run_id: list(exported_trajectories(con, run_id)) for run_id in RUNS}
    return db, records


def test_the_fixture_covers_every_controller_and_the_kinds_that_matter(source):
    _, records = source
    controllers = {r.trajectory.run.controller for rs in records.values() for r in rs}
    assert controllers == set(CONTROLLERS)
    kinds = {step_kind(s) for rs in records.values() for r in rs for s in r.trajectory.steps}
    assert {"search", "keyword_search", "semantic_search", "read", "final", "gate_rejection",
            "context_injection", "register_update"} <= kinds
    labels = [r.labels for rs in records.values() for r in rs]
    assert any(lab.get("correct") is True for lab in labels) and any(lab.get("correct") is False for lab in labels)
    assert any(lab.get("read_gate.label.regex") for lab in labels)
    assert all({j.judge for j in r.trajectory.judgments} == {"em", "f1", "contain", "llm"}
               for rs in records.values() for r in rs)


def _export(db, run_id, fmt, out):
    result = CliRunner().invoke(cli, ["export-traces", run_id, "--db", str(db), "--format", fmt, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _ingest(path, db, fmt, run_id):
    result = CliRunner().invoke(cli, ["ingest", str(path), "--db", str(db), "--format",
                                      EXPORT_FORMATS[fmt].import_format, "--run-id", run_id])
    assert result.exit_code == 0, result.output


def _comparable(trajectory):
    """Every canonical field but those an import sets itself (run source, capability profile)."""
    data = msgspec.to_builtins(trajectory)
    data["run"].pop("source")
    data["run"].pop("capabilities")
    return data


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_gives_the_same_records_verdicts_and_labels(source, tmp_path, fmt):
    db, records = source
    back = tmp_path / "back.duckdb"
    for run_id in RUNS:
        path = _export(db, run_id, fmt, tmp_path / f"{run_id}{EXPORT_FORMATS[fmt].suffix}")
        _ingest(path, back, fmt, run_id)
        judge_run(back, run_id)  # entity coverage and answer checks, which the labels need; no LLM judge
    with open_readonly(back) as con:
        for exported in records.values():
            for record in exported:
                t = record.trajectory
                got = read_trajectory(con, t.trajectory_id)
                assert got is not None, t.trajectory_id
                assert got.run.source == f"import:{EXPORT_FORMATS[fmt].import_format}"
                assert _comparable(got) == _comparable(t)
                assert trajectory_labels(con, t.trajectory_id) == record.labels


def _strip(fmt, path):
    """The file as a peer that keeps only the format's conventions would pass it on."""
    text = path.read_text(encoding="utf-8")
    if fmt == "inspect":
        log = json.loads(text)
        for sample in log["samples"]:
            del sample["metadata"][EXPORT_KEY]
        path.write_text(json.dumps(log), encoding="utf-8")
        return
    lines = []
    for line in text.splitlines():
        doc = json.loads(line)
        if fmt == "atif":
            del doc["extra"][EXPORT_KEY]
        else:
            for rs in doc["resourceSpans"]:
                for ss in rs["scopeSpans"]:
                    for span in ss["spans"]:
                        span["attributes"] = [a for a in span["attributes"] if a["key"] != EXPORT_KEY]
        lines.append(json.dumps(doc))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _tool_calls(trajectory, documents: bool):
    """The tool calls with what the conventions carry: candidates only where spans hold documents."""
    out = []
    for s in trajectory.steps:
        if s.tool_name is None or step_kind(s) not in ("search", "keyword_search", "semantic_search", "read",
                                                        "final", "tool"):
            continue
        item = {"kind": step_kind(s), "tool_name": s.tool_name, "args": s.args, "observation": s.observation}
        if documents and hasattr(s, "candidates"):
            item["candidates"] = [(c.chunk_id, c.score, c.snippet) for c in s.candidates]
        if step_kind(s) == "read":
            item["read"] = [p.chunk_id for p in s.passages]
        out.append(item)
    return out


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_conventions_alone_carry_tool_calls_ids_and_gold(source, tmp_path, fmt):
    db, records = source
    back = tmp_path / "peer.duckdb"
    for run_id in RUNS:
        path = _export(db, run_id, fmt, tmp_path / f"{run_id}{EXPORT_FORMATS[fmt].suffix}")
        _strip(fmt, path)
        assert f"\"{EXPORT_KEY}\"" not in path.read_text(encoding="utf-8")
        _ingest(path, back, fmt, run_id)
    with open_readonly(back) as con:
        for exported in records.values():
            for record in exported:
                t = record.trajectory
                got = read_trajectory(con, t.trajectory_id)
                assert got is not None, t.trajectory_id
                assert (got.question.question_id, got.question.text, got.question.gold_answer) == \
                    (t.question.question_id, t.question.text, t.question.gold_answer)
                assert got.final_answer == t.final_answer
                # ATIF and Inspect have no place for search results but the observation text
                documents = fmt in ("openinference", "otel-genai")
                assert _tool_calls(got, documents) == _tool_calls(t, documents)
                if fmt == "inspect":  # verdicts travel as Inspect scores (the newest per judge)
                    newest = {j.judge: j.score for j in t.judgments}
                    assert {j.judge: j.score for j in got.judgments} == newest


def _otlp_spans(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                yield from ss["spans"]


def _allowed_openinference_key(key: str) -> bool:
    flat = {v for k, v in vars(SpanAttributes).items() if k.isupper()}
    if key in flat or key == EXPORT_KEY:
        return True
    message = {v for k, v in vars(MessageAttributes).items() if k.isupper()}
    call = {v for k, v in vars(ToolCallAttributes).items() if k.isupper()}
    document = {v for k, v in vars(DocumentAttributes).items() if k.isupper()}
    for prefix in (SpanAttributes.LLM_INPUT_MESSAGES, SpanAttributes.LLM_OUTPUT_MESSAGES):
        m = re.fullmatch(re.escape(prefix) + r"\.\d+\.(.+)", key)
        if m and (m[1] in message or any(
                re.fullmatch(re.escape(MessageAttributes.MESSAGE_TOOL_CALLS) + r"\.\d+\." + re.escape(c), m[1])
                for c in call)):
            return True
    m = re.fullmatch(re.escape(SpanAttributes.RETRIEVAL_DOCUMENTS) + r"\.\d+\.(.+)", key)
    return bool(m and m[1] in document)


def test_openinference_attributes_are_the_packages_constants(source, tmp_path):
    db, records = source
    path = _export(db, "rg_base", "openinference", tmp_path / "rg.jsonl")
    spans = list(_otlp_spans(path))
    kinds = {k.value for k in OpenInferenceSpanKindValues}
    mimes = {m.value for m in OpenInferenceMimeTypeValues}
    seen_kinds = set()
    for span in spans:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        assert all(_allowed_openinference_key(k) for k in attrs), sorted(k for k in attrs
                                                                         if not _allowed_openinference_key(k))
        kind = attrs[SpanAttributes.OPENINFERENCE_SPAN_KIND]["stringValue"]
        assert kind in kinds
        seen_kinds.add(kind)
        for key in (SpanAttributes.INPUT_MIME_TYPE, SpanAttributes.OUTPUT_MIME_TYPE):
            if key in attrs:
                assert attrs[key]["stringValue"] in mimes
    assert {OpenInferenceSpanKindValues.AGENT.value, OpenInferenceSpanKindValues.LLM.value,
            OpenInferenceSpanKindValues.TOOL.value, OpenInferenceSpanKindValues.RETRIEVER.value} <= seen_kinds
    # The root of each trace names the question, its gold and trajscope's verdicts and labels in `metadata`.
    roots = [s for s in spans if "parentSpanId" not in s]
    assert len(roots) == len(records["rg_base"])
    by_qid = {r.trajectory.question.question_id: r for r in records["rg_base"]}
    for root in roots:
        attrs = {a["key"]: a["value"] for a in root["attributes"]}
        meta = json.loads(attrs[SpanAttributes.METADATA]["stringValue"])
        record = by_qid[meta["question_id"]]
        assert meta["gold_answer"] == record.trajectory.question.gold_answer == "Helen Pitts Douglass"
        assert meta["labels"] == record.labels
        assert meta["judgments"]["llm:mock-judge"] == next(j.score for j in record.trajectory.judgments
                                                           if j.judge == "llm")
    # A search's candidates are the documents of the retriever span under its tool span.
    searched = next(r for r in records["rg_base"] if r.trajectory.question.question_id == "b_read").trajectory
    wanted = [[c.chunk_id for c in s.candidates] for s in searched.steps if step_kind(s) == "search"]
    docs = []
    for span in spans:
        attrs = {a["key"]: a["value"] for a in span["attributes"]}
        if attrs[SpanAttributes.OPENINFERENCE_SPAN_KIND]["stringValue"] == "RETRIEVER" and \
                span["name"].endswith(".retrieve") and span["traceId"] == roots[1]["traceId"]:
            n = len({k.split(".")[2] for k in attrs if k.startswith(SpanAttributes.RETRIEVAL_DOCUMENTS)})
            docs.append([attrs[f"{SpanAttributes.RETRIEVAL_DOCUMENTS}.{i}.{DocumentAttributes.DOCUMENT_ID}"]
                         ["stringValue"] for i in range(n)])
    assert docs == wanted


def test_inspect_scorers_are_the_importers_table_read_backwards():
    assert {SCORER_JUDGES[scorer] for scorer in JUDGE_SCORERS.values()} == set(JUDGE_SCORERS)
    assert all(SCORER_JUDGES[JUDGE_SCORERS[judge]] == judge for judge in ("em", "f1", "contain", "llm"))


def test_a_damaged_attachment_is_an_error_naming_its_field(source, tmp_path):
    db, _ = source
    path = _export(db, "direct", "atif", tmp_path / "direct.jsonl")
    doc = json.loads(path.read_text(encoding="utf-8"))
    attached = json.loads(doc["extra"][EXPORT_KEY])
    attached["trajectory"]["steps"][0]["kind"] = "teleport"
    doc["extra"][EXPORT_KEY] = json.dumps(attached)
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    from trajscope.ingest.importers import import_file

    with pytest.raises(RecordError) as caught:
        list(import_file(path, format="atif"))
    assert caught.value.line == 1 and caught.value.field.startswith(f"extra.{EXPORT_KEY}.trajectory.steps")


def test_an_unknown_run_is_refused_naming_the_runs_there(source, tmp_path):
    db, _ = source
    out = tmp_path / "none.jsonl"
    result = CliRunner().invoke(cli, ["export-traces", "nope", "--db", str(db), "--format", "atif", "--out", str(out)])
    assert result.exit_code != 0 and "nope" in result.output and "rg_base" in result.output
    assert not out.exists()


@pytest.mark.parametrize("fmt", FORMATS)
def test_step_source_refs_and_human_labels_travel_too(tmp_path, fmt):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "app"))
    from app_fixture_records import app_trajectories

    from trajscope.format import HumanLabel

    t = next(t for t in app_trajectories() if t.trajectory_id == "run_base::q3")
    steps = [msgspec.structs.replace(s, source_ref=f"span-{i}") for i, s in enumerate(t.steps)]
    t = msgspec.structs.replace(t, steps=steps, human_labels=[
        HumanLabel(label="error", source_ref="span-1", step_index=1, category="reasoning", annotator="a1")])
    db, back = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    ingest_trajectories(db, [t])
    path = _export(db, "run_base", fmt, tmp_path / f"x{EXPORT_FORMATS[fmt].suffix}")
    _ingest(path, back, fmt, "run_base")
    with open_readonly(db) as a, open_readonly(back) as b:
        before, after = read_trajectory(a, t.trajectory_id), read_trajectory(b, t.trajectory_id)
    assert [s.source_ref for s in after.steps] == [f"span-{i}" for i in range(len(steps))]
    assert after.human_labels == before.human_labels and len(after.human_labels) == 1
