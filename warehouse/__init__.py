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
    IngestReport,
    ingest_paths,
    ingest_trajectories,
    load_chunks,
    load_questions,
    validate_log,
)
from ._reconstruct import read_trajectory
from ._schema import ViewDef, latest_schema_version, load_views, migrate, schema_version, upgrade_if_warehouse

__all__ = [
    "DEFAULT_DB", "IngestReport", "SANDBOX_CONFIG", "ViewDef", "WarehouseBusy", "WarehouseMissing",
    "default_db_path", "ingest_paths", "ingest_trajectories", "latest_schema_version",
    "load_chunks", "load_questions", "load_views", "migrate", "open_readonly", "open_warehouse",
    "read_trajectory", "schema_version", "transaction", "upgrade_if_warehouse", "validate_log",
]
