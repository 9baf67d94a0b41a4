"""The one read path: a warehouse brought up to date and opened read-only inside the sandbox, and one
query function bounded in time, rows, result bytes, memory and temp disk (defaults in ReadLimits)."""
from ._errors import ForbiddenStatement, LimitExceeded, NotAWarehouse, QueryTimeout, ReadRefused, ResultTooLarge
from ._fetch import Fetched, fetch_bounded, time_limit
from ._limits import DEFAULT_LIMITS, ReadLimits
from ._open import write_lock
from ._query import ReadResult, run_read_query, to_polars
from ._session import open_read
from ._statement import ALLOWED_TABLE_FUNCTIONS, FILE_FUNCTIONS, MAX_SQL_CHARS, check_statement, known_relations
from ._tempdir import sweep_stale
from ._upgrade import upgrade_if_warehouse

__all__ = [
    "ALLOWED_TABLE_FUNCTIONS", "DEFAULT_LIMITS", "FILE_FUNCTIONS", "MAX_SQL_CHARS", "Fetched", "ForbiddenStatement",
    "LimitExceeded", "NotAWarehouse", "QueryTimeout", "ReadLimits", "ReadRefused", "ReadResult", "ResultTooLarge",
    "check_statement", "fetch_bounded", "known_relations", "open_read", "run_read_query", "sweep_stale",
    "time_limit", "to_polars", "upgrade_if_warehouse", "write_lock",
]
