"""A small warehouse every attack runs against, its fingerprint (file hash, row counts), small limits."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "app"))
sys.path.insert(0, str(Path(__file__).parent))

from app_fixture_records import app_trajectories  # noqa: E402
from security_limits import fingerprint  # noqa: E402

from trajscope.warehouse import ingest_trajectories  # noqa: E402


@pytest.fixture(scope="session")
def warehouse_db(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("security") / "wh.duckdb"
    ingest_trajectories(db, app_trajectories())
    from trajscope.warehouse import upgrade_if_warehouse

    upgrade_if_warehouse(db)  # already current: the attacks must not be the first to write it
    return db


@pytest.fixture(scope="session")
def baseline(warehouse_db) -> tuple[str, dict[str, int]]:
    return fingerprint(warehouse_db)


@pytest.fixture(scope="session", autouse=True)
def read_tmp(tmp_path_factory):
    """The read path's temp directories go here, so a test can see that none is left behind."""
    folder = tmp_path_factory.mktemp("read-tmp")
    patch = pytest.MonkeyPatch()
    patch.setenv("TRAJSCOPE_READ_TMP", str(folder))
    yield folder
    patch.undo()
