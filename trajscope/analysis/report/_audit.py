"""The answer-presence audit paper's tables: T1 causal delta, T2 sentinel panel, T3 pipeline F1 per suite,
and the appendix analyses (length-controlled OLS, oracle headroom, question-blind containment, operator by reader)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import duckdb
import numpy as np
import polars as pl

from trajscope.analysis.audit import causal_effects, paired_bootstrap, sentinel_audit
from trajscope.analysis.stats import ols_cluster
from trajscope.format import BLIND_SUFFIX, mentions_answer

from ._context import HASH_MARK, PendingDigest, frame, sql_file, trajscope_version, with_warehouse_hash
from ._table import Column, Interval, ReportTable, WithDelta, does_not_apply

if TYPE_CHECKING:  # a read session queries like a connection
    from trajscope.warehouse.read import Reader

PTS = 100.0
RAW = "b1"
ORACLE_RESAMPLES = 2000  # the per-question headroom analysis uses 2,000 resamples (appendix 13)
CI_NOTE = "95% paired bootstrap CI (1,000 resamples, seed 42), F1 points."
CELL = Column("cell", "Cell", "text")
BASELINE = Column("baseline", "Baseline", "text")


@dataclass
class AuditContext:
    """The audit cells a report covers, with the provenance facts."""

    con: duckdb.DuckDBPyConnection | Reader
    cells: pl.DataFrame
    warehouse_hash: str | PendingDigest
    version: str
    _results: dict[str, pl.DataFrame] = field(default_factory=dict, repr=False)

    def query(self, name: str) -> pl.DataFrame:
        """trajscope/analysis/report/<name>.sql over the chosen cells ($cells), run once per report."""
        if name not in self._results:
            self._results[name] = frame(self.con, sql_file(name), {"cells": self.names})
        return self._results[name]

    @property
    def names(self) -> list[str]:
        """Cell names."""
        return self.cells["cell"].to_list()

    def footnote(self, n: int, extra: str = "") -> str:
        """n records, cells, version and warehouse hash."""
        text = (
            f"n = {n:,} records from {len(self.names)} cell(s) ({', '.join(self.names)}); "
            "seeds: bootstrap seed 42 (each record's reader output is one run, no repeated seeds); "
            f"trajscope {self.version}; warehouse sha256:{HASH_MARK}."
        )
        return f"{extra} {text}".strip() if extra else text


def audit_context(
    con: duckdb.DuckDBPyConnection | Reader, selection: list[str], db_path: str | Path | None,
) -> AuditContext:
    """The cells named by audit id or cell (all when selection is empty)."""
    cells = frame(con, sql_file("au_cells"), {"selection": selection})
    return AuditContext(con, cells, PendingDigest(db_path), trajscope_version())


def _mean(column: pl.Series) -> float:
    """The mean of a float column that holds values (polars types any mean as any scalar)."""
    return float(cast(float, column.mean()))


def _interval(row: dict, prefix: str) -> Interval:
    return Interval(row[f"{prefix}_pts"], row[f"{prefix}_low"], row[f"{prefix}_high"])


def _in_cells(df: pl.DataFrame, ctx: AuditContext) -> pl.DataFrame:
    return df.filter(pl.col("cell").is_in(ctx.names)) if df.height else df


def causal_delta(ctx: AuditContext) -> ReportTable:
    """Table 1: remove and placebo deltas on the 1->1 stratum and their difference."""
    columns = (
        CELL,
        BASELINE,
        Column("n", "n", "int"),
        Column("remove", "Δ remove [95% CI]", "interval"),
        Column("placebo", "Δ placebo [95% CI]", "interval"),
        Column("causal", "Δ causal [95% CI]", "interval"),
    )
    caption = (
        "Causal Δ on the 1→1 stratum: paired reader-F1 change under removing the gold answer and under a "
        "length-matched placebo, and Δcausal = Δremove − Δplacebo."
    )
    sql = (
        "-- warehouse.audit.causal_effects over the audit_causal_pairs view\n"
        + "SELECT cell, baseline, delta_remove, delta_placebo FROM audit_causal_pairs"
    )
    df = _in_cells(causal_effects(ctx.con), ctx)
    if df.height == 0:
        return does_not_apply(
            "au_t1",
            "Table 1",
            caption,
            columns,
            "no record in the 1→1 stratum has both a [MASK] remove and a placebo output",
            sql,
        )
    rows = tuple(
        (
            r["cell"],
            r["baseline"],
            r["n"],
            _interval(r, "delta_remove"),
            _interval(r, "delta_placebo"),
            _interval(r, "delta_causal"),
        )
        for r in df.iter_rows(named=True)
    )
    return ReportTable("au_t1", "Table 1", caption, columns, rows, ctx.footnote(int(df["n"].sum()), CI_NOTE), sql)


def sentinel_panel(ctx: AuditContext) -> ReportTable:
    """Table 2: the five-sentinel panel with C2a per sentinel, the C2a / C2b verdicts and the compile lift."""
    columns = (
        CELL,
        BASELINE,
        Column("sentinel", "Sentinel", "text"),
        Column("n", "n", "int"),
        Column("f1", "F1"),
        Column("residual", "Residual vs B1 [95% CI]", "interval"),
        Column("vs_mask", "Δ vs [MASK] [95% CI]", "interval"),
        Column("c2a", "C2a", "text"),
    )
    caption = (
        "Sentinel-fragility audit on the ans_in_compile = 1 stratum: post-mask F1 under five sentinels, "
        "residual against raw retrieval, paired Δ against [MASK] and the C2a equivalence rule."
    )
    sql = (
        "-- warehouse.audit.sentinel_audit over the audit_sentinel_pairs view\n"
        "SELECT * FROM audit_sentinel_pairs\n" + sql_file("au_compile_lift")
    )
    panel, verdicts = sentinel_audit(ctx.con)
    panel, verdicts = _in_cells(panel, ctx), _in_cells(verdicts, ctx)
    if panel.height == 0:
        return does_not_apply(
            "au_t2",
            "Table 2",
            caption,
            columns,
            "no ans_in_compile = 1 record has [MASK], placebo and alternative-sentinel outputs",
            sql,
        )
    rows = tuple(
        (
            r["cell"],
            r["baseline"],
            r["sentinel"],
            r["n"],
            r["f1_pts"],
            _interval(r, "residual_vs_b1"),
            _interval(r, "vs_mask"),
            "reference" if r["c2a_pass"] is None else ("pass" if r["c2a_pass"] else "fail"),
        )
        for r in panel.iter_rows(named=True)
    )
    lifts: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in frame(ctx.con, sql_file("au_compile_lift"), {"cells": ctx.names}).iter_rows(named=True):
        lifts[(r["cell"], r["baseline"])].append(r["lift"])
    notes = []
    for v in verdicts.iter_rows(named=True):
        lift = paired_bootstrap(lifts.get((v["cell"], v["baseline"]), [])).scaled(PTS)
        c2a = (
            "C2a does not apply (no alternative sentinel ran)"
            if not v["alternatives"]
            else f"C2a {v['alternatives_passing']}/{v['alternatives']} alternatives pass "
            f"({'sentinel-robust' if v['c2a_pass'] else 'sentinel-fragile'})"
        )
        notes.append(
            f"{v['cell']} {v['baseline']}: compile lift B−B1 on the masked stratum {lift.mean:+.2f} "
            f"[{lift.low:+.2f}, {lift.high:+.2f}]; {c2a}; "
            f"C2b {'pass' if v['c2b_pass'] else 'fail'} (placebo {v['placebo_pts']:+.2f})."
        )
    n = int(verdicts["n"].sum()) if verdicts.height else 0
    return ReportTable("au_t2", "Table 2", caption, columns, rows, ctx.footnote(n, CI_NOTE), sql, notes=tuple(notes))


PIPELINE_F1_SQL = "SELECT * FROM audit_pipeline_f1 WHERE list_contains($cells, cell) ORDER BY cell, baseline"


def _pipeline(ctx: AuditContext) -> pl.DataFrame:
    """The view audit_pipeline_f1 (the one definition of pipeline F1) over the chosen cells."""
    return frame(ctx.con, PIPELINE_F1_SQL, {"cells": ctx.names})


def pipeline_f1(ctx: AuditContext) -> ReportTable:
    """Tables 3/5: unperturbed reader F1 per suite (cell) and baseline."""
    df = _pipeline(ctx)
    baselines = sorted(set(df["baseline"].to_list())) if df.height else [RAW, "b2", "b3", "b4"]
    columns = (
        CELL,
        Column("dataset", "Dataset", "text"),
        Column("reader", "Reader", "text"),
        Column("n", "n", "int"),
        *(Column(b, b.upper()) for b in baselines),
    )
    caption = "Full pipeline F1 per suite: reader F1 (points) under raw retrieval (B1) and each compiled setting."
    sql = PIPELINE_F1_SQL
    if df.height == 0:
        return does_not_apply("au_t3", "Table 3", caption, columns, "no analysable audit record with reader F1", sql)
    f1 = {(r["cell"], r["baseline"]): (r["n"], r["f1_points"]) for r in df.iter_rows(named=True)}
    rows = []
    for c in ctx.cells.iter_rows(named=True):
        if not any((c["cell"], b) in f1 for b in baselines):
            continue
        n = max(f1.get((c["cell"], b), (0, None))[0] for b in baselines)
        rows.append(
            (c["cell"], c["dataset"], c["reader_model"], n, *(f1.get((c["cell"], b), (0, None))[1] for b in baselines))
        )
    return ReportTable(
        "au_t3", "Table 3", caption, columns, tuple(rows), ctx.footnote(int(ctx.cells["n_analysable"].sum())), sql
    )


# AP App. §10: the verification modes applied to the compiled context (hard rewriting, soft annotation, label-only).
VERIFY_MODES = ("b4", "b4s", "b4lr")


def verification_modes(ctx: AuditContext) -> ReportTable:
    """Table 5: reader F1 under each verification mode of the compiled context, with its lift over raw retrieval
    on the same records (audit_pipeline_f1, the definition Table 3 uses)."""
    df = _pipeline(ctx)
    modes = [m for m in VERIFY_MODES if df.height and m in set(df["baseline"].to_list())]
    columns = (
        CELL,
        Column("dataset", "Dataset", "text"),
        Column("reader", "Reader", "text"),
        *(Column(m, f"{m.upper()} (Δ vs B1)", "with_delta") for m in modes),
    )
    caption = ("Verification-mode ablation: reader F1 (points) under hard rewriting (B4), soft annotation (B4S) and "
               "label-only verification (B4LR) of the compiled context, with the lift over raw retrieval.")
    sql = PIPELINE_F1_SQL
    if len(modes) < 2:
        return does_not_apply("au_t5", "Table 5", caption, columns,
                              "fewer than two verification modes (b4, b4s, b4lr) in the records", sql)
    f1 = {(r["cell"], r["baseline"]): r for r in df.iter_rows(named=True)}
    rows = [(c["cell"], c["dataset"], c["reader_model"],
             *(WithDelta(f1[(c["cell"], m)]["f1_points"], f1[(c["cell"], m)]["lift_over_b1_points"])
               if (c["cell"], m) in f1 else WithDelta(None, None) for m in modes))
            for c in ctx.cells.iter_rows(named=True) if any((c["cell"], m) in f1 for m in modes)]
    note = "Δ vs B1: mean paired F1 change against raw retrieval on the records both settings answered."
    return ReportTable("au_t5", "Table 5", caption, columns, tuple(rows),
                       ctx.footnote(int(ctx.cells["n_analysable"].sum()), note), sql)


def _question_f1(ctx: AuditContext) -> pl.DataFrame:
    """au_question_f1 with ans_in: AP §11's "substring presence of any normalised gold alias"."""
    df = ctx.query("au_question_f1")
    flags = [mentions_answer(r["context"], r["gold"], r["aliases"] or ()) for r in df.iter_rows(named=True)]
    return df.with_columns(pl.Series("ans_in", flags, dtype=pl.Boolean)).drop("context", "aliases")


def length_controlled_ols(ctx: AuditContext) -> ReportTable:
    """Tables 6/7: per-question F1 on setting, log length, answer-in-rewrite and setting x length, with
    cluster-robust SEs by question."""
    columns = (
        CELL,
        Column("term", "Term", "text"),
        Column("coef", "β", "signed", 3),
        Column("se", "SE", "num", 3),
        Column("p", "p", "p"),
        Column("n", "n", "int"),
        Column("clusters", "Questions", "int"),
    )
    caption = (
        "Length-controlled regression of per-question F1 on the setting, log context length, an "
        "answer-in-context indicator (a normalised gold or alias occurs in the normalised context, AP §11) and "
        "setting × log length; cluster-robust SEs by question."
    )
    sql = sql_file("au_question_f1")
    df = _question_f1(ctx).filter(~pl.col("baseline").str.ends_with(BLIND_SUFFIX)) if ctx.names else pl.DataFrame()
    rows, n_total, skipped, too_few_clusters = [], 0, [], []
    for cell in ctx.names:
        part = df.filter(pl.col("cell") == cell) if df.height else df
        baselines = sorted(set(part["baseline"].to_list())) if part.height else []
        if len(baselines) < 2:
            skipped.append(cell)
            continue
        y = part["f1"].to_numpy().astype(float)
        log_len = part["log_len"].to_numpy().astype(float)
        setting = part["baseline"].to_numpy()
        names = (
            ["const"]
            + [f"setting={b}" for b in baselines[1:]]
            + ["log_len", "ans_in"]
            + [f"setting={b} × log_len" for b in baselines[1:]]
        )
        x = np.column_stack(
            [
                np.ones(len(y)),
                *[(setting == b).astype(float) for b in baselines[1:]],
                log_len,
                part["ans_in"].to_numpy().astype(float),
                *[(setting == b) * log_len for b in baselines[1:]],
            ]
        )
        if len(y) <= x.shape[1] or part["question_id"].n_unique() < 2:
            skipped.append(cell)
            continue
        fit = ols_cluster(y, x, part["question_id"].to_list(), names)
        n_total += fit.n
        # The cluster-robust covariance has rank at most G - 1: with fewer question clusters than terms its SEs
        # and p-values are not estimable, so the table prints the coefficients alone.
        estimable = fit.n_clusters > x.shape[1]
        if not estimable:
            too_few_clusters.append(f"{cell} ({fit.n_clusters} question clusters, {x.shape[1]} terms)")
        rows += [
            (cell, name, float(b), float(se) if estimable else None, float(p) if estimable else None, fit.n,
             fit.n_clusters)
            for name, b, se, p in zip(fit.names, fit.coef, fit.se, fit.p, strict=False)
        ]
    if not rows:
        return does_not_apply(
            "au_ols",
            "Table 6",
            caption,
            columns,
            "no cell has reader F1 under two or more settings on enough records",
            sql,
        )
    note = (
        f"Reference setting {RAW} (raw retrieval); OLS with the sandwich covariance summed within questions, "
        'small-sample factor G/(G−1)·(N−1)/(N−K), normal p-values (statsmodels cov_type="cluster").'
    )
    if skipped:
        note += f" Does not apply to {', '.join(skipped)}: fewer than two settings or too few records."
    if too_few_clusters:
        note += (" Cluster-robust SEs and p-values do not apply (fewer question clusters than terms): "
                 + "; ".join(too_few_clusters) + "; the coefficients alone are printed.")
    title, mapping = _ols_title(ctx, sorted({r[0] for r in rows}))
    return ReportTable("au_ols", title, caption, columns, tuple(rows), ctx.footnote(n_total, note), sql,
                       notes=(mapping,) if mapping else ())


# AP §11: the length-controlled regression is Table 6 on HotpotQA and Table 7 on Qasper.
OLS_TABLES = (("hotpot", 6), ("qasper", 7))


def _ols_title(ctx: AuditContext, cells: list[str]) -> tuple[str, str | None]:
    """The paper table(s) the printed cells are, by their dataset (never "Table 6" for a Qasper cell), and a
    note naming each cell's table where they are more than one."""
    datasets = {r["cell"]: (r["dataset"] or "") for r in ctx.cells.iter_rows(named=True)}
    number = {c: next((n for key, n in OLS_TABLES if key in datasets.get(c, "").lower()), None) for c in cells}
    found = sorted({n for n in number.values() if n is not None})
    title = ("Length-controlled OLS" if not found else f"Table {found[0]}" if len(found) == 1
             else "Tables " + "/".join(str(n) for n in found))
    if len(set(number.values())) == 1:
        return title, None
    mapping = "; ".join(f"{c} ({datasets.get(c) or 'no dataset'}): "
                        + (f"Table {number[c]}" if number[c] else "no paper table") for c in cells)
    return title, f"Cells by paper table: {mapping}."


def oracle_headroom(ctx: AuditContext) -> ReportTable:
    """Table 9: per-question oracle over settings against the best single policy."""
    columns = (
        CELL,
        Column("n", "n", "int"),
        Column("best", "Best single policy", "text"),
        Column("best_f1", "Best single F1"),
        Column("oracle2", "2-action oracle"),
        Column("gap2", "Δ 2-action [95% CI]", "interval"),
        Column("oracle_all", "All-action oracle"),
        Column("gap_all", "Δ all-action over raw", "signed"),
    )
    caption = (
        "Per-question oracle headroom: F1 of the best single setting, of a per-question oracle over raw "
        "retrieval and that setting (Δ over the better single policy), and over every setting (Δ over raw "
        "retrieval, AP §13)."
    )
    sql = sql_file("au_question_f1")
    df = _question_f1(ctx).filter(~pl.col("baseline").str.ends_with(BLIND_SUFFIX)) if ctx.names else pl.DataFrame()
    rows, n_total = [], 0
    for cell in ctx.names:
        part = df.filter(pl.col("cell") == cell) if df.height else df
        if part.height == 0:
            continue
        wide = part.pivot(on="baseline", index="record_id", values="f1").drop_nulls()
        settings = [c for c in wide.columns if c != "record_id"]
        if len(settings) < 2 or RAW not in settings or wide.height == 0:
            continue
        means = {s: _mean(wide[s]) for s in settings}
        best = max((s for s in settings if s != RAW), key=lambda s: (means[s], s))
        single = max(means[best], means[RAW])
        best_single = best if means[best] >= means[RAW] else RAW
        oracle2 = np.maximum(wide[RAW].to_numpy(), wide[best].to_numpy())
        oracle_all = wide.select(settings).to_numpy().max(axis=1)
        gap = paired_bootstrap(oracle2 - wide[best_single].to_numpy(), n_resamples=ORACLE_RESAMPLES).scaled(PTS)
        n_total += wide.height
        rows.append(
            (
                cell,
                wide.height,
                best_single,
                PTS * single,
                PTS * float(oracle2.mean()),
                Interval(gap.mean, gap.low, gap.high),
                PTS * float(oracle_all.mean()),
                # AP §13: the all-action oracle "bounds the reachable variation ... over raw".
                PTS * (float(oracle_all.mean()) - means[RAW]),
            )
        )
    if not rows:
        return does_not_apply(
            "au_oracle",
            "Table 9",
            caption,
            columns,
            "no cell has per-question reader F1 under raw retrieval and a compiled setting",
            sql,
        )
    note = "Records with F1 under every setting; headroom CI: 2,000 resamples, seed 42."
    return ReportTable("au_oracle", "Table 9", caption, columns, tuple(rows), ctx.footnote(n_total, note), sql)


def question_blind_containment(ctx: AuditContext) -> ReportTable:
    """Table 10: answer-string containment of the compile output with and without the question."""
    columns = (
        CELL,
        BASELINE,
        Column("n", "n", "int"),
        Column("with_question", "With question (%)"),
        Column("blind", "Question-blind (%)"),
        Column("delta", "Δ (pp)", "signed"),
    )
    caption = (
        "Question-blind containment audit: gold-string containment of the compile output when the rewriter "
        "does not see the question."
    )
    sql = sql_file("au_containment")
    df = frame(ctx.con, sql, {"cells": ctx.names})
    rates = {(r["cell"], r["baseline"]): r for r in df.iter_rows(named=True)}
    rows, n = [], 0
    for (cell, baseline), r in rates.items():
        if not baseline.endswith(BLIND_SUFFIX):
            continue
        seen = rates.get((cell, baseline[: -len(BLIND_SUFFIX)]))
        if seen is None:
            continue
        n += r["n"]
        rows.append(
            (
                cell,
                seen["baseline"],
                r["n"],
                seen["containment_pts"],
                r["containment_pts"],
                r["containment_pts"] - seen["containment_pts"],
            )
        )
    if not rows:
        return does_not_apply(
            "au_blind",
            "Table 10",
            caption,
            columns,
            f"no question-blind compile (a baseline named <b>{BLIND_SUFFIX} next to <b>) in the records",
            sql,
        )
    return ReportTable("au_blind", "Table 10", caption, columns, tuple(rows), ctx.footnote(n), sql)


def _sign(delta: float | None) -> str:
    if delta is None:
        return "--"
    if abs(delta) < 1:
        return "≈0"
    mark = "+" if delta > 0 else "−"
    return mark * (2 if abs(delta) >= 5 else 1)


def operator_by_reader(ctx: AuditContext) -> ReportTable:
    """Table 11: sign and rough magnitude of the compile (B2) and verifier-edit (B4) effects per cell."""
    columns = (
        CELL,
        Column("reader", "Reader", "text"),
        Column("dataset", "Dataset", "text"),
        Column("compile", "B2 − B1", "signed"),
        Column("compile_sign", "B2", "text"),
        Column("verify", "B4 − B2", "signed"),
        Column("verify_sign", "B4", "text"),
    )
    caption = (
        "Descriptive operator-by-reader pattern: sign and rough magnitude (|Δ| < 1: ≈0; < 5: +/−; "
        "≥ 5: ++/−−) of the compile and verifier-edit effects on reader F1."
    )
    sql = PIPELINE_F1_SQL
    f1 = {(r["cell"], r["baseline"]): r["f1_points"] for r in _pipeline(ctx).iter_rows(named=True)}
    rows = []
    for c in ctx.cells.iter_rows(named=True):
        b1, b2, b4 = (f1.get((c["cell"], b)) for b in (RAW, "b2", "b4"))
        compile_delta = None if b1 is None or b2 is None else b2 - b1
        verify_delta = None if b2 is None or b4 is None else b4 - b2
        if compile_delta is None and verify_delta is None:
            continue
        rows.append(
            (
                c["cell"],
                c["reader_model"],
                c["dataset"],
                compile_delta,
                _sign(compile_delta),
                verify_delta,
                _sign(verify_delta),
            )
        )
    if not rows:
        return does_not_apply(
            "au_operator", "Table 11", caption, columns, "no cell has reader F1 under B1 and B2 (or B2 and B4)", sql
        )
    return ReportTable(
        "au_operator",
        "Table 11",
        caption,
        columns,
        tuple(rows),
        ctx.footnote(int(ctx.cells["n_analysable"].sum()), "Unpaired means of unperturbed F1, points."),
        sql,
    )


_SCALE = re.compile(r"(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")


def _reader_size(name: str | None) -> float:
    """Parameters in billions from a model name ("Qwen2.5-0.5B-Instruct" -> 0.5); inf when it names none."""
    found = _SCALE.findall(name or "")
    return float(found[-1]) if found else math.inf


def _wide(df: pl.DataFrame, cell: str) -> pl.DataFrame:
    part = df.filter(pl.col("cell") == cell) if df.height else df
    if part.height == 0:
        return part
    return part.pivot(on="baseline", index="record_id", values="f1")


def reader_scale(ctx: AuditContext) -> ReportTable:
    """Table 4 (AP §8): the paired F1 delta of the compile (b2) over raw retrieval at each reader scale,
    per dataset; a dataset needs cells with two or more reader models."""
    columns = (
        Column("dataset", "Dataset", "text"),
        Column("reader", "Reader", "text"),
        CELL,
        Column("n", "n", "int"),
        Column("raw", "B1 F1"),
        Column("compile", "B2 F1"),
        Column("delta", "Δ B2 − B1 [95% CI]", "interval"),
    )
    caption = ("Reader-scale attenuation: at each reader, the paired F1 delta between the compiled context (B2) "
               "and raw retrieval (B1), per dataset, readers ordered by parameter count.")
    sql = sql_file("au_question_f1")
    df = _question_f1(ctx).filter(~pl.col("baseline").str.ends_with(BLIND_SUFFIX)) if ctx.names else pl.DataFrame()
    by_dataset: dict[str, list[dict]] = defaultdict(list)
    for c in ctx.cells.iter_rows(named=True):
        by_dataset[c["dataset"] or ""].append(c)
    rows, n_total = [], 0
    for dataset, cells in by_dataset.items():
        if len({c["reader_model"] for c in cells}) < 2:
            continue
        for c in sorted(cells, key=lambda c: (_reader_size(c["reader_model"]), c["reader_model"] or "", c["cell"])):
            wide = _wide(df, c["cell"])
            if RAW not in wide.columns or "b2" not in wide.columns:
                continue
            wide = wide.drop_nulls([RAW, "b2"])
            if wide.height == 0:
                continue
            diff = wide["b2"].to_numpy() - wide[RAW].to_numpy()
            ci = paired_bootstrap(diff).scaled(PTS)
            rows.append((dataset, c["reader_model"], c["cell"], wide.height, PTS * _mean(wide[RAW]),
                         PTS * _mean(wide["b2"]), Interval(ci.mean, ci.low, ci.high)))
            n_total += wide.height
    if not rows:
        return does_not_apply("au_t4", "Table 4", caption, columns,
                              "no dataset has cells with two or more reader models and reader F1 under B1 and B2",
                              sql)
    return ReportTable("au_t4", "Table 4", caption, columns, tuple(rows), ctx.footnote(n_total, CI_NOTE), sql)


QUARTILES = ("Q1", "Q2", "Q3", "Q4")


def length_quartiles(ctx: AuditContext) -> ReportTable:
    """Table 8 (AP §12): a compiled setting minus the reference compile (b2) by quartile of the joint
    context-length distribution of the two settings."""
    columns = (
        CELL,
        Column("setting", "Setting", "text"),
        Column("quartile", "Length quartile", "text"),
        Column("words", "Words", "text"),
        Column("n_ref", "n B2", "int"),
        Column("n", "n", "int"),
        Column("ref", "B2 F1"),
        Column("f1", "Setting F1"),
        Column("delta", "Δ", "signed"),
    )
    caption = ("Length-quartile breakdown: F1 of each compiled setting minus B2's, by quartile of the joint "
               "B2 + setting context-length distribution (words).")
    sql = sql_file("au_question_f1")
    df = _question_f1(ctx).filter(~pl.col("baseline").str.ends_with(BLIND_SUFFIX)) if ctx.names else pl.DataFrame()
    rows, n_total = [], 0
    for cell in ctx.names:
        part = df.filter(pl.col("cell") == cell) if df.height else df
        settings = sorted(b for b in set(part["baseline"].to_list()) if b not in (RAW, "b2")) if part.height else []
        ref = part.filter(pl.col("baseline") == "b2") if part.height else part
        if ref.height == 0:
            continue
        for setting in settings:
            other = part.filter(pl.col("baseline") == setting)
            words = np.expm1(np.concatenate([ref["log_len"].to_numpy(), other["log_len"].to_numpy()]))
            cuts = np.quantile(words, [0.25, 0.5, 0.75])
            edges = [words.min(), *cuts, words.max()]
            q_ref = np.digitize(np.expm1(ref["log_len"].to_numpy()), cuts, right=True)
            q_set = np.digitize(np.expm1(other["log_len"].to_numpy()), cuts, right=True)
            for q, label in enumerate(QUARTILES):
                a, b = ref["f1"].to_numpy()[q_ref == q], other["f1"].to_numpy()[q_set == q]
                if a.size == 0 or b.size == 0:
                    continue
                rows.append((cell, setting, label, f"{edges[q]:.0f}–{edges[q + 1]:.0f}", int(a.size), int(b.size),
                             PTS * float(a.mean()), PTS * float(b.mean()), PTS * float(b.mean() - a.mean())))
        n_total += part["record_id"].n_unique() if settings else 0
    if not rows:
        return does_not_apply("au_t8", "Table 8", caption, columns,
                              "no cell has reader F1 under B2 and another compiled setting", sql)
    note = ("AP §12 compares its V5 rewriter with Control; here every compiled setting is set against B2, the "
            "question-conditioned compile. Quartile cut points of the pooled context lengths of both settings "
            "(a context in (c_k, c_k+1]); unpaired means of unperturbed F1 within each quartile, points.")
    return ReportTable("au_t8", "Table 8", caption, columns, tuple(rows), ctx.footnote(n_total, note), sql)


TABLES = (
    causal_delta,
    sentinel_panel,
    pipeline_f1,
    reader_scale,
    verification_modes,
    length_controlled_ols,
    length_quartiles,
    oracle_headroom,
    question_blind_containment,
    operator_by_reader,
)


def audit_report(
    con: duckdb.DuckDBPyConnection | Reader, selection: list[str], db_path: str | Path | None = None,
    checks: Sequence[Callable[[AuditContext], ReportTable]] = (),
) -> list[ReportTable]:
    """Every audit table over the chosen audit ids or cells (all when none are named), then `checks` (the
    insertion, identity and alias panels) over the same cells."""
    ctx = audit_context(con, selection, db_path)
    return with_warehouse_hash([build(ctx) for build in (*TABLES, *checks)], ctx.warehouse_hash)


__all__ = [
    "AuditContext",
    "TABLES",
    "audit_context",
    "audit_report",
    "causal_delta",
    "length_controlled_ols",
    "length_quartiles",
    "operator_by_reader",
    "oracle_headroom",
    "pipeline_f1",
    "question_blind_containment",
    "reader_scale",
    "sentinel_panel",
    "verification_modes",
]
