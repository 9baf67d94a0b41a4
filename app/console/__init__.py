"""The SQL console's and the Export filter's runners over the warehouse's one read path (warehouse.read)."""
from trajscope.warehouse.read import (
    FILE_FUNCTIONS,
    ForbiddenStatement,
    LimitExceeded,
    QueryTimeout,
    ReadRefused,
    check_statement,
)

from ._runner import ConsoleResult, export_query_sql, run_console_query, run_export_query

__all__ = [
    "FILE_FUNCTIONS", "ConsoleResult", "ForbiddenStatement", "LimitExceeded", "QueryTimeout", "ReadRefused",
    "check_statement", "export_query_sql", "run_console_query", "run_export_query",
]
