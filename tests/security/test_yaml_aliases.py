"""A 1 KB YAML file with nested anchors (a "billion laughs") as a mapping or tool map: refused in one line
naming the file and the expansion limit, within a memory bound, the warehouse unchanged; modest aliases load."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from security_limits import fingerprint

from bench.process_memory import peak_rss_mb, reset_peak_rss
from trajscope.cli import main
from trajscope.format import RecordError
from trajscope.ingest.importers import load_tool_map
from trajscope.ingest.importers._yaml_nesting import EXPANDED_NODE_LIMIT, check_yaml_nesting

LOG = Path(__file__).parents[1] / "fixtures" / "importers" / "autoact.jsonl"


def _laughs(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for k in range(1, levels):
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 9) + "]")
    lines.append(f"search: *a{levels - 1}")
    return "\n".join(lines) + "\n"


def test_the_expansion_is_counted_not_the_events(tmp_path):
    text = _laughs()
    assert len(text) < 1100  # 9**9 = 387 million strings once expanded
    with pytest.raises(RecordError, match=f"expansion limit of {EXPANDED_NODE_LIMIT:,}") as caught:
        check_yaml_nesting(text, tmp_path / "bomb.yaml")
    assert "bomb.yaml" in str(caught.value)
    check_yaml_nesting("base: &b {search: search}\nother: *b\n", tmp_path / "fine.yaml")  # small aliases pass


@pytest.mark.parametrize("flag", ["--tool-map", "--mapping"])
def test_a_billion_laughs_file_is_one_line_within_a_memory_bound(flag, tmp_path, warehouse_db):
    db = tmp_path / "w.duckdb"
    shutil.copy(warehouse_db, db)
    before = fingerprint(db)
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_laughs())
    rss_before = reset_peak_rss()  # else a suite that peaked higher earlier hides any growth here
    result = CliRunner().invoke(main, ["ingest", str(LOG), flag, str(bomb), "--db", str(db)])
    grown_mb = peak_rss_mb() - rss_before
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(errors) == 1, result.output
    assert "bomb.yaml" in errors[0] and "expansion limit" in errors[0], result.output
    assert grown_mb < 100  # the stated bound; before, 3.5 GB and MemoryError
    assert fingerprint(db) == before


def test_a_tool_map_with_a_modest_alias_still_loads(tmp_path):
    path = tmp_path / "tools.yaml"
    path.write_text("Search: &s search\nLookup: *s\nRetrieve: read\n")
    assert load_tool_map(path) == {"Search": "search", "Lookup": "search", "Retrieve": "read"}
