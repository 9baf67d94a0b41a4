"""Where trajscope's numbers knowingly differ from a paper's definition: one list, printed as a note under
every report table it touches (docs/definitions.md lists the same entries with their reasons)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from fnmatch import fnmatch

from ._context import ReportContext, sql_file
from ._table import ReportTable


@dataclass(frozen=True)
class Deviation:
    """One documented difference: its key (docs/definitions.md), the paper section, the note text and the
    report tables (fnmatch patterns on ReportTable.name) whose numbers it changes."""

    key: str
    section: str
    note: str
    tables: tuple[str, ...]


# Tables whose numbers rest on correctness, and those that rest on the gold-passage labels.
_ACCURACY = ("rg_t1", "rg_t2", "rg_t3", "rg_t5", "rg_t17", "rg_plane", "rg_fig6", "er_t1", "er_t2", "er_t[3-8]",
             "er_cat*", "er_fig5", "er_t10", "er_t11", "er_pareto")
_ER_FAILURES = ("er_t12", "er_t13", "er_t14", "er_t15", "er_failures_*", "er_hops_*")
_RG_GOLD = ("rg_t4", "rg_plane", "rg_cooc")

DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "hedge_with_explanation", "RG §4 / ER §4.2 (silent)",
        "Deviation (hedge_with_explanation): an answer naming every option of a comparison question counts as "
        "wrong under every judge even when it explains which one is right (docs/definitions.md).",
        _ACCURACY + _ER_FAILURES),
    Deviation(
        "gave_up_at_budget", "ER App. B vs App. E",
        "Deviation (gave_up_at_budget): an answer forced at the context budget counts as Gave Up (App. B), "
        "which App. E's abstention-phrase rule does not list.",
        _ER_FAILURES),
    Deviation(
        "error_label", "ER App. E (silent)",
        "Deviation (error_label): a trajectory that ended in an error is a wrong answer labelled Error (run "
        "failed), a row of its own counted in each method's failure total; App. E's four causes do not list it.",
        _ER_FAILURES),
    Deviation(
        "false_resolution_per_item", "ER App. E",
        "Deviation (false_resolution_per_item): a false resolution is judged per register item (its cited "
        "chunks), not per question as App. E words it.",
        _ER_FAILURES),
    Deviation(
        "hop_recall_shared_chunk", "ER App. E",
        "Deviation (hop_recall_shared_chunk): two supporting paragraphs matching the same chunk count once "
        "in the hop-recall numerator.",
        ("er_t13", "er_t15", "er_hops_*")),
    Deviation(
        "tokens_by_characters", "ER §4.7, Tables 9-11",
        "Deviation (tokens_by_characters): retrieved tokens are estimated at about 4 characters a token, "
        "not counted by the paper's tokenizer.",
        ("er_t9", "er_t10", "er_t11", "er_pareto")),
)


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
    gold_tables = (*_ER_FAILURES, *_RG_GOLD)
    out = []
    for table in tables:
        notes = [d.note for d in deviations_for(table.name)]
        if table.not_applicable is None and any(fnmatch(table.name, p) for p in gold_tables):
            gold_note = gold_note or _unmatched_gold_note(ctx) or ""
            notes += [gold_note] if gold_note else []
        out.append(replace(table, notes=(*table.notes, *notes)) if notes else table)
    return out


UNMATCHED_GOLD_SQL = sql_file("report_unmatched_gold")

__all__ = ["DEVIATIONS", "UNMATCHED_GOLD_SQL", "Deviation", "deviations_for", "with_deviation_notes"]
