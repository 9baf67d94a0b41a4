"""trajscope: the canonical trajectory format (`trajscope.format`), the `trajscope` command and the notebook API.

    import trajscope
    trajscope.ingest(["run.jsonl"], db="wh.duckdb")
    wh = trajscope.open("wh.duckdb")
    wh.view("run_summary"); wh.compare("base", "gate").table

The API (trajscope.api) loads on first use, so `import trajscope` and `trajscope --help` stay fast.
"""
from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trajscope.api import Warehouse, open

_API_NAMES = frozenset({"open", "Warehouse"})


class _CallableStage(types.ModuleType):
    """The `trajscope.ingest` stage package, also callable as the API's `trajscope.ingest(paths, db=...)`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from trajscope.api import ingest

        return ingest(*args, **kwargs)


class _Namespace(types.ModuleType):
    # Python binds every imported subpackage as an attribute of its parent, so `trajscope.ingest` is the stage
    # package once anything imports it; making that package callable keeps `trajscope.ingest(...)` the API.
    def __setattr__(self, name: str, value: Any) -> None:
        if name == "ingest" and type(value) is types.ModuleType:
            value.__class__ = _CallableStage
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Namespace


def __getattr__(name: str) -> Any:
    if name in _API_NAMES:
        import trajscope.api

        return getattr(trajscope.api, name)
    if name == "ingest":  # the stage package (light: its subpackages load on use), callable as the API
        import importlib

        return importlib.import_module("trajscope.ingest")
    raise AttributeError(f"module 'trajscope' has no attribute {name!r}")


__all__ = ["Warehouse", "ingest", "open"]
