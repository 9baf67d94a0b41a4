"""Code, SQL, tests and documents speak of the code, not of its history: no issue, session or "before:" markers.

The dated record of measurements is BENCHMARKS.md's history section, and the history of the code is git's."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Folders of ours with code, SQL, tests or documents, and the project's files at the root.
FOLDERS = ("app", "engine", "ingest", "warehouse", "trajscope", "tests", "bench", "docs")
ROOT_FILES = ("README.md", "BENCHMARKS.md", "Makefile", "pyproject.toml", "setup.py")
SUFFIXES = frozenset({".py", ".sql", ".md", ".toml", ".yaml", ".yml", ".txt", ".cfg"})
# Files not scanned, and why.
EXEMPT = {"tests/test_no_history_markers.py": "the markers it injects to test the scan"}
# Where BENCHMARKS.md's dated record starts: everything from this heading on is history by design.
HISTORY_HEADING = "## Dated history"
MARKER = re.compile(r"\((?:issues?|sessions?)\s+\d[^)]*\)|\b(?:issues?|sessions?)\s+#?\d+\b|\(before:|^\W*before:",
                    re.IGNORECASE | re.MULTILINE)


def _texts(root: Path) -> dict[str, str]:
    files = [root / name for name in ROOT_FILES if (root / name).is_file()]
    files += [p for folder in FOLDERS if (root / folder).is_dir() for p in sorted((root / folder).rglob("*"))
              if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8", errors="replace") for p in files
             if str(p.relative_to(root)) not in EXEMPT}
    if "BENCHMARKS.md" in texts:
        texts["BENCHMARKS.md"] = texts["BENCHMARKS.md"].partition(HISTORY_HEADING)[0]
    return texts


def history_markers(root: Path) -> list[str]:
    """Each marker as 'file:line: the marker'."""
    return [f"{path}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0).strip()}"
            for path, text in _texts(root).items() for m in MARKER.finditer(text)]


def test_no_history_marker_in_the_tree():
    found = history_markers(ROOT)
    assert not found, "say what the code does, not when or why it changed:\n" + "\n".join(found)


def test_benchmarks_keeps_its_dated_history_below_the_current_figures():
    text = (ROOT / "BENCHMARKS.md").read_text(encoding="utf-8")
    current, _, history = text.partition(HISTORY_HEADING)
    assert "## Current figures" in current and "| commit |" in current
    assert MARKER.search(history), "the dated history lies below the heading the scan stops at"


def test_each_marker_form_is_caught(tmp_path):
    # The markers are assembled here so that this file holds none of the words it exists to forbid.
    session, issue = "sess" + "ion", "iss" + "ue"
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "x.py").write_text(f"x = 1  # fixed in {session} 17\ny = 2  # ({issue} 21)\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(f"Fast now (before: 3 s).\n{issue.title()}s 14 and 16 asked for it.\n")
    (tmp_path / "warehouse").mkdir()
    (tmp_path / "warehouse" / "v.sql").write_text("-- Before: any end without a read\nSELECT 1;\n")
    history = f"### {session.title()} 3 ({issue} 2)\n"
    (tmp_path / "BENCHMARKS.md").write_text(f"# B\n\n| a |\n\n## Dated history\n\n{history}")
    assert sorted(history_markers(tmp_path)) == [
        "docs/a.md:1: (before:", f"docs/a.md:2: {issue.title()}s 14", f"engine/x.py:1: {session} 17",
        f"engine/x.py:2: ({issue} 21)", "warehouse/v.sql:1: -- Before:"]
