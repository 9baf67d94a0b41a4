"""The pages' own queries (app.access.run_queries, what every page's fetch calls, and read_connection, the
Compare / Report / Audit / Failure-plane pages' connection) cannot pass the byte cap or the time limit."""
from __future__ import annotations

import pytest
from security_limits import SMALL, fingerprint

from trajscope.app.access import AppConfig, read_connection, run_queries
from trajscope.app.access._config import PAGE_ROW_CAP
from trajscope.app.queries import run_trajectories_sql
from trajscope.warehouse import QueryTimeout, ResultTooLarge

# The Export page's own query over the widest view.
EXPORT_PAGE_SQL = "SELECT * FROM trajectory_facts LIMIT 100000"
SLOW_SQL = "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range * b.range = -1"


def test_a_page_query_past_the_byte_cap_is_refused(warehouse_db, baseline):
    tiny = SMALL.with_overrides(max_result_mb=0.0005)  # 524 bytes: the security warehouse is small
    whole = run_queries(warehouse_db, {"export": EXPORT_PAGE_SQL}, limits=SMALL)["export"]
    assert whole.df.estimated_size() > 2 * tiny.max_bytes  # the same query fits the larger cap...
    with pytest.raises(ResultTooLarge, match="size limit of 0.0005 MB"):  # ...and is refused under the small one
        run_queries(warehouse_db, {"runs": run_trajectories_sql("r1"), "export": EXPORT_PAGE_SQL}, limits=tiny)
    assert fingerprint(warehouse_db) == baseline


def test_a_page_query_past_the_time_limit_is_interrupted(warehouse_db, baseline):
    with pytest.raises(QueryTimeout, match="time limit of 1 s"):
        run_queries(warehouse_db, {"slow": SLOW_SQL}, limits=SMALL.with_overrides(timeout_s=1.0))
    assert fingerprint(warehouse_db) == baseline


def test_a_page_connection_is_interrupted_at_its_time_limit(warehouse_db, baseline):
    # Compare, Report, Audit and the Failure plane run fixed warehouse functions on read_connection.
    with pytest.raises(QueryTimeout), read_connection(warehouse_db, limits=SMALL.with_overrides(timeout_s=1.0)) as con:
        con.execute(SLOW_SQL).fetchall()
    assert fingerprint(warehouse_db) == baseline


def test_page_limits_are_finite_and_documented(tmp_path):
    limits = AppConfig(db_path=tmp_path / "w.duckdb").page_limits()
    assert (limits.timeout_s, limits.max_rows, limits.max_result_mb) == (30.0, PAGE_ROW_CAP, 256.0)
    assert (limits.memory_limit_mb, limits.max_temp_mb) == (1024, 1024)


def test_a_page_query_past_the_row_cap_is_cut_and_says_so(warehouse_db):
    result = run_queries(warehouse_db, {"many": "SELECT range AS i FROM range(120)"}, limits=SMALL)["many"]
    assert len(result.df) == SMALL.max_rows and result.truncated
    fits = run_queries(warehouse_db, {"few": "SELECT range AS i FROM range(50)"}, limits=SMALL)["few"]
    assert len(fits.df) == 50 and not fits.truncated
