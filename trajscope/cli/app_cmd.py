"""`trajscope app`: serve the Streamlit dashboard on 127.0.0.1 over one warehouse file."""
from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

import click

from trajscope.warehouse import default_db_path, upgrade_if_warehouse

from ._options import LakeLocation

# Seconds Streamlit gets to stop on SIGTERM / Ctrl-C before it is killed (a page may be mid-query).
STOP_GRACE_S = 2.0


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@click.command("app")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Warehouse file (default: $TRAJSCOPE_DB or ./trajscope.duckdb). It may not exist "
                   "yet: the dashboard then explains how to fill it, and its Upload page creates it.")
@click.option("--lake", type=LakeLocation(exists=True), default=None,
              help="Serve this lake (trajscope lake: a folder or an object storage URL) instead of --db: every "
                   "page reads its latest snapshot (runs committed later appear at the next page load) through "
                   "the same views and sandbox; "
                   "the Upload page cannot write to it (use `trajscope ingest --lake`).")
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True,
              help="Port on 127.0.0.1.")
@click.option("--max-upload-mb", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Largest log the Upload page accepts.")
@click.option("--sql-timeout", type=click.FloatRange(0.1, 3600), default=10.0, show_default=True,
              help="Seconds a SQL console query may run before it is interrupted.")
@click.option("--row-cap", type=click.IntRange(1, 10_000_000), default=10_000, show_default=True,
              help="Most rows the SQL console shows and downloads.")
@click.option("--max-result-mb", type=click.FloatRange(0.01, 1_000_000), default=64.0, show_default=True,
              help="Largest SQL console / Export result (Arrow bytes, counted while fetching).")
@click.option("--page-timeout", type=click.FloatRange(0.1, 3600), default=30.0, show_default=True,
              help="Seconds a page's own query may run before it is interrupted.")
@click.option("--memory-limit-mb", type=click.IntRange(16, 1_000_000), default=1024, show_default=True,
              help="DuckDB memory limit of every read; console queries run in a worker bounded by it.")
@click.option("--max-temp-mb", type=click.IntRange(1, 10_000_000), default=1024, show_default=True,
              help="Temp disk a read may spill to.")
def command(db: Path | None, lake: str | None, port: int, max_upload_mb: int, sql_timeout: float, row_cap: int,
            max_result_mb: float, page_timeout: float, memory_limit_mb: int, max_temp_mb: int) -> None:
    """Serve the dashboard on http://127.0.0.1:PORT (read-only over the warehouse; Ctrl-C stops it).

    Pages: Overview, Runs, Failure plane, Breakdowns, Trajectory replay, Compare, Intervention audit,
    Upload, SQL console and Export. Every view keeps its state in the URL, so links can be shared.
    """
    if lake:
        from ._options import lake_db

        db = Path(lake_db(lake, ""))  # built before the server starts; later commits are read by the runs after them
    try:
        db_path = (db or default_db_path()).resolve()
    except (RuntimeError, OSError) as exc:  # a symlink loop (RuntimeError before Python 3.13), a path too long
        raise click.ClickException(f"{db or default_db_path()}: cannot be resolved to a file ({exc})") from None
    if db_path.exists() and db_path.is_dir():
        raise click.ClickException(f"{db_path}: is a directory, not a warehouse file")
    if not _port_free(port):
        raise click.ClickException(f"port {port} on 127.0.0.1 is already in use; pass --port N")
    spec = find_spec("trajscope.app")
    folders = spec.submodule_search_locations if spec is not None else None
    if not folders:
        raise click.ClickException("trajscope.app is not installed beside the command")
    main = Path(folders[0]) / "main.py"
    if not main.is_file():
        raise click.ClickException(f"{main}: the dashboard's entry script is missing from this install")
    env = {
        **os.environ,
        "TRAJSCOPE_DB": str(db_path),
        **({"TRAJSCOPE_APP_LAKE": lake if "://" in lake else str(Path(lake).resolve())} if lake else {}),
        "TRAJSCOPE_APP_MAX_UPLOAD_MB": str(max_upload_mb),
        "TRAJSCOPE_APP_SQL_TIMEOUT_S": str(sql_timeout),
        "TRAJSCOPE_APP_SQL_ROW_CAP": str(row_cap),
        "TRAJSCOPE_APP_SQL_MAX_MB": str(max_result_mb),
        "TRAJSCOPE_APP_PAGE_TIMEOUT_S": str(page_timeout),
        "TRAJSCOPE_APP_MEMORY_MB": str(memory_limit_mb),
        "TRAJSCOPE_APP_TEMP_MB": str(max_temp_mb),
    }
    args = [
        sys.executable, "-m", "streamlit", "run", str(main),
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--server.maxUploadSize", str(max_upload_mb), "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
        "--client.toolbarMode", "minimal",
    ]
    _sweep_leftovers(db_path)
    state = "" if db_path.exists() else " (not created yet)"
    if db_path.exists():
        # The dashboard only reads, so an older warehouse gets its migrations and views here.
        outcome = upgrade_if_warehouse(db_path)
        if outcome == "upgraded":
            state = " (schema brought up to date)"
        elif outcome == "busy":
            click.echo(f"warning: {db_path} is locked by another process; its schema was not checked", err=True)
    click.echo(f"trajscope dashboard on http://127.0.0.1:{port}  —  warehouse {db_path}{state}")
    sys.stdout.flush()
    sys.exit(_serve(args, env))


def _sweep_leftovers(db_path: Path) -> None:
    """What killed servers, queries, ingests and scans left behind: their temp folders, uploads and the
    progress files of ended scans beside the warehouse (each kind named after its process, or its job)."""
    from trajscope.app.jobs import sweep_stale_scans
    from trajscope.app.upload import sweep_stale_uploads
    from trajscope.runtime import sweep_dead_process_dirs
    from trajscope.warehouse import remove_stale_batch_dirs
    from trajscope.warehouse.read import sweep_stale

    from .ingest_cmd import INGEST_TMP_PREFIX

    sweep_stale()
    remove_stale_batch_dirs()
    sweep_dead_process_dirs(Path(tempfile.gettempdir()), INGEST_TMP_PREFIX)
    sweep_stale_uploads()
    sweep_stale_scans(db_path)


def _die_with_parent() -> None:
    # Linux prctl(PR_SET_PDEATHSIG, SIGKILL): the server never outlives `trajscope app`, even if killed.
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _serve(args: list[str], env: dict[str, str]) -> int:
    """Run Streamlit as a child; SIGTERM or Ctrl-C stops it within STOP_GRACE_S, then kills it."""
    server = subprocess.Popen(args, env=env, preexec_fn=_die_with_parent)  # noqa: PLW1509 - single-threaded here
    stopping: list[int] = []

    def stop(signum: int, _frame: object) -> None:
        stopping.append(signum)
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    deadline: float | None = None
    while True:
        try:
            code = server.wait(timeout=0.2)
            return 0 if stopping else code
        except subprocess.TimeoutExpired:
            if not stopping:
                continue
            deadline = deadline or time.monotonic() + STOP_GRACE_S
            if time.monotonic() >= deadline:
                # Streamlit waits for running scripts; a stop must not wait for a query.
                server.kill()
                server.wait()
                return 0
