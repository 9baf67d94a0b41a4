"""The named views' SQL files (warehouse/views), and which views a piece of SQL reads."""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True)
class ViewDef:
    """A named view: its name, one-line description and SQL body."""

    name: str
    description: str
    sql: str


def load_views() -> list[ViewDef]:
    """Every view file, name from the file name, description from its first `--` line."""
    folder = resources.files("trajscope.warehouse") / "views"
    views = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".sql"):
            continue
        text = entry.read_text()
        first = text.lstrip().splitlines()[0] if text.strip() else ""
        if not first.startswith("--"):
            raise ValueError(f"warehouse/views/{entry.name}: first line must be a `-- ` description")
        views.append(ViewDef(entry.name[:-4], first[2:].strip(), text))
    return views


def views_named(sql: str, names: Iterable[str]) -> set[str]:
    """The names among `names` that `sql` uses; comments and column descriptions may name a view without using it."""
    code = re.sub(r"--[^\n]*|^COMMENT ON [^\n]*", "", sql, flags=re.M)
    return {n for n in names if re.search(rf"\b{n}\b", code)}


__all__ = ["ViewDef", "load_views", "views_named"]
