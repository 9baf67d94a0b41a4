"""The DuckDB warehouse: schema and migrations, bulk loading, named SQL views and typed queries."""
from ._connection import (
    DEFAULT_DB,
    SANDBOX_CONFIG,
    WarehouseBusy,
    WarehouseMissing,
    default_db_path,
    open_readonly,
    open_warehouse,
    transaction,
)
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
from ._schema import ViewDef, latest_schema_version, load_views, migrate, schema_version, upgrade_if_warehouse

__all__ = [
    "DEFAULT_DB", "GoldConflict", "IngestReport", "LogSliceLoad", "ON_DUPLICATE_CHOICES", "SANDBOX_CONFIG", "ViewDef", "WarehouseBusy", "WarehouseMissing",
    "default_db_path", "ingest_log_slice", "ingest_paths", "ingest_trajectories", "latest_schema_version",
    "load_chunks", "load_questions", "load_views", "migrate", "open_readonly", "open_warehouse",
    "read_trajectory", "remove_stale_batch_dirs", "schema_version", "transaction", "upgrade_if_warehouse", "validate_log",
]
