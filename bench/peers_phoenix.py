"""The Phoenix half of bench/peers.py: the same OpenInference traces in a local Phoenix and in trajscope.

Phoenix's side runs in .venv-peers (bench/peers_phoenix_worker.py): a fresh Phoenix server on sqlite in the work
folder, the traces sent to it over OTLP/HTTP and read back as its span dataframe. trajscope's side ingests Phoenix's
own JSONL export of those spans and answers run_summary.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from peers_measure import measure, start_server, stop_server

WORKER = str(Path(__file__).resolve().parent / "peers_phoenix_worker.py")
SUMMARY_SQL = ("SELECT n_trajectories AS traces, round(mean_searches * n_trajectories) AS search, "
               "round(mean_reads * n_trajectories) AS read, tokens_in, tokens_out, round(em, 6) AS em FROM run_summary")
COMPARED = ("traces", "search", "read", "tokens_in", "tokens_out", "em")
READY_TIMEOUT_S = 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"the Phoenix server exited before it served:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)
    sys.exit(f"the Phoenix server did not serve within {READY_TIMEOUT_S} s:\n{log.read_text()[-4000:]}")


def _trajscope_counts(csv: str) -> dict[str, float]:
    header, row = (line.split(",") for line in csv.strip().splitlines()[:2])
    return {name: float(value) for name, value in zip(header, row, strict=True)}


def run(n: int, work: Path, env: dict[str, str], trajscope: list[str], phoenix_python: str) -> None:
    """Generate n traces, measure Phoenix's load + read and trajscope's ingest + query, print both and the ratio."""
    otlp, jsonl, db, store = work / "peers.otlp", work / "peers_spans.jsonl", work / "peers_spans.duckdb", work / "px"
    db.unlink(missing_ok=True)
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    made = measure([phoenix_python, WORKER, "generate", str(otlp), str(n)], env)
    spans = json.loads(made.stdout)["spans"]
    print(f"openinference-instrumentation-openai over the loopback mock server: {n:,} traces, {spans:,} spans "
          f"in {made.seconds:.1f} s ({otlp.stat().st_size / 1e6:.1f} MB of OTLP requests)")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    server_env = {**env, "PHOENIX_WORKING_DIR": str(store), "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(port),
                  "PHOENIX_GRPC_PORT": str(_free_port()), "PHOENIX_TELEMETRY_ENABLED": "false"}
    log = work / "phoenix_server.log"
    start = time.perf_counter()
    server = start_server([phoenix_python, "-m", "phoenix.server.main", "serve"], server_env, str(log))
    try:
        _wait_ready(url, server, log)
        started = time.perf_counter() - start
        loaded = measure([phoenix_python, WORKER, "load", str(otlp), url, str(spans)], env)
        measure([phoenix_python, WORKER, "export", url, str(jsonl)], env)
    finally:
        server_peak = stop_server(server)
    ingest = measure([*trajscope, "ingest", str(jsonl), "--db", str(db), "--no-progress"], env)
    query = measure([*trajscope, "sql", SUMMARY_SQL, "--db", str(db), "--format", "csv"], env)
    theirs, ours = json.loads(loaded.stdout), _trajscope_counts(query.stdout)
    print(f"Phoenix span dataframe: {theirs['spans']:,} spans; " + ", ".join(f"{k} {theirs[k]:,}" for k in COMPARED))
    print("trajscope run_summary:  " + ", ".join(f"{k} {ours[k]:,.10g}" for k in COMPARED))
    if theirs["spans"] != spans or any(float(theirs[k]) != ours[k] for k in COMPARED):
        sys.exit("Phoenix and trajscope disagree about the traces: the comparison means nothing")
    phoenix = started + loaded.seconds
    both = ingest.seconds + query.seconds
    print(f"{'each in a fresh process (imports included)':<52} {'s':>8} {'peak MB':>9}")
    for label, seconds, peak in (
            ("Phoenix server start on an empty sqlite store", started, None),
            ("Phoenix OTLP load + span dataframe (client)", loaded.seconds, loaded.peak_mb),
            ("Phoenix server (peak over start, load, read, export)", None, server_peak),
            ("trajscope ingest of Phoenix's JSONL export", ingest.seconds, ingest.peak_mb),
            ("trajscope sql run_summary (warehouse built)", query.seconds, query.peak_mb)):
        print(f"{label:<52} {'' if seconds is None else f'{seconds:.2f}':>8} "
              f"{'' if peak is None else f'{peak:.0f}':>9}")
    print(f"  the client: all spans stored {theirs['load_s']:.2f} s after its first request, "
          f"span dataframe {theirs['read_s']:.2f} s")
    print(f"ratio Phoenix (start + load + span dataframe) / (trajscope ingest + query) at {n:,} traces = "
          f"{phoenix / both:.2f}")
    print(f"ratio Phoenix load + span dataframe (server already up) / (trajscope ingest + query) = "
          f"{loaded.seconds / both:.2f}")
