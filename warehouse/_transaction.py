"""BEGIN ... COMMIT around one unit of work, shared by the schema migrations and the loaders."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN ... COMMIT, rolled back on any exception (KeyboardInterrupt included)."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # none active: a failed COMMIT inside (a per-batch load's) ended it; name the first error
            pass
        raise
    con.execute("COMMIT")


__all__ = ["transaction"]
