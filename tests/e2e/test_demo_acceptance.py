"""Acceptance: `trajscope demo` from empty caches builds what the Overview promises, and every page serves it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from browser_support import PAGES, ROOT, assert_no_exception, headless_chromium, open_page, serve_dashboard, settle

# The build runs the embedded model for real: minutes on 2 idle cores, far more on a loaded machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo exactly as `make demo` builds it (default conditions and sizes), with nothing cached."""
    folder = tmp_path_factory.mktemp("demo")
    env = {**os.environ, "TRAJSCOPE_CACHE": str(folder / "cache")}  # responses, indexes, embeddings
    done = subprocess.run(
        [sys.executable, "-m", "trajscope", "demo", "--no-app", "--db", str(folder / "demo.duckdb"),
         "--out", str(folder / "runs")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    print(done.stdout[-4000:])  # with -s: the build time, run lines and the printed guide
    return folder, done.stdout


def _gate_rejections_in_logs(runs: Path) -> Counter:
    # Counted from the JSONL logs the engine wrote, not from the warehouse the dashboard reads.
    from trajscope.format import GateRejectionStep, iter_trajectories

    counts: Counter = Counter()
    for log in runs.glob("demo-read_gate-*.jsonl"):
        for decoded in iter_trajectories(log):
            t = decoded.trajectory
            counts[t.run.run_id] += sum(isinstance(s, GateRejectionStep) for s in t.steps)
    return counts


def test_the_gate_run_rejects_finals_and_the_guide_says_so(demo):
    folder, printed = demo
    counts = _gate_rejections_in_logs(folder / "runs")
    gate_runs = [run for run in counts if "-read_gate-full-" in run]
    assert len(gate_runs) == 1 and counts[gate_runs[0]] > 0, counts
    assert all(n == 0 for run, n in counts.items() if "-read_gate-baseline-" in run)  # no gate, no rejection
    assert "http://127.0.0.1:8501" in printed
    guide = re.search(r"rejected (\d+) final\(s\) in (\d+) trajectories", printed)
    assert guide and int(guide.group(1)) == counts[gate_runs[0]]
    for item in ("  1. The gate at work", "  2. The failure plane", "  3. McNemar for baseline vs"):
        assert item in printed


def test_the_register_fires_and_vanilla_rag_answers(demo):
    # The other two mechanisms the Overview names, counted from the JSONL logs.
    from trajscope.format import FinalStep, ReadStep, RegisterUpdateStep, iter_trajectories

    folder, _ = demo
    (register_log,) = (folder / "runs").glob("demo-execution_rag-register-*.jsonl")
    register = [d.trajectory for d in iter_trajectories(register_log)]
    assert register and all(any(isinstance(s, RegisterUpdateStep) for s in t.steps) for t in register)
    (vanilla_log,) = (folder / "runs").glob("demo-vanilla_rag-*.jsonl")
    vanilla = [d.trajectory for d in iter_trajectories(vanilla_log)]
    assert vanilla and all(t.final_answer for t in vanilla)  # every question answered
    assert not any(isinstance(s, ReadStep) for t in vanilla for s in t.steps)  # and never a read action
    assert sum(isinstance(s, FinalStep) for t in vanilla for s in t.steps) == len(vanilla)


def _buckets_in_log(log: Path) -> Counter:
    # Recomputed from the audit JSONL the engine wrote (case-insensitive gold in B1 and in each
    # compiled context), not read from the warehouse views that the tables come from.
    import json

    counts: Counter = Counter()
    for line in filter(str.strip, log.read_text().splitlines()):
        record = json.loads(line)
        assert record["error"] is None, record["error"]  # a failed record is not analysable
        gold = record["gold"].strip().lower()
        contexts = {k: (v or "").lower() for k, v in record["contexts"].items()}
        for baseline in ("b2", "b3"):
            counts[f"{int(gold in contexts['b1'])}->{int(gold in contexts[baseline])}"] += 1
    return counts


def test_the_audit_tables_are_not_empty(demo):
    from trajscope.analysis.report import audit_tables, to_frame
    from trajscope.warehouse import open_readonly

    folder, _ = demo
    logs = list((folder / "runs").glob("audit-*.jsonl"))
    assert len(logs) == 1
    counts = _buckets_in_log(logs[0])
    # The demo picks its audit questions so both strata the tables need are filled: 1->1 (remove vs
    # placebo) and 0->0 (insertion).
    assert counts["1->1"] > 0 and counts["0->0"] > 0, counts
    with open_readonly(folder / "demo.duckdb") as con:
        tables = {name: to_frame(t) for name, t in audit_tables(con).items()}
    for name in ("cells", "buckets", "causal", "insertion"):
        assert tables[name].height > 0, name
    buckets = tables["buckets"]
    assert int(buckets["1->1"].sum()) == counts["1->1"] and int(buckets["0->0"].sum()) == counts["0->0"]


def test_every_page_serves_the_demo_from_its_own_url(demo):
    folder, printed = demo
    rejected = re.search(r"rejected \d+ final\(s\) in \d+ trajectories", printed).group(0)
    with serve_dashboard(folder / "demo.duckdb") as url, headless_chromium() as browser:
        for path, heading in PAGES:
            page = open_page(browser, f"{url}/{path}", heading)
            assert_no_exception(page, path or "overview")
            if path == "":
                assert page.get_by_text(rejected).count() == 1
                page.get_by_text(rejected).click()
                page.get_by_role("heading", name="Trajectory replay", exact=True).wait_for(timeout=60_000)
                settle(page)
                assert_no_exception(page, "replay opened from the overview")
                assert page.get_by_text("Rejected answer").count() >= 1
            if path == "audit":
                assert page.get_by_text("No audit records in this warehouse yet").count() == 0
            page.close()
