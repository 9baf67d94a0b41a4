"""Run matrices: several conditions over the same question ids, from one YAML file."""
from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from trajscope.engine.llm import LocalModelServer
from trajscope.format import RecordError, read_side_text
from trajscope.ingest.importers import load_yaml

from ._orchestrator import RunSummary, execute_run_async, model_config_for
from ._spec import RunSpec

# Pairing by construction: these are fixed for the whole matrix and may not vary per entry.
_SHARED_ONLY = ("dataset", "n", "seed", "question_ids")
_ALIASES = {"out": "out_dir", "db": "db_path"}


class MatrixError(ValueError):
    """A run-matrix file that cannot be used; says which entry and field."""


def _spec_fields() -> set[str]:
    return {f.name for f in fields(RunSpec)}


def load_matrix(path: str | Path, **overrides: Any) -> list[RunSpec]:
    """Parse a matrix file: top-level defaults plus a `runs:` list of per-condition settings."""
    path = Path(path)
    try:
        data = load_yaml(read_side_text(path, "run matrix"), path, "run matrix")
    except RecordError as exc:  # a FIFO or device, past the size limit, bad YAML, an alias bomb
        raise MatrixError(str(exc)) from None
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read matrix: {exc.strerror or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not data["runs"]:
        raise MatrixError(f"{path}: expected a mapping with a non-empty `runs:` list")
    known = _spec_fields()
    shared = {_ALIASES.get(k, k): v for k, v in data.items() if k != "runs"}
    shared.update({k: v for k, v in overrides.items() if v is not None})
    for key in shared:
        if key not in known:
            raise MatrixError(f"{path}: field {key}: unknown setting")
    specs = []
    for i, entry in enumerate(data["runs"], start=1):
        if not isinstance(entry, dict):
            raise MatrixError(f"{path}: runs[{i}]: expected a mapping")
        entry = {_ALIASES.get(k, k): v for k, v in entry.items()}
        for key in entry:
            if key not in known:
                raise MatrixError(f"{path}: runs[{i}].{key}: unknown setting")
            if key in _SHARED_ONLY:
                raise MatrixError(
                    f"{path}: runs[{i}].{key}: set it at the top level, so every run pairs on the same questions"
                )
        merged = {**shared, **entry, "params": {**shared.get("params", {}), **entry.get("params", {})}}
        if "controller" not in merged or "dataset" not in merged:
            raise MatrixError(f"{path}: runs[{i}]: needs `controller` and a top-level `dataset`")
        try:
            specs.append(RunSpec(**merged))
        except (TypeError, ValueError) as exc:
            raise MatrixError(f"{path}: runs[{i}]: {exc}") from None
    return specs


async def execute_matrix_async(
    specs: list[RunSpec], *, on_done: Callable[[RunSummary], None] | None = None
) -> list[RunSummary]:
    """Run the specs one after another, sharing one embedded model server per model where they use it."""
    summaries: list[RunSummary] = []
    server: LocalModelServer | None = None
    try:
        for spec in specs:
            config = model_config_for(spec)
            if config.local:
                if server is not None and server.alias != config.name:
                    await asyncio.to_thread(server.stop)
                    server = None
                if server is None:
                    server = await LocalModelServer(model=config.name).__aenter__()
                config = config.with_overrides(base_url=server.base_url)
            summary = await execute_run_async(spec, model_config=config)
            summaries.append(summary)
            if on_done is not None:
                on_done(summary)
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)
    return summaries


def execute_matrix(specs: list[RunSpec], *, on_done: Callable[[RunSummary], None] | None = None) -> list[RunSummary]:
    """Synchronous wrapper around execute_matrix_async."""
    return asyncio.run(execute_matrix_async(specs, on_done=on_done))
