"""Where trajscope's numbers knowingly differ from a paper's definition: one data file (deviations.json, the same
entries docs/definitions.md lists), each entry's note printed under every report table it touches."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from fnmatch import fnmatch
from importlib import resources

from ._context import ReportContext, sql_file
from ._table import ReportTable


@dataclass(frozen=True)
class Deviation:
    """One documented difference: its key (docs/definitions.md), the paper section, the reason, the note text
    and the report tables (fnmatch patterns on ReportTable.name) whose numbers it changes."""

    key: str
    section: str
    note: str
    tables: tuple[str, ...]
    reason: str = ""


def load_deviations() -> tuple[Deviation, ...]:
    """Every entry of trajscope/analysis/report/deviations.json, in file order."""
    entries = json.loads((resources.files("trajscope.analysis.report") / "deviations.json").read_text())
    return tuple(Deviation(e["key"], e["section"], e["note"], tuple(e["tables"]), e.get("reason", ""))
                 for e in entries)


DEVIATIONS: tuple[Deviation, ...] = load_deviations()
# The tables that rest on the gold-passage labels carry the unmatched-gold share beside their deviations.
_GOLD_TABLES = ("er_t12", "er_t13", "er_t14", "er_t15", "er_failures_*", "er_hops_*", "rg_t4", "rg_plane", "rg_cooc")


def deviations_for(table_name: str) -> list[Deviation]:
    """The deviations whose table patterns match this table."""
    return [d for d in DEVIATIONS if any(fnmatch(table_name, pattern) for pattern in d.tables)]


def _unmatched_gold_note(ctx: ReportContext) -> str | None:
    row = ctx.query("report_unmatched_gold").row(0, named=True)
    if not row["n_paragraphs"]:
        return None
    share = 100.0 * row["n_unmatched"] / row["n_paragraphs"]
    return (
        f"Unmatched gold paragraphs: {row['n_unmatched']:,} of {row['n_paragraphs']:,} supporting paragraphs "
        f"({share:.1f}%) of the chosen runs' questions matched no corpus chunk; each counts as never retrieved "
        "(ER App. E), so a question with one is never 'all gold retrieved'."
    )


def with_deviation_notes(ctx: ReportContext, tables: list[ReportTable]) -> list[ReportTable]:
    """Each table with the notes of the deviations that apply to it and, under the tables that rest on the
    gold-passage labels, the share of unmatched gold paragraphs."""
    gold_note: str | None = None
    gold_tables = _GOLD_TABLES
    out = []
    for table in tables:
        notes = [d.note for d in deviations_for(table.name)]
        if table.not_applicable is None and any(fnmatch(table.name, p) for p in gold_tables):
            gold_note = gold_note or _unmatched_gold_note(ctx) or ""
            notes += [gold_note] if gold_note else []
        out.append(replace(table, notes=(*table.notes, *notes)) if notes else table)
    return out


def with_documented_notes(tables: list[ReportTable]) -> list[ReportTable]:
    """Each table with the notes of the deviations that apply to it (reports without runs: the audit's)."""
    out = []
    for table in tables:
        notes = [d.note for d in deviations_for(table.name) if d.note not in table.notes]
        out.append(replace(table, notes=(*table.notes, *notes)) if notes else table)
    return out


UNMATCHED_GOLD_SQL = sql_file("report_unmatched_gold")

__all__ = ["DEVIATIONS", "UNMATCHED_GOLD_SQL", "Deviation", "deviations_for", "load_deviations",
           "with_deviation_notes", "with_documented_notes"]
