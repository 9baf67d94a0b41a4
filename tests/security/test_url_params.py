"""Page URL parameters are validated: a bad value is named in a warning and a default used, never a
traceback; the Export page's `?where=` filter from a link runs only when the user presses Run.

The issue's cases: `/export?limit=abc`, `limit=0`, `/compare?metric=bogus`,
`/failure_plane?extractor=bogus`, `/breakdowns?taxonomy=bogus` ended in tracebacks, and the Export
page ran a link's `?where=` SQL as soon as the link opened.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).parents[2]

BAD = [
    ("export", {"limit": "abc"}, "limit=abc"),
    ("export", {"limit": "0"}, "limit=0"),
    ("export", {"limit": "99999999999999999999"}, "limit=99999999999999999999"),
    ("compare", {"metric": "bogus"}, "metric=bogus"),
    ("compare", {"strata": "bogus"}, "strata=bogus"),
    ("failure_plane", {"extractor": "bogus"}, "extractor=bogus"),
    ("breakdowns", {"taxonomy": "bogus"}, "taxonomy=bogus"),
    ("report", {"paper": "bogus"}, "paper=bogus"),
]


def open_page(db: Path, script: str, monkeypatch, **query: str) -> AppTest:
    monkeypatch.setenv("TRAJSCOPE_DB", str(db))
    at = AppTest.from_file(str(ROOT / "app" / "page_scripts" / f"{script}.py"), default_timeout=60)
    at.query_params.update(query)
    return at.run()


@pytest.mark.parametrize("script, query, named", BAD, ids=[f"{s}?{n}" for s, _, n in BAD])
def test_a_bad_url_parameter_is_a_warning_not_a_traceback(script, query, named, warehouse_db, monkeypatch):
    at = open_page(warehouse_db, script, monkeypatch, **query)
    assert not at.exception, [e.message for e in at.exception]
    warnings = [w.value for w in at.warning if "URL parameter" in w.value]
    assert len(warnings) == 1 and f"`{named}` ignored" in warnings[0], [w.value for w in at.warning]


def test_a_linked_export_filter_waits_for_run(warehouse_db, monkeypatch):
    at = open_page(warehouse_db, "export", monkeypatch, source="runs", where="run_id = 'run_gate'")
    assert not at.exception and not at.dataframe  # nothing ran on opening the link
    assert any("Run filter" in i.value for i in at.info)
    at.button(key="export-run").click().run()
    assert not at.exception
    assert at.dataframe[0].value["run_id"].tolist() == ["run_gate"]
