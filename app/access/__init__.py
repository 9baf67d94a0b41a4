"""How the dashboard reaches the warehouse: its settings, short read-only queries and the upload write."""
from ._config import AppConfig, load_config, served_lake
from ._queries import (
    RELATIONS_SQL,
    QueryResult,
    WarehouseState,
    available_views,
    chartable,
    read_connection,
    run_queries,
    run_query,
    sql_literal,
    warehouse_state,
    write_lock,
)

__all__ = [
    "RELATIONS_SQL", "AppConfig", "QueryResult", "WarehouseState", "available_views", "chartable", "load_config",
    "read_connection", "run_queries", "run_query", "served_lake", "sql_literal", "warehouse_state", "write_lock",
]
