"""Running one checked SELECT within limits: a timer that interrupts it, and a row and byte budget
enforced batch by batch while the Arrow result streams in."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa
from duckdb.sqltypes import DuckDBPyType

from ._display import displayable
from ._errors import LimitExceeded, QueryTimeout, ResultTooLarge
from ._limits import ReadLimits
from ._statement import check_statement, known_relations

_BATCH_ROWS = 1024


@dataclass(frozen=True)
class Fetched:
    """The kept rows as Arrow, whether more rows existed, their size, and the columns shown as text."""

    table: pa.Table
    truncated: bool
    n_bytes: int
    as_text: tuple[str, ...]


def _mb(value: float) -> str:
    return f"{value:g} MB"


def limit_error(exc: BaseException, limits: ReadLimits) -> LimitExceeded | None:
    """The LimitExceeded a DuckDB out-of-memory or out-of-temp-disk error stands for, else None."""
    if not isinstance(exc, (duckdb.OutOfMemoryException, MemoryError)):
        return None
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "max_temp_directory_size" in str(exc):
        return LimitExceeded(
            f"stopped: the query needed more temp disk than the limit of {_mb(limits.max_temp_mb)}",
            limit="max_temp_mb", detail=detail)
    return LimitExceeded(
        f"stopped: the query needed more memory than DuckDB's memory limit of {_mb(limits.memory_limit_mb)}",
        limit="memory_limit_mb", detail=detail,
    )


@contextmanager
def time_limit(con: duckdb.DuckDBPyConnection, seconds: float) -> Iterator[None]:
    """Interrupt whatever con runs once seconds have passed; the interruption becomes QueryTimeout."""
    fired = threading.Event()

    def stop() -> None:
        fired.set()
        con.interrupt()

    # DuckDB has no statement timeout, so a timer interrupts the running query.
    timer = threading.Timer(seconds, stop)
    timer.daemon = True
    started = time.monotonic()
    timer.start()
    try:
        yield
    except (duckdb.Error, OSError) as exc:
        # An interrupt during Arrow streaming surfaces as an OSError from the reader.
        if fired.is_set() or isinstance(exc, duckdb.InterruptException):
            raise QueryTimeout(
                f"stopped: the query ran past the time limit of {seconds:g} s (it stopped at "
                f"{time.monotonic() - started:.1f} s); narrow it (WHERE, LIMIT) or aggregate first"
            ) from None
        raise
    finally:
        timer.cancel()


def _stream(relation: duckdb.DuckDBPyRelation, limits: ReadLimits) -> tuple[pa.Table, bool, int]:
    """relation's rows up to max_rows (and whether more existed) and their Arrow bytes, within the byte budget."""
    budget = limits.max_bytes
    # One row past the cap tells whether the result was cut; LIMIT lets DuckDB stop early.
    reader = relation.limit(limits.max_rows + 1).to_arrow_reader(_BATCH_ROWS)
    schema = reader.schema
    batches: list[pa.RecordBatch] = []
    rows = n_bytes = 0
    truncated = False
    for batch in reader:
        room = limits.max_rows - rows
        if batch.num_rows > room:
            batch, truncated = batch.slice(0, room), True
        n_bytes += batch.nbytes
        if n_bytes > budget:
            reader.close()
            raise ResultTooLarge(
                f"refused: the result passed the size limit of {_mb(limits.max_result_mb)} after "
                f"{rows + batch.num_rows:,} rows; select fewer or narrower columns, or fewer rows"
            )
        batches.append(batch)
        rows += batch.num_rows
        if truncated:
            reader.close()
            break
    return pa.Table.from_batches(batches, schema=schema), truncated, n_bytes


@contextmanager
def _bounded(con: duckdb.DuckDBPyConnection, limits: ReadLimits) -> Iterator[None]:
    """The time limit, and DuckDB's out-of-memory or out-of-temp-disk errors as LimitExceeded."""
    try:
        with time_limit(con, limits.timeout_s):
            yield
    except (duckdb.OutOfMemoryException, MemoryError) as exc:
        raise limit_error(exc, limits) or exc from None
    except OSError as exc:
        # Arrow's conversion reports DuckDB's out-of-memory as an OSError.
        if "out of memory" not in str(exc).lower():
            raise
        raise limit_error(MemoryError(str(exc)), limits) or exc from None


def fetch_bounded(con: duckdb.DuckDBPyConnection, sql: str, limits: ReadLimits, *, params: Any = None,
                  checked: bool = False) -> Fetched:
    """Check sql against con's catalog (unless already checked), run it, keep at most max_rows rows and
    max_result_mb of Arrow bytes, with the columns polars cannot hold as text."""
    statement = sql if checked else check_statement(sql, con=con, catalog=known_relations(con))
    with _bounded(con, limits):
        relation, as_text = displayable(con.sql(statement, params=params))
        table, truncated, n_bytes = _stream(relation, limits)
    return Fetched(table, truncated, n_bytes, tuple(as_text))


def fetch_rows(con: duckdb.DuckDBPyConnection, statement: str, params: Any,
               limits: ReadLimits) -> tuple[pa.Table, list[DuckDBPyType], bool]:
    """A checked statement's rows in DuckDB's own types, up to max_rows, within the time and byte limits;
    with the column types and whether more rows existed."""
    with _bounded(con, limits):
        relation = con.sql(statement, params=params)
        table, truncated, _ = _stream(relation, limits)
    return table, list(relation.types), truncated


__all__ = ["Fetched", "fetch_bounded", "fetch_rows", "limit_error", "time_limit"]
