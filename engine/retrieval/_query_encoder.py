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
# Two intra-op threads encoded a query faster than one on the 2-core machine, loaded or not (bench/retrieval_2wiki.py).
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
