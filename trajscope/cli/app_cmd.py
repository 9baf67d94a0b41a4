"""`trajscope app`: serve the Streamlit dashboard on 127.0.0.1 over one warehouse file."""
from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import click

from warehouse import default_db_path, upgrade_if_warehouse


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
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True,
              help="Port on 127.0.0.1.")
@click.option("--max-upload-mb", type=click.IntRange(1, 100_000), default=200, show_default=True,
              help="Largest log the Upload page accepts.")
@click.option("--sql-timeout", type=click.FloatRange(0.1, 3600), default=10.0, show_default=True,
              help="Seconds a SQL console query may run before it is interrupted.")
@click.option("--row-cap", type=click.IntRange(1, 10_000_000), default=10_000, show_default=True,
              help="Most rows the SQL console shows and downloads.")
def command(db: Path | None, port: int, max_upload_mb: int, sql_timeout: float, row_cap: int) -> None:
    """Serve the dashboard on http://127.0.0.1:PORT (read-only over the warehouse; Ctrl-C stops it).

    Pages: Runs, Failure plane, Breakdowns, Trajectory replay, Compare, Intervention audit,
    Upload, SQL console and Export. Every view keeps its state in the URL, so links can be shared.
    """
    db_path = (db or default_db_path()).resolve()
    if db_path.exists() and db_path.is_dir():
        raise click.ClickException(f"{db_path}: is a directory, not a warehouse file")
    if not _port_free(port):
        raise click.ClickException(f"port {port} on 127.0.0.1 is already in use; pass --port N")
    main = Path(__file__).resolve().parents[2] / "app" / "main.py"
    if not main.is_file():
        raise click.ClickException(f"{main}: the dashboard's entry script is missing from this install")
    env = {
        **os.environ,
        "TRAJSCOPE_DB": str(db_path),
        "TRAJSCOPE_APP_MAX_UPLOAD_MB": str(max_upload_mb),
        "TRAJSCOPE_APP_SQL_TIMEOUT_S": str(sql_timeout),
        "TRAJSCOPE_APP_SQL_ROW_CAP": str(row_cap),
        # The repo root on the path, so `app` imports the same way as in tests.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(main.parents[1]), os.environ.get("PYTHONPATH")])),
    }
    args = [
        sys.executable, "-m", "streamlit", "run", str(main),
        "--server.address", "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
        "--server.maxUploadSize", str(max_upload_mb), "--server.fileWatcherType", "none",
        "--browser.gatherUsageStats", "false", "--global.developmentMode", "false",
        "--client.toolbarMode", "minimal",
    ]
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
    # Become the server rather than its parent: a signal to `trajscope app` (Ctrl-C, a supervisor's
    # SIGTERM, a test's terminate()) then reaches Streamlit itself and leaves no orphan behind.
    os.execve(sys.executable, args, env)
