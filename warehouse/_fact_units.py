"""The derived fact tables, one unit each (warehouse/facts/<table>/: fill.sql, refresh_<event>.sql, README.md), found
from the folder and ordered so that every unit comes after the facts its fill reads."""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from ._sql_reads import statements

FACTS = "facts"
FILL = "fill.sql"
_RULE = re.compile(r"refresh_(\w+)\.sql")


@dataclass(frozen=True)
class FactUnit:
    """One derived table: its fill recomputes the rows of the trajectories in temp table `refresh`; each rule selects
    the trajectories (one trajectory_id column) whose rows an event changes: a loaded batch, or an upserted table."""

    table: str
    fill: str
    refresh: str
    rules: tuple[tuple[str, str], ...]
    reads: frozenset[str]
    # The fill's closing INSERT alone: what trajectories new to the warehouse need (they hold no rows to delete).
    insert: str

    @property
    def fill_path(self) -> str:
        return f"warehouse/{FACTS}/{self.table}/{FILL}"

    def rule(self, event: str) -> str | None:
        """The SQL of this unit's refresh rule for `event`, None without one."""
        return dict(self.rules).get(event)

    def insert_into(self, target: str) -> str:
        """The fill's INSERT writing into `target` (a table of the same columns) instead of the unit's table."""
        return f"INSERT INTO {target} BY NAME" + self.insert[len(_insert_head(self.table)):]


def _insert_head(table: str) -> str:
    return f"INSERT INTO {table} BY NAME"


def _refresh_table(table: str, fill: str, path: str) -> str:
    """The temp table the fill's opening statement deletes the rows of (DELETE FROM table WHERE trajectory_id IN
    (SELECT trajectory_id FROM refresh)): the fill names its own input."""
    first = statements(fill, path)[0]
    if first.writes != table or len({r.name for r in first.reads}) != 1 or first.kind != "DELETE":
        raise ValueError(f"{path}:{first.line}: a fill opens with DELETE FROM {table} WHERE trajectory_id IN "
                         "(SELECT trajectory_id FROM <its refresh temp table>)")
    return first.reads[0].name


def _unit(folder: Traversable) -> FactUnit:
    path = f"warehouse/{FACTS}/{folder.name}/{FILL}"
    if not (folder / FILL).is_file():
        raise ValueError(f"warehouse/{FACTS}/{folder.name}: no {FILL}")
    fill = (folder / FILL).read_text()
    rules = tuple(sorted((m.group(1), entry.read_text()) for entry in folder.iterdir()
                         if (m := _RULE.fullmatch(entry.name))))
    parsed = statements(fill, path)
    reads = frozenset(r.name for s in parsed for r in s.reads)
    refresh = _refresh_table(folder.name, fill, path)
    insert = "\n".join(fill.splitlines()[parsed[1].line - 1:]) if len(parsed) == 2 else ""
    if not insert.startswith(_insert_head(folder.name)):
        raise ValueError(f"{path}: a fill is its DELETE, then one statement opening "
                         f"{_insert_head(folder.name)}")
    return FactUnit(folder.name, fill, refresh, rules, reads, insert)


def _ordered(units: dict[str, FactUnit]) -> tuple[FactUnit, ...]:
    """Each unit after every unit whose table its fill reads; ties by name."""
    done: list[FactUnit] = []
    left = dict(sorted(units.items()))
    while left:
        ready = [u for u in left.values() if not (u.reads & left.keys()) - {u.table}]
        if not ready:
            raise ValueError(f"warehouse/{FACTS}: the fills of {sorted(left)} read each other in a cycle")
        done.append(ready[0])
        del left[ready[0].table]
    return tuple(done)


@functools.cache
def fact_units() -> tuple[FactUnit, ...]:
    """Every unit of warehouse/facts, in dependency order."""
    folder = resources.files("trajscope.warehouse") / FACTS
    return _ordered({e.name: _unit(e) for e in folder.iterdir() if e.is_dir() and not e.name.startswith(("_", "."))})


__all__ = ["FACTS", "FILL", "FactUnit", "fact_units"]
