"""The DuckDB warehouse: schema and migrations, bulk loading, named SQL views and typed queries."""
from trajscope.runtime import NoRoomForIngest

from ._connection import (
    DEFAULT_DB,
    SANDBOX_CONFIG,
    WarehouseBusy,
    WarehouseFileError,
    WarehouseMissing,
    check_schema,
    default_db_path,
    open_readonly,
    open_warehouse,
    transaction,
)
from ._file_check import BAD_WAREHOUSE_EXIT, Sha256Child, check_warehouse_file, file_sha256
from ._loader import (
    ON_DUPLICATE_CHOICES,
    GoldConflict,
    IngestReport,
    LogSliceLoad,
    ingest_log_slice,
    ingest_paths,
    ingest_trajectories,
    load_chunks,
    load_questions,
    remove_stale_batch_dirs,
    validate_log,
)
from ._reconstruct import read_trajectory
from ._schema import ViewDef, latest_schema_version, load_views, migrate, schema_version
from .read import (
    CONSOLE_LIMITS,
    DEFAULT_LIMITS,
    PAGE_LIMITS,
    ForbiddenStatement,
    LimitExceeded,
    NotAWarehouse,
    QueryTimeout,
    Reader,
    ReadLimits,
    ReadRefused,
    ReadResult,
    ResultTooLarge,
    check_statement,
    open_read,
    run_read_query,
    upgrade_if_warehouse,
)

__all__ = [
    "BAD_WAREHOUSE_EXIT", "WarehouseFileError", "check_schema", "check_warehouse_file", "file_sha256", "CONSOLE_LIMITS",
    "DEFAULT_DB", "DEFAULT_LIMITS", "PAGE_LIMITS", "Reader", "ForbiddenStatement",
    "GoldConflict", "IngestReport", "LimitExceeded",
    "LogSliceLoad", "NoRoomForIngest", "NotAWarehouse", "Sha256Child",
    "ON_DUPLICATE_CHOICES", "QueryTimeout", "ReadLimits",
    "ReadRefused",
    "ReadResult", "ResultTooLarge", "SANDBOX_CONFIG", "ViewDef", "WarehouseBusy", "WarehouseMissing",
    "check_statement", "default_db_path", "ingest_log_slice", "ingest_paths", "ingest_trajectories",
    "latest_schema_version", "open_read", "run_read_query",
    "load_chunks", "load_questions", "load_views", "migrate", "open_readonly", "open_warehouse",
    "read_trajectory", "remove_stale_batch_dirs", "schema_version",
    "transaction", "upgrade_if_warehouse", "validate_log",
]
