"""Checking an uploaded log before anything is written: format, validation report, preview; then ingest."""
from ._check import CANONICAL, UploadCheck, check_upload, detect_upload_format, ingest_upload, save_upload

__all__ = ["CANONICAL", "UploadCheck", "check_upload", "detect_upload_format", "ingest_upload", "save_upload"]
