"""trajscope.app.preload imports every module of the racing libraries that a page goes on to import: run in a
fresh interpreter, every page after it imports none of pandas, pyarrow, numpy, narwhals or altair anew."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trajscope.warehouse import ingest_trajectories

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "fixtures" / "app"))

from app_fixture_records import app_trajectories  # noqa: E402

PAGES = sorted(p.stem for p in (ROOT / "app" / "page_scripts").glob("*.py"))
# Libraries with import cycles inside them: a second thread importing one half-way met it half-initialised.
RACING = ("pandas", "pyarrow", "numpy", "narwhals", "altair")

SCRIPT = """
import json, sys
import trajscope.app.preload
from streamlit.testing.v1 import AppTest
racing, pages, folder = json.loads(sys.argv[1])
late = {}
for page in pages:
    before = set(sys.modules)
    AppTest.from_file(f"{folder}/{page}.py", default_timeout=120).run()
    late[page] = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in racing)
print(json.dumps(late))
"""


def test_no_page_imports_a_racing_library_the_preload_left_out(tmp_path, monkeypatch):
    db = tmp_path / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    assert len(PAGES) >= 12
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps([RACING, PAGES, str(ROOT / "app" / "page_scripts")])],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, check=True)
    late = json.loads(done.stdout.strip().splitlines()[-1])
    assert sorted(late) == PAGES
    assert {page: modules for page, modules in late.items() if modules} == {}
