"""Choosing the query encoder: the cached ONNX export of the model when possible, else torch."""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ._cache import slug, write_entry
from ._onnx_encoder import META_FILE, ONNX_FORMAT_VERSION, OnnxEncoder
from ._onnx_export import UnsupportedModel, export_onnx_encoder

log = logging.getLogger(__name__)

QueryBackend = Literal["auto", "onnx", "torch"]
QUERY_BACKENDS: tuple[str, ...] = ("auto", "onnx", "torch")
# Two intra-op threads encode a query faster than one on an idle 2-core machine (bench/retrieval_2wiki.py); under
# load one is faster, so the engine asks query_threads_for_load instead (bench/retrieval_load.py).
DEFAULT_QUERY_THREADS = 2
BACKEND_ENV, THREADS_ENV = "TRAJSCOPE_QUERY_BACKEND", "TRAJSCOPE_QUERY_THREADS"


def query_backend_setting(backend: str | None = None) -> str:
    """backend, else $TRAJSCOPE_QUERY_BACKEND, else "auto"; ValueError for an unknown name."""
    chosen = backend or os.environ.get(BACKEND_ENV) or "auto"
    if chosen not in QUERY_BACKENDS:
        raise ValueError(f"unknown query encoder backend {chosen!r}; choose one of {', '.join(QUERY_BACKENDS)}")
    return chosen


def query_threads_setting(threads: int | None = None) -> int:
    """threads, else $TRAJSCOPE_QUERY_THREADS, else DEFAULT_QUERY_THREADS."""
    if threads is None:
        threads = int(os.environ.get(THREADS_ENV) or DEFAULT_QUERY_THREADS)
    if threads < 1:
        raise ValueError(f"query encoder threads must be at least 1, got {threads}")
    return threads


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one, else os.cpu_count())."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def query_threads_for_load(concurrency: int, *, load: float | None = None, cores: int | None = None) -> int:
    """Encoder threads for an engine running `concurrency` episodes: $TRAJSCOPE_QUERY_THREADS when set, else
    max(1, min(DEFAULT_QUERY_THREADS, free cores // concurrency)), free cores = cores - 1-minute load average.

    DEFAULT_QUERY_THREADS is tuned on an idle machine: its spinning intra-op threads win only when a core
    is free for each. With other processes busy they compete for the same cores and a query took 13.3 ms
    on 2 threads against 6.8 ms on 1; an engine running many episodes is itself the load (model
    server, logging, ingest between queries), so each episode's share of the free cores is what a query
    can use without being descheduled mid-run.
    """
    if os.environ.get(THREADS_ENV):
        return query_threads_setting()
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    cores = usable_cores() if cores is None else cores
    load = (os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0) if load is None else load
    free = max(0.0, cores - load)
    return max(1, min(DEFAULT_QUERY_THREADS, int(free // concurrency)))


def onnx_cache_entry(cache_dir: Path, model: str) -> Path:
    """Where the ONNX export of model lives: cache_dir/onnx/<model>-fp32-v<format>."""
    return cache_dir / "onnx" / f"{slug(model)}-fp32-v{ONNX_FORMAT_VERSION}"


def onnxruntime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def load_query_encoder(model: str, cache_dir: Path, torch_encoder: Callable[[], Any],
                       backend: str | None = None, threads: int | None = None) -> Any:
    """The encoder for queries under backend "auto" | "onnx" | "torch" (see query_backend_setting).

    "onnx" exports the torch model once into the cache (verified to reproduce its vectors) and
    raises when that is impossible; "auto" falls back to torch_encoder() instead.
    """
    backend, threads = query_backend_setting(backend), query_threads_setting(threads)
    if backend == "torch":
        return torch_encoder()
    if not onnxruntime_available():
        if backend == "onnx":
            raise RuntimeError("query encoder backend 'onnx' needs the onnxruntime package")
        return torch_encoder()
    entry = onnx_cache_entry(cache_dir, model)
    try:
        return _cached_onnx_encoder(entry, torch_encoder, threads)
    except Exception as exc:
        if backend == "onnx":
            raise
        log.warning("queries use the torch encoder: no ONNX encoder for %s (%s)", model, exc)
        return torch_encoder()


def _cached_onnx_encoder(entry: Path, torch_encoder: Callable[[], Any], threads: int) -> OnnxEncoder:
    if entry.exists():
        try:
            return _open_entry(entry, threads)
        except UnsupportedModel:
            raise
        except Exception as exc:  # any damage to a cache entry means: rebuild it
            log.warning("rebuilding damaged ONNX encoder cache entry %s: %s", entry, exc)
    write_entry(entry, lambda directory: _fill_entry(directory, torch_encoder(), threads))
    return _open_entry(entry, threads)


def _open_entry(entry: Path, threads: int) -> OnnxEncoder:
    meta = json.loads((entry / META_FILE).read_text())
    if meta.get("format") == ONNX_FORMAT_VERSION and "unsupported" in meta:
        raise UnsupportedModel(meta["unsupported"])
    return OnnxEncoder(entry, threads)


def _fill_entry(directory: Path, encoder: Any, threads: int) -> None:
    """Export into directory; a model that cannot be exported faithfully is recorded so it is not retried."""
    try:
        export_onnx_encoder(encoder, directory, threads)
    except UnsupportedModel as exc:
        for path in directory.iterdir():
            path.unlink()
        (directory / META_FILE).write_text(json.dumps({"format": ONNX_FORMAT_VERSION, "unsupported": str(exc)}))
