"""`trajscope bundle`: one self-contained HTML file per finding, from the dashboard fixture's runs (hand-worked
numbers in tests/fixtures/app/app_fixture_records.py); the browser check is tests/e2e/test_bundle_browser.py."""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402

from trajscope.cli import main as cli  # noqa: E402
from trajscope.warehouse import ingest_trajectories  # noqa: E402


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("bundle") / "wh.duckdb"
    ingest_trajectories(path, app_trajectories())
    return path


def manifest_of(html: str) -> dict:
    """The bundle's own list of what it shows."""
    data = re.search(r'<script type="application/json" id="bundle-manifest">(.*?)</script>', html, re.S)[1]
    return json.loads(data.replace("<\\/", "</"))


def _bundle(db, out, *args):
    result = CliRunner().invoke(cli, ["bundle", "--db", str(db), *args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_runs_bundle_names_its_tables_figures_replays_and_the_warehouse(db, tmp_path):
    html = _bundle(db, tmp_path / "f.html", "--runs", "run_base", "run_gate")
    m = manifest_of(html)
    assert m["warehouse_sha256"] == hashlib.sha256(db.read_bytes()).hexdigest()
    assert m["warehouse_sha256"] in html
    assert [t["title"] for t in m["tables"]] == ["Runs", "Failure plane", "Trajectories"]
    assert [t["rows"] for t in m["tables"]] == [2, 2, 8]  # two runs of four questions each
    assert [f["title"] for f in m["figures"]] == ["Accuracy per run", "Failure plane"]
    by_id = {t.trajectory_id: t for t in app_trajectories() if t.run.run_id in ("run_base", "run_gate")}
    assert {r["trajectory_id"] for r in m["replays"]} == set(by_id)
    for replay in m["replays"]:  # one anchor per logged step, each present in the document
        assert len(replay["steps"]) == len(by_id[replay["trajectory_id"]].steps)
        assert all(f'id="{anchor}"' in html for anchor in replay["steps"])
    for item in m["tables"] + m["figures"]:
        assert f'id="{item["id"]}"' in html
    assert html.count("<svg") >= 2


def test_nothing_in_a_bundle_can_fetch(db, tmp_path):
    html = _bundle(db, tmp_path / "f.html", "--runs", "run_base", "run_gate")
    assert "default-src 'none'" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", html)
    assert "<script" not in html.replace('<script type="application/json" id="bundle-manifest">', "")
    assert not re.search(r"url\(\s*['\"]?https?:", html)


def test_a_query_bundle_replays_the_trajectories_its_result_names(db, tmp_path):
    sql = "SELECT run_id, question_id, label FROM failure_rg WHERE extractor = 'regex' AND run_id = 'run_base'"
    html = _bundle(db, tmp_path / "q.html", "--query", sql)
    m = manifest_of(html)
    assert m["tables"][0]["sql"].strip() == sql and m["tables"][0]["rows"] == 2  # q2 (discipline), q3 (post read)
    assert [r["trajectory_id"] for r in m["replays"]] == ["run_base::q2", "run_base::q3"]


def test_a_write_or_an_unknown_run_writes_nothing(db, tmp_path):
    out = tmp_path / "no.html"
    for args in (["--query", "DROP TABLE runs"], ["--runs", "run_base", "nope"], []):
        result = CliRunner().invoke(cli, ["bundle", "--db", str(db), *args, "--out", str(out)])
        assert result.exit_code != 0, args
        assert not out.exists()
    from trajscope.warehouse import open_readonly

    with open_readonly(db) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
