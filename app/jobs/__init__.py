"""Work the dashboard starts in its own process (`trajscope scan`), and the progress file it reports through.

The page launches the CLI as a detached child and returns at once; the child writes a small JSON file
beside the warehouse as it goes, which the page polls. The page never waits on the model.
"""
from ._scan import (
    STALE_SCAN_S,
    ScanJob,
    launch_scan,
    read_scan_job,
    remove_scan_files,
    scan_command,
    scan_files,
    scan_job_path,
    scan_running,
    sweep_stale_scans,
    write_scan_job,
)

__all__ = ["STALE_SCAN_S", "ScanJob", "launch_scan", "read_scan_job", "remove_scan_files", "scan_command", "scan_files",
           "scan_job_path", "scan_running", "sweep_stale_scans", "write_scan_job"]
