"""The SQL console's safety: a statement check before running, then a time limit and a row cap."""
from ._guard import FILE_FUNCTIONS, ForbiddenStatement, check_statement
from ._runner import ConsoleResult, QueryTimeout, run_console_query

__all__ = [
    "FILE_FUNCTIONS", "ConsoleResult", "ForbiddenStatement", "QueryTimeout", "check_statement",
    "run_console_query",
]
