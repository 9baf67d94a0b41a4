"""TRAIL's span metrics in `trajscope agreement --human` (location accuracy, category F1, joint accuracy): on a
hand-built trace pair where every label is known, and on the real TRAIL SWE traces with the expected values
recomputed from the raw annotation files (category F1 by scikit-learn's weighted F1)."""
from __future__ import annotations

import csv
import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer

from trajscope.cli import main as cli
from trajscope.ingest.importers import normalise_trail_category

TRAIL = Path("../shared/data/external_logs/trail_swe")
TRACE = Path("tests/fixtures/importers/trail_dir/tr1.json")
SPAN_METRICS = ("location_accuracy", "category_f1", "joint_accuracy")


def _ingest(db: Path, *args: str) -> None:
    result = CliRunner().invoke(cli, ["ingest", *args, "--db", str(db)])
    assert result.exit_code == 0, result.output


def _csv_rows(db: Path, run: str) -> dict[str, dict[str, str]]:
    result = CliRunner().invoke(cli, ["agreement", "--human", run, "--format", "csv", "--db", str(db)])
    assert result.exit_code == 0, result.output
    table = result.stdout.split("\n\n")[0]  # the published-metrics table comes first
    return {row["method"]: row for row in csv.DictReader(io.StringIO(table))}


def _span_values(row: dict[str, str]) -> tuple[float, float, float]:
    return tuple(float(row[m]) for m in SPAN_METRICS)  # type: ignore[return-value]


def _write_labels(path: Path, traces: dict[str, list[tuple[str, str]]]) -> Path:
    """A TRAIL-shaped annotation file: one record per trace, each error a (span id, category)."""
    path.write_text("\n".join(json.dumps({"trace_id": t, "errors": [
        {"location": loc, "category": cat, "impact": "LOW", "description": "", "evidence": ""} for loc, cat in errs]})
        for t, errs in traces.items()) + "\n")
    return path


@pytest.fixture()
def fixture_db(tmp_path) -> Path:
    """Two copies of a three-step trace (steps l1, l2, t2) with known annotations and four predicted label files."""
    logs = tmp_path / "two"
    logs.mkdir()
    shutil.copy(TRACE, logs / "tr1.json")
    doc = json.loads(TRACE.read_text())
    doc["trace_id"] = "tr2"
    (logs / "tr2.json").write_text(json.dumps(doc))
    trace_one = json.loads(TRACE.read_text())["trace_id"]
    reference = {trace_one: [("l1", "Formatting Errors"), ("t2", "Tool-related")], "tr2": [("l2", "Language-only")]}
    db = tmp_path / "w.duckdb"
    _ingest(db, str(logs), "--labels", str(_write_labels(tmp_path / "people.jsonl", reference)))
    methods = {
        "all": reference,
        "wrong_category": {trace_one: [("l1", "Resource Abuse"), ("t2", "Resource Abuse")],
                           "tr2": [("l2", "Goal Deviation")]},
        # a variant spelling of Formatting Errors; nothing named on tr2
        "half": {trace_one: [("l1", "formatting-errors")], "tr2": []},
    }
    for name, labels in methods.items():
        _ingest(db, "--labels", str(_write_labels(tmp_path / f"{name}.jsonl", labels)), "--method", name)
    return db


def test_hand_built_traces_score_as_computed_by_hand(fixture_db):
    rows = _csv_rows(fixture_db, "trail:two")
    assert _span_values(rows["all"]) == pytest.approx((1.0, 1.0, 1.0))
    # Right spans, wrong categories: every location, no pair, no category present.
    assert _span_values(rows["wrong_category"]) == pytest.approx((1.0, 0.0, 0.0))
    # tr1: one of two locations and pairs; tr2: none. Categories: Formatting found, Tool-related and Language-only
    # missed, each of support 1.
    assert _span_values(rows["half"]) == pytest.approx((0.25, 1 / 3, 0.25))
    # Baselines name step 0 (l1) / the last step (t2) with the most common category: a three-way tie of one pair
    # each, alphabetical first Formatting Errors. Formatting: 1 hit, 1 false alarm (F1 2/3), weight 1 of 3.
    assert _span_values(rows["baseline:first_step"]) == pytest.approx((0.25, 2 / 9, 0.25))
    assert _span_values(rows["baseline:final_step"]) == pytest.approx((0.25, 2 / 9, 0.0))
    for row in rows.values():
        for metric in SPAN_METRICS:
            if row[metric]:
                assert float(row[f"{metric}_low"]) <= float(row[metric]) <= float(row[f"{metric}_high"])
    assert all(rows["all"][f"{m}_low"] == "1.0" for m in SPAN_METRICS)


def test_text_output_names_the_deviation_and_why_a_metric_is_empty(fixture_db):
    result = CliRunner().invoke(cli, ["agreement", "--human", "trail:two", "--db", str(fixture_db)])
    assert result.exit_code == 0, result.output
    assert "not TRAIL's released scoring script" in result.output
    assert "category_f1, joint_accuracy, location_accuracy: does not apply: a uniform guess" in result.output


def _walk(span: dict):
    yield span
    for child in span.get("child_spans", []):
        yield from _walk(child)


def _raw_traces() -> list[tuple[list[str], set[tuple[str, str]]]]:
    """Per annotated trace: its steps' span ids (LLM and TOOL spans in time order) and its distinct error pairs."""
    out = []
    for path in sorted((TRAIL / "traces").glob("*.json")):
        doc = json.loads(path.read_text())
        spans = {s["span_id"]: s for root in doc["spans"] for s in _walk(root)}
        steps = sorted((s for s in spans.values() if s["span_attributes"].get("openinference.span.kind")
                        in ("LLM", "TOOL")), key=lambda s: s["timestamp"])
        errors = json.loads((TRAIL / "annotations" / path.name).read_text())["errors"]
        if errors:
            out.append(([s["span_id"] for s in steps],
                        {(e["location"], normalise_trail_category(e["category"])) for e in errors}))
    return out


def _expected(traces, predicted: list[set[tuple[str, str]]]) -> tuple[float, float, float]:
    location, joint = [], []
    for (_, pairs), pred in zip(traces, predicted, strict=True):
        locations = {loc for loc, _ in pairs}
        location.append(len(locations & {loc for loc, _ in pred}) / len(locations))
        joint.append(len(pairs & pred) / len(pairs))
    truth_sets, guess_sets = [{c for _, c in p} for _, p in traces], [{c for _, c in p} for p in predicted]
    binarizer = MultiLabelBinarizer().fit(truth_sets + guess_sets)
    truth, guess = binarizer.transform(truth_sets), binarizer.transform(guess_sets)
    f1 = f1_score(truth, guess, average="weighted", zero_division=0)
    return sum(location) / len(location), f1, sum(joint) / len(joint)


def test_real_trail_traces_against_the_raw_annotations(tmp_path):
    traces = _raw_traces()
    assert len(traces) == 5 and sum(len(p) for _, p in traces) == 37  # 38 errors, one pair annotated twice
    # A method naming every other annotated error of each trace, its category in a variant spelling.
    predicted = {}
    for path in sorted((TRAIL / "traces").glob("*.json")):
        errors = json.loads((TRAIL / "annotations" / path.name).read_text())["errors"]
        predicted[json.loads(path.read_text())["trace_id"]] = [
            (e["location"], e["category"].lower().replace(" ", "-")) for e in errors[::2]]
    db = tmp_path / "w.duckdb"
    _ingest(db, str(TRAIL / "traces"), "--labels", str(TRAIL / "annotations"))
    _ingest(db, "--labels", str(_write_labels(tmp_path / "every_other.jsonl", predicted)), "--method", "every_other")
    rows = _csv_rows(db, "trail:traces")

    ids = [json.loads(p.read_text())["trace_id"] for p in sorted((TRAIL / "traces").glob("*.json"))
           if json.loads((TRAIL / "annotations" / p.name).read_text())["errors"]]
    every_other = [{(loc, normalise_trail_category(c)) for loc, c in predicted[t]} for t in ids]
    assert _span_values(rows["every_other"]) == pytest.approx(_expected(traces, every_other))
    common = Counter(c for _, pairs in traces for _, c in pairs).most_common(1)[0][0]
    first = [{(steps[0], common)} for steps, _ in traces]
    final = [{(steps[-1], common)} for steps, _ in traces]
    assert _span_values(rows["baseline:first_step"]) == pytest.approx(_expected(traces, first))
    assert _span_values(rows["baseline:final_step"]) == pytest.approx(_expected(traces, final))
    assert rows["every_other"]["n"] == "5"
    assert rows["rules"]["location_accuracy"] == ""
