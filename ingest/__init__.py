"""Reading the world: dataset loaders (`ingest.datasets`), the bundled demo set (`ingest.demo`)
and importers of external trajectory logs (`ingest.importers`). The audit record format lives in `trajscope.format`.
"""
