"""Reading the world: dataset loaders (`ingest.datasets`), the bundled demo set (`ingest.demo`),
importers of external trajectory logs (`ingest.importers`) and audit records (`ingest.audit_records`).
"""
