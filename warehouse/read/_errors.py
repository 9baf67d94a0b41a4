"""What the read path refuses or stops, each a one-line message that names the rule or the limit."""
from __future__ import annotations

from .._file_check import WarehouseFileError


class ReadRefused(ValueError):
    """A read the sandbox did not run or did not finish; the message says why in one line."""


class ForbiddenStatement(ReadRefused):
    """Not a single read-only SELECT over the warehouse (decided by DuckDB's parser)."""


class NotAWarehouse(ReadRefused, WarehouseFileError):
    """The path is not a file DuckDB can open as a warehouse (a directory, device, other format, corrupt)."""


class LimitExceeded(ReadRefused):
    """A query stopped at one of the sandbox's limits; `limit` names the ReadLimits field (or "address_space",
    a query worker's bound); `detail` keeps the first line of the error that stopped it."""

    def __init__(self, message: str, *, limit: str, detail: str = ""):
        super().__init__(message)
        self.limit = limit
        self.detail = detail


class QueryTimeout(LimitExceeded):
    """The query ran past the time limit and was interrupted."""

    def __init__(self, message: str):
        super().__init__(message, limit="timeout_s")


class ResultTooLarge(LimitExceeded):
    """The result passed the byte budget while it was being fetched."""

    def __init__(self, message: str):
        super().__init__(message, limit="max_result_mb")


__all__ = ["ForbiddenStatement", "LimitExceeded", "NotAWarehouse", "QueryTimeout", "ReadRefused", "ResultTooLarge"]
