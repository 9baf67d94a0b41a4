"""Work the dashboard starts in its own process (`trajscope scan`), and the progress file it reports through.

The page launches the CLI as a detached child and returns at once; the child writes a small JSON file
beside the warehouse as it goes, which the page polls. The page never waits on the model.
"""
from ._scan import ScanJob, launch_scan, read_scan_job, scan_command, scan_job_path, scan_running, write_scan_job

__all__ = ["ScanJob", "launch_scan", "read_scan_job", "scan_command", "scan_job_path", "scan_running",
           "write_scan_job"]
