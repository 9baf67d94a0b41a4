"""The audit's tables as `trajscope audit-report` and the audit page show them, by name: the working panels
(cells, buckets, insertion, verdicts, identity, alias, every intervention) beside the paper's Table 1
(causal) and Table 2 (sentinels), which are the very tables `trajscope report audit` prints."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from trajscope.analysis.audit import (
    alias_check,
    bucket_counts,
    identity_check,
    insertion_effects,
    intervention_effects,
    sentinel_audit,
)
from trajscope.analysis.audit import cells as audit_cells

from ._audit import BASELINE, CELL, CI_NOTE, AuditContext, audit_context, causal_delta, sentinel_panel
from ._context import with_warehouse_hash
from ._deviations import with_documented_notes
from ._table import Column, Interval, ReportTable, does_not_apply

if TYPE_CHECKING:  # a read session queries like a connection
    from trajscope.warehouse.read import Reader

N = Column("n", "n", "int")


def _table(ctx: AuditContext, name: str, title: str, caption: str, columns: tuple[Column, ...], df: pl.DataFrame,
           sql: str, reason: str, note: str = "") -> ReportTable:
    """A typed table from an analysis frame: an interval column `k` reads the frame's k_pts, k_low, k_high."""
    df = df.filter(pl.col("cell").is_in(ctx.names)) if df.height else df
    if df.height == 0:
        return does_not_apply(name, title, caption, columns, reason, sql)

    def cell(row: dict, column: Column) -> object:
        if column.kind == "interval":
            return Interval(row[f"{column.key}_pts"], row[f"{column.key}_low"], row[f"{column.key}_high"])
        return row[column.key]

    rows = tuple(tuple(cell(r, c) for c in columns) for r in df.iter_rows(named=True))
    n = int(df["n_records" if "n_records" in df.columns else "n"].sum())
    return ReportTable(name, title, caption, columns, rows, ctx.footnote(n, note), sql)


def cells_table(ctx: AuditContext) -> ReportTable:
    """The cells: models, records, exclusions and failures."""
    columns = (CELL, Column("audit_ids", "Audit ids", "text"), Column("dataset", "Dataset", "text"),
               Column("reader_model", "Reader", "text"), Column("compiler_a", "Compiler A", "text"),
               Column("compiler_b", "Compiler B", "text"), Column("n_records", "Records", "int"),
               Column("n_excluded_short_gold", "Gold < 2 chars", "int"), Column("n_failed", "Failed", "int"),
               Column("n_analysable", "Analysable", "int"))
    return _table(ctx, "au_cells", "Audit cells", "Models, records, golds shorter than 2 characters excluded, "
                  "failed records.", columns, audit_cells(ctx.con), "SELECT * FROM audit_cells", "no audit record")


def buckets_table(ctx: AuditContext) -> ReportTable:
    """Records per transition bucket (ans_in_b1 -> ans_in_compile) and the answer-surfacing rates."""
    columns = (CELL, BASELINE, N, *(Column(b, b, "int") for b in ("0->0", "0->1", "1->1", "1->0")),
               Column("ans_in_b1_rate", "ans_in B1", "num", 3),
               Column("ans_in_compile_rate", "ans_in compile", "num", 3))
    df = bucket_counts(ctx.con).rename({"n_0_0": "0->0", "n_0_1": "0->1", "n_1_1": "1->1", "n_1_0": "1->0"})
    return _table(ctx, "au_buckets", "Transition buckets", "Records per transition bucket (ans_in_b1 → "
                  "ans_in_compile) and the answer-surfacing rate.", columns, df,
                  "SELECT * FROM audit_bucket_counts", "no analysable record with a compiled context")


def insertion_table(ctx: AuditContext) -> ReportTable:
    """Gold insertion on the 0->0 bucket: prepend vs midpoint."""
    columns = (CELL, BASELINE, N, Column("prepend", "Δ prepend [95% CI]", "interval"),
               Column("mid", "Δ midpoint [95% CI]", "interval"))
    return _table(ctx, "au_insertion", "Insertion", "Insertion in the 0→0 bucket: prepend 'Note: <gold>.' vs "
                  "midpoint '<gold>.', paired reader-F1 change against the unperturbed context.", columns,
                  insertion_effects(ctx.con), "-- warehouse.audit.insertion_effects over the audit_paired view",
                  "no 0→0 record has an insertion output", CI_NOTE)


def verdicts_table(ctx: AuditContext) -> ReportTable:
    """The C2a (>= 3/4 alternatives pass) and C2b (placebo) verdicts per cell and baseline."""
    columns = (CELL, BASELINE, N, Column("mask_effect", "Δ [MASK] [95% CI]", "interval"),
               Column("alternatives_passing", "Passing", "int"), Column("alternatives", "Alternatives", "int"),
               Column("c2a_pass", "C2a", "int"), Column("c2a_verdict", "C2a verdict", "text"),
               Column("placebo", "Δ placebo [95% CI]", "interval"), Column("c2b_pass", "C2b", "int"),
               Column("c2b_reason", "C2b verdict", "text"))
    return _table(ctx, "au_verdicts", "Sentinel verdicts", "Sentinel equivalence: C2a (≥ 3/4 alternatives pass) "
                  "and C2b (placebo) verdicts.", columns, sentinel_audit(ctx.con)[1],
                  "-- warehouse.audit.sentinel_audit over the audit_sentinel_pairs view",
                  "no ans_in_compile = 1 record has [MASK] and placebo outputs", CI_NOTE)


def identity_table(ctx: AuditContext) -> ReportTable:
    """The reader re-run on unchanged contexts."""
    columns = (CELL, BASELINE, N, Column("f1_original_pts", "F1 original"), Column("f1_rerun_pts", "F1 re-run"),
               Column("mean_delta_pts", "Mean Δ", "signed", 2),
               Column("median_abs_delta_pts", "Median |Δ|", "num", 2),
               Column("identical_answer_rate", "Identical answers", "num", 3))
    return _table(ctx, "au_identity", "Identity check", "Identity sanity check: reader re-run on unchanged "
                  "contexts (ans_in_compile = 0), F1 points.", columns, identity_check(ctx.con),
                  "SELECT * FROM audit_identity", "no identity re-run in the records")


def alias_table(ctx: AuditContext) -> ReportTable:
    """The alias detector on [MASK]-masked contexts and the clean-subset lift."""
    columns = (CELL, BASELINE, N, Column("n_flagged", "Flagged", "int"),
               Column("flagged_rate", "Flagged share", "num", 3), Column("n_fired_the", "the", "int"),
               Column("n_fired_last_token", "last token", "int"), Column("n_fired_acronym", "acronym", "int"),
               Column("n_fired_year", "year", "int"), Column("lift_all_pts", "Lift (all)", "signed"),
               Column("lift_clean", "Lift clean [95% CI]", "interval"),
               Column("lift_flagged_pts", "Lift (flagged)", "signed"))
    return _table(ctx, "au_alias", "Alias spot-check", "Alias spot-check on [MASK]-masked contexts: detector "
                  "fires and the clean-subset masked-vs-B1 lift.", columns, alias_check(ctx.con),
                  "SELECT * FROM audit_alias_summary", "no [MASK]-masked output in the records",
                  "Clean-subset CI: 2,000 resamples, seed 42, F1 points.")


def interventions_table(ctx: AuditContext) -> ReportTable:
    """Every (cell, baseline, intervention, sentinel, stratum): reader F1 and the paired delta."""
    columns = (CELL, BASELINE, Column("intervention", "Intervention", "text"),
               Column("sentinel", "Sentinel", "text"), Column("stratum", "Stratum", "text"), N,
               Column("f1_pts", "F1"), Column("f1_base_pts", "F1 unperturbed"),
               Column("delta", "Δ [95% CI]", "interval"))
    return _table(ctx, "au_interventions", "Interventions", "Every (cell, baseline, intervention, sentinel, "
                  "stratum): reader F1 and paired Δ against the unperturbed context.", columns,
                  intervention_effects(ctx.con), "SELECT * FROM audit_paired WHERE on_target",
                  "no intervention output in the records", CI_NOTE)


# `trajscope audit-report --table NAME` and the audit page, in report order; causal and sentinels are the
# report's Tables 1 and 2 themselves, so the two commands cannot disagree on them.
AUDIT_TABLES: dict[str, Callable[[AuditContext], ReportTable]] = {
    "cells": cells_table,
    "buckets": buckets_table,
    "causal": causal_delta,
    "insertion": insertion_table,
    "sentinels": sentinel_panel,
    "sentinel_verdicts": verdicts_table,
    "identity": identity_table,
    "alias": alias_table,
    "interventions": interventions_table,
}


def audit_tables(con: duckdb.DuckDBPyConnection | Reader, names: Sequence[str] | None = None,
                 db_path: str | Path | None = None) -> dict[str, ReportTable]:
    """The named audit tables (all when none are named), in report order, over every cell."""
    unknown = sorted(set(names or ()) - set(AUDIT_TABLES))
    if unknown:
        raise ValueError(f"unknown audit table(s) {', '.join(unknown)}; choose from {', '.join(AUDIT_TABLES)}")
    ctx = audit_context(con, [], db_path)
    chosen = [name for name in AUDIT_TABLES if not names or name in names]
    # The same documented deviations as `report audit` prints under these tables, so the two commands agree.
    built = with_warehouse_hash(with_documented_notes([AUDIT_TABLES[name](ctx) for name in chosen]),
                                ctx.warehouse_hash)
    return dict(zip(chosen, built, strict=True))


__all__ = ["AUDIT_TABLES", "audit_tables"]
