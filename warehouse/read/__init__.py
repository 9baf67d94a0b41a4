"""The one read path: a warehouse brought up to date and opened read-only inside the sandbox as a Reader,
whose every query is checked and bounded in time, rows, result bytes, memory and temp disk (defaults in
the one table of _limits.DEFAULTS); and run_read_query, one such query in a memory-bounded worker."""
from ._errors import ForbiddenStatement, LimitExceeded, NotAWarehouse, QueryTimeout, ReadRefused, ResultTooLarge
from ._fetch import Fetched
from ._limits import CONSOLE_LIMITS, DEFAULT_LIMITS, DEFAULTS, PAGE_LIMITS, PROFILES, ReadLimits, profile_limits
from ._open import lake_of, write_lock
from ._query import ReadResult, run_read_query, to_polars
from ._reader import Reader, Rows
from ._session import open_blank, open_read
from ._statement import ALLOWED_TABLE_FUNCTIONS, FILE_FUNCTIONS, MAX_SQL_CHARS, check_statement, known_relations
from ._tempdir import sweep_stale
from ._upgrade import upgrade_if_warehouse

__all__ = [
    "ALLOWED_TABLE_FUNCTIONS", "CONSOLE_LIMITS", "DEFAULTS", "DEFAULT_LIMITS", "FILE_FUNCTIONS", "MAX_SQL_CHARS",
    "PAGE_LIMITS", "PROFILES", "Fetched", "ForbiddenStatement", "LimitExceeded", "NotAWarehouse", "QueryTimeout",
    "ReadLimits", "ReadRefused", "ReadResult", "Reader", "ResultTooLarge", "Rows", "check_statement",
    "known_relations", "lake_of", "open_blank", "open_read", "profile_limits", "run_read_query", "sweep_stale",
    "to_polars", "upgrade_if_warehouse", "write_lock",
]
