"""Uploading a log: the same import as `trajscope ingest` (convert once, report, preview), then ingest."""
from ._check import (
    CANONICAL,
    UPLOAD_MAX_AGE_S,
    PreparedUpload,
    UploadRootRefused,
    discard_upload,
    ingest_upload,
    prepare_upload,
    sweep_stale_uploads,
    upload_root,
)

__all__ = ["CANONICAL", "UPLOAD_MAX_AGE_S", "PreparedUpload", "UploadRootRefused", "discard_upload", "ingest_upload",
           "prepare_upload", "sweep_stale_uploads", "upload_root"]
