"""A shared warehouse as Hive-partitioned Parquet: writers add runs without a global lock; readers attach views."""
from ._catalog import catalog_path, lake_catalog, lake_catalog_built
from ._layout import LakeError, LakeTable, check_lake, committed_writers, lake_tables, read_commits
from ._markers import MARKER_LIMIT, Commit
from ._remote import RemoteLake, is_lake_url, lake_location, readable_lake
from ._write import LakeWrite, create_lake, export_lake, ingest_into_lake, write_warehouse

__all__ = ["MARKER_LIMIT", "Commit", "LakeError", "LakeTable", "LakeWrite", "RemoteLake", "catalog_path", "check_lake",
           "committed_writers", "create_lake", "export_lake", "ingest_into_lake", "is_lake_url", "lake_catalog",
           "lake_catalog_built", "lake_location", "lake_tables", "read_commits", "readable_lake", "write_warehouse"]
