"""A shared warehouse as Hive-partitioned Parquet: writers add runs without a global lock; readers attach views."""
from ._catalog import catalog_path, lake_catalog, lake_catalog_built
from ._layout import LakeError, LakeTable, check_lake, committed_writers, lake_tables
from ._write import LakeWrite, create_lake, export_lake, ingest_into_lake, write_warehouse

__all__ = ["LakeError", "LakeTable", "LakeWrite", "catalog_path", "check_lake", "committed_writers", "create_lake",
           "export_lake", "ingest_into_lake", "lake_catalog", "lake_catalog_built", "lake_tables", "write_warehouse"]
