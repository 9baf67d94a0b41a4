"""The ExecutionRAG paper's tables: T1 main results, T2 ablations, T3-8 per category, T9-11 efficiency,
T12-15 failure analysis overall and by hop, and the accuracy-vs-tokens Pareto frontier as a figure."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, replace

from trajscope.analysis.stats import pareto_frontier

from ._context import ReportContext, RunInfo, sql_file
from ._funnel import FunnelArm, funnel_table
from ._table import Column, ReportFigure, ReportTable, does_not_apply

PTS = 100.0
REGISTER = ("execution_rag", "register")
ABLATIONS = ("register", "question_only_init", "no_updates")
ABLATION_TABLES = ("er_t2", "er_t10")
METHOD_NAMES: dict[tuple[str | None, str | None], str] = {
    ("arag", "baseline"): "A-RAG",
    ("execution_rag", "register"): "ExecutionRAG",
    ("execution_rag", "question_only_init"): "w/o seed grounding (question-only register)",
    ("execution_rag", "no_updates"): "w/o iterative updates (register built once)",
    ("direct", None): "Direct",
    ("vanilla_rag", None): "Vanilla RAG",
}
FAILURE_LABELS = (
    ("judge_error", "Judge Error"),
    ("gave_up", "Gave Up"),
    ("reasoning_error", "Reasoning Error"),
    ("missing_evidence", "Missing Evidence"),
    ("no_gold_evidence", "No gold evidence"),
    # A trajectory that ended in an error (model / tool failure) is wrong but fits none of App. E's four
    # causes; it is a row of its own and counts in the total (deviation error_label).
    ("error", "Error (run failed)"),
)
# Per-category tables in the paper's order: (dataset keyword, first-backbone number).
CATEGORY_TABLES = (("musique", 3), ("hotpot", 4), ("2wiki", 5))
QWEN_EMBEDDING = "Qwen3-Embedding-0.6B"
EMBEDDING_NOTE = "the run's embedding model (default all-MiniLM-L6-v2)"


def method_name(run: RunInfo) -> str:
    """The paper's name for a run's method, else controller:condition."""
    return METHOD_NAMES.get((run.controller, run.condition)) or (
        f"{METHOD_NAMES[(run.controller, None)]} ({run.condition})"
        if (run.controller, None) in METHOD_NAMES
        else run.method
    )


def _embedding(run: RunInfo) -> str:
    return run.embedding_model or "all-MiniLM-L6-v2"


@dataclass
class _Pooled:
    """Seeds of one method pooled: sums and counts, so means weight every trajectory once."""

    n: int = 0
    contain_sum: float = 0.0
    n_contain: int = 0
    llm_sum: float = 0.0
    n_llm: int = 0
    tokens_sum: float = 0.0
    cost_sum: float = 0.0
    n_cost: int = 0

    def add(self, r: dict) -> None:
        self.n += r["n"]
        self.contain_sum += r["contain_sum"] or 0.0
        self.n_contain += r["n_contain"]
        self.llm_sum += r["llm_sum"] or 0.0
        self.n_llm += r["n_llm"]
        if r.get("retrieved_tokens") is not None:
            self.tokens_sum += r["retrieved_tokens"] * r["n"]
        if r.get("cost_per_question") is not None:
            self.cost_sum += r["cost_per_question"] * r["n"]
            self.n_cost += r["n"]

    @property
    def contain(self) -> float | None:
        return PTS * self.contain_sum / self.n_contain if self.n_contain else None

    @property
    def llm(self) -> float | None:
        return PTS * self.llm_sum / self.n_llm if self.n_llm else None

    @property
    def tokens(self) -> float | None:
        return self.tokens_sum / self.n if self.n else None

    @property
    def cost(self) -> float | None:
        return self.cost_sum / self.n_cost if self.n_cost else None


def _accuracy_rows(ctx: ReportContext) -> dict[str, dict]:
    """Per run: n, retrieved tokens and cost (er_accuracy), and Contain / LLM sums over its categories."""
    rows = {
        r["run_id"]: {**r, "n_contain": 0, "contain_sum": 0.0, "n_llm": 0, "llm_sum": 0.0}
        for r in ctx.query("er_accuracy").iter_rows(named=True)
    }
    for r in ctx.query("er_category").iter_rows(named=True):
        row = rows.get(r["run_id"])
        if row is not None:
            for key in ("n_contain", "contain_sum", "n_llm", "llm_sum"):
                row[key] += r[key] or 0
    return rows


ACCURACY_SQL = "er_accuracy", "er_category"


def _accuracy_sql() -> str:
    return "\n".join(sql_file(name) for name in ACCURACY_SQL)


def _pool(stats: dict[str, dict], runs: list[RunInfo]) -> _Pooled:
    pooled = _Pooled()
    for run in runs:
        if run.run_id in stats:
            pooled.add(stats[run.run_id])
    return pooled


def _methods(ctx: ReportContext, runs: list[RunInfo] | None = None) -> dict[str, list[RunInfo]]:
    """Runs by method; a run on a second embedding backbone is its own method unless runs share one backbone."""
    chosen = ctx.runs if runs is None else runs
    several = len({_embedding(r) for r in chosen}) > 1
    out: dict[str, list[RunInfo]] = defaultdict(list)
    for run in chosen:
        suffix = f" ({_embedding(run)})" if several and run.embedding_model else ""
        out[method_name(run) + suffix].append(run)
    return out


def _by_group_and_method(ctx: ReportContext, runs: list[RunInfo] | None = None) -> dict[str, dict[str, list[RunInfo]]]:
    return {group: _methods(ctx, members) for group, members in ctx.groups(runs).items()}


def main_results(ctx: ReportContext) -> ReportTable:
    """Table 1: Contain-Match and LLM-Evaluation accuracy per method and benchmark."""
    groups = list(ctx.groups())
    columns = (
        Column("method", "Method", "text"),
        *[c for g in groups for c in (Column(f"{g}_contain", f"{g} Contain"), Column(f"{g}_llm", f"{g} LLM"))],
    )
    caption = (
        "Main results on three multi-hop QA benchmarks: Contain-Match Accuracy and LLM-Evaluation Accuracy "
        "(%). A-RAG shares ExecutionRAG's generator, tools and corpora, so it is ExecutionRAG without the register."
    )
    stats = _accuracy_rows(ctx)
    grouped = _by_group_and_method(ctx)
    methods = list(_methods(ctx))
    rows = []
    for method in methods:
        row: list[object] = [method]
        for g in groups:
            pooled = _pool(stats, grouped[g].get(method, []))
            row += [pooled.contain, pooled.llm]
        rows.append(tuple(row))
    n = sum(r["n"] for r in stats.values())
    note = (
        "Seeds of a method pooled; LLM-Acc is the share of LLM-judged answers said correct (the llm_acc "
        "macro, as run_summary.llm_acc; a judge tie of 0.5 counts as correct)."
    )
    return ReportTable(
        "er_t1", "Table 1", caption, columns, tuple(rows), ctx.footnote(ctx.runs, n, note), _accuracy_sql()
    )


def _mean(values: list[float | None]) -> float | None:
    """The unweighted mean over benchmarks; None unless every benchmark has a value."""
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known and len(known) == len(values) else None


def backbone_results(ctx: ReportContext) -> ReportTable:
    """Figure 3's data: per embedding backbone and method, accuracy on each benchmark and the cross-benchmark
    average (the mean of the benchmarks' accuracies, each benchmark weighted once whatever its size)."""
    groups = list(ctx.groups())
    columns = (
        Column("embedding", "Embedding", "text"),
        Column("method", "Method", "text"),
        *[c for g in groups for c in (Column(f"{g}_contain", f"{g} Contain"), Column(f"{g}_llm", f"{g} LLM"))],
        Column("avg_contain", "Average Contain"),
        Column("avg_llm", "Average LLM"),
    )
    caption = ("Per-benchmark Contain-Match and LLM-Evaluation accuracy (%) under each embedding backbone, and "
               "the average across benchmarks.")
    stats = _accuracy_rows(ctx)
    rows, n = [], 0
    embeddings = sorted({_embedding(r) for r in ctx.runs}, key=lambda e: (e != "all-MiniLM-L6-v2", e))
    for embedding in embeddings:
        on = [r for r in ctx.runs if _embedding(r) == embedding]
        grouped = {g: _methods(ctx, members) for g, members in ctx.groups(on).items()}
        for method in dict.fromkeys(method_name(r) for r in on):
            pools = [_pool(stats, grouped.get(g, {}).get(method, [])) if g in grouped else _Pooled() for g in groups]
            n += sum(p.n for p in pools)
            cells = [v for p in pools for v in (p.contain, p.llm)]
            ran = [p for p in pools if p.n]
            # A method missing from a benchmark has no average: the mean would be over other benchmarks.
            complete = len(ran) == len(groups)
            rows.append((embedding, method, *cells, _mean([p.contain for p in pools]) if complete else None,
                         _mean([p.llm for p in pools]) if complete else None))
    note = ("Average: the mean of the per-benchmark accuracies, each benchmark once (not pooled over questions); "
            "none where the method did not run on every benchmark.")
    return ReportTable("er_fig3", "Figure 3", caption, columns, tuple(rows), ctx.footnote(ctx.runs, n, note),
                       _accuracy_sql())


def _erag_runs(
    ctx: ReportContext, conditions: tuple[str, ...] | None = None, *, one_backbone: bool = False
) -> list[RunInfo]:
    runs = [
        r for r in ctx.runs if r.controller == "execution_rag" and (conditions is None or r.condition in conditions)
    ]
    if one_backbone and runs:
        # Ablations compare conditions under one retriever: the default backbone when present.
        backbones = sorted({_embedding(r) for r in runs}, key=lambda e: (e != "all-MiniLM-L6-v2", e))
        runs = [r for r in runs if _embedding(r) == backbones[0]]
    return runs


def ablations(ctx: ReportContext) -> ReportTable:
    """Table 2: the register's components removed one at a time."""
    columns = (
        Column("dataset", "Dataset", "text"),
        Column("variant", "Variant", "text"),
        Column("llm", "LLM-Acc"),
        Column("contain", "Contain-Acc"),
    )
    caption = "Ablation study on MuSiQue: LLM-Evaluation and Contain-Match Accuracy (%), under the default setup."
    sql = _accuracy_sql()
    runs = _erag_runs(ctx, ABLATIONS, one_backbone=True)
    if len({r.condition for r in runs}) < 2:
        return does_not_apply(
            "er_t2",
            "Table 2",
            caption,
            columns,
            "fewer than two ExecutionRAG conditions (register, question_only_init, no_updates) among the chosen runs",
            sql,
        )
    stats = _accuracy_rows(ctx)
    rows, n = [], 0
    for group, methods in _by_group_and_method(ctx, runs).items():
        for condition in ABLATIONS:
            members = [r for m in methods.values() for r in m if r.condition == condition]
            if members:
                pooled = _pool(stats, members)
                n += pooled.n
                rows.append((group, method_name(members[0]), pooled.llm, pooled.contain))
    return ReportTable("er_t2", "Table 2", caption, columns, tuple(rows), ctx.footnote(runs, n), sql)


# The paper's per-category tables by backbone: Tables 3-5 under MiniLM, 6-8 under Qwen3-Embedding.
CATEGORY_BACKBONES = {"all-MiniLM-L6-v2": 0, QWEN_EMBEDDING: 3}


def _category_table_id(group: str, dataset: str, embedding: str) -> tuple[str, str]:
    """(name, title) of a per-category table, from the dataset and backbone it holds, never its position: a
    backbone or a run setting (a group of its own) the paper has no table for is named by both."""
    offset = CATEGORY_BACKBONES.get(embedding)
    number = next((n for keyword, n in CATEGORY_TABLES if keyword in dataset.lower()), None)
    if group == dataset and offset is not None and number is not None:
        return f"er_t{number + offset}", f"Table {number + offset}"
    slug = re.sub(r"[^a-z0-9]+", "_", f"{group}_{embedding}".lower()).strip("_")
    return f"er_category_{slug}", f"Per-category ({group}, {embedding})"


_CATEGORY_COLUMNS = (
    Column("category", "Category", "text"),
    Column("n", "n", "int"),
    Column("contain", "Contain-Acc"),
    Column("llm", "LLM-Acc"),
)


def _category_pools(ctx: ReportContext) -> list[tuple[str, str, str, list[RunInfo], dict[str, _Pooled]]]:
    """(group, dataset, embedding, runs, accuracy pooled per category) of ExecutionRAG's register runs."""
    runs = _erag_runs(ctx, ("register",))
    by_category: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    chosen = {x.run_id for x in runs}
    for r in ctx.query("er_category").iter_rows(named=True):
        if r["run_id"] in chosen:
            by_category[r["run_id"]][r["category"]].append(r)
    embeddings = sorted({_embedding(r) for r in runs}, key=lambda e: (e != "all-MiniLM-L6-v2", e))
    out = []
    for group, in_group in ctx.groups(runs).items():
        dataset = in_group[0].dataset
        for embedding in embeddings:
            members = [r for r in in_group if _embedding(r) == embedding]
            if not members:
                continue
            pooled: dict[str, _Pooled] = defaultdict(_Pooled)
            for run in members:
                for category, parts in by_category[run.run_id].items():
                    for part in parts:
                        pooled[category].add(part)
            out.append((group, dataset, embedding, members, dict(sorted(pooled.items(),
                                                                       key=lambda kv: _category_key(kv[0])))))
    return out


def per_category(ctx: ReportContext) -> list[ReportTable]:
    """Tables 3-8: ExecutionRAG's accuracy by hop count (MuSiQue) or question type, per embedding backbone."""
    columns = _CATEGORY_COLUMNS
    sql = sql_file("er_category")
    pools = _category_pools(ctx)
    if not pools:
        return [
            does_not_apply(
                "er_t3",
                "Tables 3-8",
                "Per-category accuracy of ExecutionRAG.",
                columns,
                "no ExecutionRAG 'register' run among the chosen runs",
                sql,
            )
        ]
    tables = []
    for group, dataset, embedding, members, pooled in pools:
        name, title = _category_table_id(group, dataset, embedding)
        rows = tuple((c, p.n, p.contain, p.llm) for c, p in pooled.items())
        caption = (
            f"Per-category accuracy on {group} by "
            f"{'hop count' if 'musique' in dataset.lower() else 'question type'} "
            f"(ExecutionRAG, embedding {embedding})."
        )
        tables.append(
            ReportTable(
                name, title, caption, columns, rows, ctx.footnote(members, sum(p.n for p in pooled.values())), sql
            )
        )
    return tables


def category_points(ctx: ReportContext) -> ReportTable:
    """Figure 5's data: Tables 3-8 in one table, each category of each benchmark under each backbone."""
    columns = (Column("dataset", "Dataset", "text"), Column("embedding", "Embedding", "text"), *_CATEGORY_COLUMNS)
    caption = ("Per-category performance of ExecutionRAG under each embedding backbone: Contain-Acc and LLM-Acc "
               "by hop count (MuSiQue) or question type.")
    sql = sql_file("er_category")
    pools = _category_pools(ctx)
    if not pools:
        return does_not_apply("er_fig5", "Figure 5", caption, columns,
                              "no ExecutionRAG 'register' run among the chosen runs", sql)
    rows = tuple((group, embedding, c, p.n, p.contain, p.llm)
                 for group, _, embedding, _, pooled in pools for c, p in pooled.items())
    used = [r for *_, members, _ in pools for r in members]
    return ReportTable("er_fig5", "Figure 5", caption, columns, rows,
                       ctx.footnote(used, sum(p.n for *_, pooled in pools for p in pooled.values())), sql)


def category_figure(table: ReportTable) -> ReportFigure | None:
    """Figure 5 as Vega-Lite: Contain-Acc and LLM-Acc bars per category, one panel per benchmark and backbone."""
    if table.not_applicable:
        return None
    values = []
    for row in table.rows:
        v = dict(zip([c.key for c in table.columns], row, strict=True))
        for metric, label in (("contain", "Contain-Acc"), ("llm", "LLM-Acc")):
            if v[metric] is not None:
                values.append({"panel": f"{v['dataset']} ({v['embedding']})", "category": v["category"],
                               "metric": label, "accuracy": v[metric], "n": v["n"]})
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Per-category accuracy of ExecutionRAG",
        "data": {"values": values},
        "facet": {"field": "panel", "type": "nominal", "title": None, "columns": 3},
        "resolve": {"scale": {"x": "independent"}},
        "spec": {
            "width": 200,
            "height": 180,
            "mark": {"type": "bar"},
            "encoding": {
                "x": {"field": "category", "type": "nominal", "title": None, "sort": None},
                "xOffset": {"field": "metric"},
                "y": {"field": "accuracy", "type": "quantitative", "title": "Accuracy (%)"},
                "color": {"field": "metric", "type": "nominal", "title": None},
                "tooltip": [{"field": "category"}, {"field": "metric"}, {"field": "accuracy", "format": ".1f"},
                            {"field": "n"}],
            },
        },
    }
    return ReportFigure("er_fig5", "Figure 5", table.caption, spec, table.sql)


def failure_distribution_figure(table: ReportTable) -> ReportFigure | None:
    """Figure 2 as Vega-Lite, from a failures-by-hop table: stacked shares of each failure type per method,
    overall and at each hop count (Table 13's data: MuSiQue, all-MiniLM-L6-v2; Table 15's: Qwen3-Embedding)."""
    if table.not_applicable:
        return None
    labels = dict(FAILURE_LABELS)
    values = []
    for row in table.rows:
        v = dict(zip([c.key for c in table.columns], row, strict=True))
        for label, text in labels.items():
            if v[label]:
                values.append({"hop": v["hop"], "method": v["method"], "failure": text, "share": v[label],
                               "failures": v["n"]})
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Failure distribution by type and hop count",
        "data": {"values": values},
        "facet": {"column": {"field": "hop", "type": "nominal", "title": "Hops", "sort": None}},
        "spec": {
            "width": 110,
            "height": 220,
            "mark": {"type": "bar"},
            "encoding": {
                "x": {"field": "method", "type": "nominal", "title": None},
                "y": {"field": "share", "type": "quantitative", "stack": "zero", "title": "% of the method's failures"},
                "color": {"field": "failure", "type": "nominal", "title": "Failure type",
                          "sort": [text for _, text in FAILURE_LABELS]},
                "tooltip": [{"field": "method"}, {"field": "hop"}, {"field": "failure"},
                            {"field": "share", "format": ".1f"}, {"field": "failures"}],
            },
        },
    }
    name, title = ("er_fig2", "Figure 2") if table.name == "er_t13" else (f"er_fig2_{table.name}", "Figure 2")
    return ReportFigure(name, title, table.caption, spec, table.sql)


def _category_key(category: str) -> tuple[int, str]:
    head = category.split("-", 1)[0]
    return (0, f"{int(head):04d}") if head.isdigit() else (1, category)


def efficiency(ctx: ReportContext) -> ReportTable:
    """Table 9: retrieved tokens and API cost per question, per method and benchmark."""
    groups = list(ctx.groups())
    columns = (
        Column("method", "Method", "text"),
        *[
            c
            for g in groups
            for c in (Column(f"{g}_tokens", f"{g} Tokens", "int"), Column(f"{g}_cost", f"{g} Cost", "usd", 4))
        ],
    )
    caption = (
        "Retrieval efficiency comparison on three benchmarks. Tokens: average retrieved tokens per question; "
        "Cost: average API cost per question (USD)."
    )
    stats = _accuracy_rows(ctx)
    grouped = _by_group_and_method(ctx)
    rows = []
    for method in _methods(ctx):
        row: list[object] = [method]
        for g in groups:
            pooled = _pool(stats, grouped[g].get(method, []))
            row += [None if pooled.tokens is None else round(pooled.tokens), pooled.cost]
        rows.append(tuple(row))
    note = "Retrieved tokens: new read passages plus snippets, about 4 characters a token (run_efficiency)."
    return ReportTable(
        "er_t9",
        "Table 9",
        caption,
        columns,
        tuple(rows),
        ctx.footnote(ctx.runs, sum(r["n"] for r in stats.values()), note),
        _accuracy_sql(),
    )


def ablation_efficiency(ctx: ReportContext) -> ReportTable:
    """Table 10: tokens and cost of the ablation variants next to their accuracy."""
    columns = (
        Column("dataset", "Dataset", "text"),
        Column("variant", "Variant", "text"),
        Column("tokens", "Tokens", "int"),
        Column("cost", "Cost", "usd", 4),
        Column("llm", "LLM-Acc"),
        Column("contain", "Contain-Acc"),
    )
    caption = (
        "Retrieval efficiency under ablation on MuSiQue: token consumption and cost alongside the accuracy "
        "numbers of Table 2."
    )
    sql = _accuracy_sql()
    runs = _erag_runs(ctx, ABLATIONS, one_backbone=True)
    if len({r.condition for r in runs}) < 2:
        return does_not_apply(
            "er_t10", "Table 10", caption, columns, "fewer than two ExecutionRAG conditions among the chosen runs", sql
        )
    stats = _accuracy_rows(ctx)
    rows, n = [], 0
    for group, members in ctx.groups(runs).items():
        for condition in ABLATIONS:
            chosen = [r for r in members if r.condition == condition]
            if chosen:
                p = _pool(stats, chosen)
                n += p.n
                rows.append(
                    (
                        group,
                        method_name(chosen[0]),
                        None if p.tokens is None else round(p.tokens),
                        p.cost,
                        p.llm,
                        p.contain,
                    )
                )
    return ReportTable("er_t10", "Table 10", caption, columns, tuple(rows), ctx.footnote(runs, n), sql)


def embedding_efficiency(ctx: ReportContext) -> ReportTable:
    """Table 11: accuracy and tokens of each method under each embedding backbone."""
    groups = list(ctx.groups())
    columns = (
        Column("embedding", "Embedding", "text"),
        Column("method", "Method", "text"),
        *[c for g in groups for c in (Column(f"{g}_llm", f"{g} LLM-Acc"), Column(f"{g}_tokens", f"{g} Tokens", "int"))],
    )
    caption = (
        "Efficiency comparison across embedding models: LLM-Acc (%) and retrieved tokens per question for "
        "each method and backbone."
    )
    sql = _accuracy_sql()
    embeddings = sorted({_embedding(r) for r in ctx.runs})
    if len(embeddings) < 2:
        return does_not_apply(
            "er_t11", "Table 11", caption, columns, f"every chosen run uses one embedding model ({embeddings[0]})", sql
        )
    stats = _accuracy_rows(ctx)
    rows = []
    for embedding in embeddings:
        members = [r for r in ctx.runs if _embedding(r) == embedding]
        grouped = _by_group_and_method(ctx, members)
        for method in _methods(ctx, members):
            row: list[object] = [embedding, method]
            for g in groups:
                p = _pool(stats, grouped.get(g, {}).get(method, []))
                row += [p.llm, None if p.tokens is None else round(p.tokens)]
            rows.append(tuple(row))
    return ReportTable(
        "er_t11",
        "Table 11",
        caption,
        columns,
        tuple(rows),
        ctx.footnote(ctx.runs, sum(r["n"] for r in stats.values())),
        sql,
    )


def _failure_counts(ctx: ReportContext) -> dict[str, dict[tuple[int, str], int]]:
    out: dict[str, dict[tuple[int, str], int]] = defaultdict(dict)
    for r in ctx.query("er_failures").iter_rows(named=True):
        out[r["run_id"]][(r["hop_count"], r["label"])] = r["n"]
    return out


def _failure_groups(ctx: ReportContext) -> list[tuple[str, str, dict[str, list[RunInfo]]]]:
    out = []
    embeddings = sorted({_embedding(r) for r in ctx.runs}, key=lambda e: (e != "all-MiniLM-L6-v2", e))
    for group, members in ctx.groups().items():
        for embedding in embeddings:
            chosen = [r for r in members if _embedding(r) == embedding]
            if chosen:
                out.append((group, embedding, _methods(ctx, chosen)))
    return out


# The paper's failure tables by what they hold (App. E): MuSiQue under each embedding backbone.
FAILURE_TABLES = {("musique", "all-MiniLM-L6-v2"): (12, 13), ("musique", QWEN_EMBEDDING): (14, 15)}


def _failure_table_id(group: str, embedding: str, by_hop: bool) -> tuple[str, str]:
    """(name, title) of a failure table, from the (dataset, backbone) it holds, never its position:
    Tables 12/13 are MuSiQue + MiniLM, 14/15 MuSiQue + Qwen3-Embedding; any other pair is named by both."""
    dataset = "musique" if "musique" in group.lower() else group
    # A group split by a run setting (`musique [model=...]`) is one of several: named by group and backbone.
    numbers = None if "[" in group else FAILURE_TABLES.get((dataset, embedding))
    if numbers:
        number = numbers[1] if by_hop else numbers[0]
        return f"er_t{number}", f"Table {number}"
    slug = re.sub(r"[^a-z0-9]+", "_", f"{group}_{embedding}".lower()).strip("_")
    kind = "hops" if by_hop else "failures"
    return f"er_{kind}_{slug}", f"{'Failures by hop' if by_hop else 'Failures'} ({group}, {embedding})"


def failure_analysis(ctx: ReportContext) -> list[ReportTable]:
    """Tables 12/14: wrong answers by failure category, count and share of each method's failures."""
    sql = sql_file("er_failures")
    counts = _failure_counts(ctx)
    tables = []
    for group, embedding, methods in _failure_groups(ctx):
        columns = (
            Column("category", "Failure type", "text"),
            *[c for m in methods for c in (Column(f"{m}_n", f"{m} n", "int"), Column(f"{m}_pct", f"{m} %"))],
        )
        totals = {
            m: {
                label: sum(
                    counts[r.run_id].get((h, label), 0) for r in runs for (h, lab) in counts[r.run_id] if lab == label
                )
                for label, _ in FAILURE_LABELS
            }
            for m, runs in methods.items()
        }
        used = [label for label, _ in FAILURE_LABELS if any(totals[m][label] for m in methods)]
        name, title = _failure_table_id(group, embedding, by_hop=False)
        caption = (
            f"Failure case analysis on {group} (embedding {embedding}). Percentages are relative to total "
            "failures for each method."
        )
        if not used:
            tables.append(
                does_not_apply(name, title, caption, columns, "no wrong, judged trajectory in these runs", sql)
            )
            continue
        rows = []
        for label, text in FAILURE_LABELS:
            if label not in used:
                continue
            row: list[object] = [text]
            for m in methods:
                total = sum(totals[m].values())
                row += [totals[m][label], PTS * totals[m][label] / total if total else None]
            rows.append(tuple(row))
        rows.append(
            (
                "Total",
                *[v for m in methods for v in (sum(totals[m].values()), PTS if sum(totals[m].values()) else None)],
            )
        )
        n = sum(sum(t.values()) for t in totals.values())
        note = (
            "Failure: LLM-Acc = 0 (Contain-Acc = 0 without an LLM verdict), one label each by the priority "
            "error > judge error > gave up > reasoning error > missing evidence (failure_erag); the total is "
            "every wrong answer, errored trajectories included."
        )
        tables.append(
            ReportTable(
                name,
                title,
                caption,
                columns,
                tuple(rows),
                ctx.footnote([r for rs in methods.values() for r in rs], n, note),
                sql,
            )
        )
    return tables


def failures_by_hop(ctx: ReportContext) -> list[ReportTable]:
    """Tables 13/15: the failure distribution by hop count (% of each method's failures at that hop)."""
    sql = sql_file("er_failures")
    counts = _failure_counts(ctx)
    columns = (
        Column("hop", "Hops", "text"),
        Column("method", "Method", "text"),
        Column("n", "Failures", "int"),
        *[Column(label, text + " (%)") for label, text in FAILURE_LABELS],
    )
    tables = []
    for group, embedding, methods in _failure_groups(ctx):
        name, title = _failure_table_id(group, embedding, by_hop=True)
        caption = f"Failure distribution by hop count (%, {group}, embedding {embedding})."
        hops = sorted({h for rs in methods.values() for r in rs for (h, _) in counts[r.run_id]})
        if not hops or hops == [-1]:
            tables.append(
                does_not_apply(
                    name, title, caption, columns, "no wrong trajectory whose question carries a hop count", sql
                )
            )
            continue
        rows, n = [], 0
        for hop in [*hops, None]:
            for m, runs in methods.items():
                per = {
                    label: sum(
                        counts[r.run_id].get((h, label), 0)
                        for r in runs
                        for (h, lab) in counts[r.run_id]
                        if lab == label and (hop is None or h == hop)
                    )
                    for label, _ in FAILURE_LABELS
                }
                total = sum(per.values())
                if not total:
                    continue
                if hop is not None:
                    n += total
                rows.append(
                    (
                        "all" if hop is None else ("(none)" if hop == -1 else str(hop)),
                        m,
                        total,
                        *[PTS * per[label] / total for label, _ in FAILURE_LABELS],
                    )
                )
        tables.append(
            ReportTable(
                name,
                title,
                caption,
                columns,
                tuple(rows),
                ctx.footnote([r for rs in methods.values() for r in rs], n),
                sql,
            )
        )
    return tables


def pareto_points(ctx: ReportContext) -> ReportTable:
    """Figure 4's data: accuracy against retrieved tokens per question, per method, with the Pareto frontier."""
    columns = (
        Column("method", "Method", "text"),
        Column("embedding", "Embedding", "text"),
        Column("dataset", "Dataset", "text"),
        Column("tokens", "Tokens", "int"),
        Column("accuracy", "LLM-Acc"),
        Column("frontier", "On frontier", "text"),
    )
    caption = (
        "Accuracy-efficiency trade-off: LLM-Evaluation Accuracy (%) against retrieved tokens per question; "
        "the Pareto frontier per benchmark."
    )
    sql = _accuracy_sql()
    stats = _accuracy_rows(ctx)
    rows = []
    for group, members in ctx.groups().items():
        points = []
        for embedding in sorted({_embedding(r) for r in members}):
            for method, runs in _methods(ctx, [r for r in members if _embedding(r) == embedding]).items():
                p = _pool(stats, runs)
                accuracy = p.llm if p.llm is not None else p.contain
                if p.tokens is not None and accuracy is not None:
                    points.append((method, embedding, group, p.tokens, accuracy))
        if not points:
            continue
        mask = pareto_frontier([pt[3] for pt in points], [pt[4] for pt in points])
        rows += [
            (m, e, g, round(t), a, "yes" if on else "no") for (m, e, g, t, a), on in zip(points, mask, strict=False)
        ]
    if not rows:
        return does_not_apply(
            "er_pareto", "Figure 4", caption, columns, "no chosen run has both an accuracy and retrieved tokens", sql
        )
    note = "Accuracy: LLM-Acc, or Contain-Acc for a method without LLM verdicts."
    return ReportTable(
        "er_pareto",
        "Figure 4",
        caption,
        columns,
        tuple(rows),
        ctx.footnote(ctx.runs, sum(r["n"] for r in stats.values()), note),
        sql,
    )


def pareto_figure(table: ReportTable) -> ReportFigure | None:
    """The Pareto scatter as Vega-Lite: one point per method, the frontier as a line, one panel per dataset."""
    if table.not_applicable:
        return None
    values = [dict(zip([c.key for c in table.columns], row, strict=False)) for row in table.rows]
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Accuracy vs retrieved tokens per question",
        "data": {"values": values},
        "facet": {"column": {"field": "dataset", "type": "nominal", "title": None}},
        "spec": {
            "width": 260,
            "height": 220,
            "layer": [
                {
                    "mark": {"type": "line", "color": "#888", "strokeDash": [4, 3]},
                    "transform": [{"filter": "datum.frontier == 'yes'"}],
                    "encoding": {
                        "x": {"field": "tokens", "type": "quantitative"},
                        "y": {"field": "accuracy", "type": "quantitative"},
                        "order": {"field": "tokens"},
                    },
                },
                {
                    "mark": {"type": "point", "filled": True, "size": 70},
                    "encoding": {
                        "x": {"field": "tokens", "type": "quantitative", "title": "Retrieved tokens / question"},
                        "y": {
                            "field": "accuracy",
                            "type": "quantitative",
                            "title": "LLM-Acc (%)",
                            "scale": {"zero": False},
                        },
                        "color": {"field": "method", "type": "nominal", "title": "Method"},
                        "shape": {"field": "embedding", "type": "nominal", "title": "Embedding"},
                        "tooltip": [{"field": "method"}, {"field": "tokens"}, {"field": "accuracy", "format": ".1f"}],
                    },
                },
            ],
        },
    }
    return ReportFigure("er_pareto", "Figure 4", table.caption, spec, table.sql)


def _funnel_reference(run: RunInfo) -> tuple[str | None, str | None, str] | None:
    """The (controller, condition, backbone) a method's funnel is paired with: ExecutionRAG against A-RAG,
    an ablation against the full register; None for the others."""
    if run.controller != "execution_rag":
        return None
    reference = ("arag", "baseline") if run.condition == "register" else ("execution_rag", "register")
    return (*reference, _embedding(run))


def evidence_funnel_stages(ctx: ReportContext) -> ReportTable:
    """Where the evidence was lost: per method the share of gold passages reaching each funnel stage, and the
    paired change per stage (ExecutionRAG vs A-RAG, each ablation vs ExecutionRAG; McNemar, seeds pooled)."""
    caption = (
        "Where the evidence was lost: share of gold passages queried for, retrieved, shown in the top-k, read and "
        "used, per method; the change per stage of ExecutionRAG against A-RAG and of each ablation against "
        "ExecutionRAG, paired on questions (McNemar)."
    )
    arms: list[FunnelArm] = []
    for group, methods in _by_group_and_method(ctx).items():
        by_key = {(runs[0].controller, runs[0].condition, _embedding(runs[0])): (label, runs)
                  for label, runs in methods.items()}
        plain = {key: FunnelArm(group, label, runs) for key, (label, runs) in by_key.items()}
        for key, (label, runs) in by_key.items():
            ref_key = _funnel_reference(runs[0])
            reference = plain.get(ref_key) if ref_key is not None else None
            arms.append(FunnelArm(group, label, runs, reference) if reference is not None else plain[key])
    return funnel_table(ctx, "er_funnel", "Evidence funnel", caption, arms)


def budget_check(ctx: ReportContext) -> list[str]:
    """The matched-budget check: per dataset, do the A-RAG and ExecutionRAG runs share one context-budget
    rule and limit? A note per dataset where they do not, or where a run does not record its rule."""
    budgets = {r["run_id"]: r for r in ctx.query("er_budget").iter_rows(named=True)}
    notes = []
    for group, runs in ctx.groups().items():
        arms = [r for r in runs if r.controller in ("arag", "execution_rag") and r.run_id in budgets]
        if not arms:
            continue
        unrecorded = [r.run_id for r in arms if "unrecorded" in budgets[r.run_id]["rules"]]
        settings = {r.run_id: (tuple(budgets[r.run_id]["rules"]), tuple(budgets[r.run_id]["budgets"])) for r in arms}
        if unrecorded:
            notes.append(
                f"Budget not checked on {group}: run(s) {', '.join(unrecorded)} do not record their context-budget "
                "rule (logs from before the one rule, or imported), so A-RAG and ExecutionRAG may have run under "
                "different budgets (older logs: A-RAG its current context, ExecutionRAG the sum of every prompt)."
            )
        elif len(set(settings.values())) > 1 and len({r.controller for r in arms}) > 1:
            detail = "; ".join(f"{rid}: {'/'.join(v[0])} {'/'.join(v[1])}" for rid, v in settings.items())
            notes.append(
                f"BUDGET NOT MATCHED on {group}: the arms ran under different context-budget rules or limits "
                f"({detail}); Gave Up shares and accuracy are not comparable."
            )
    return notes


def variant_check(ctx: ReportContext) -> list[str]:
    """The matched-variant check of Tables 2 and 10: per group, do the ablation arms run the variant of the
    full system (ER Table 2 removes one component of one system)? A note per group where they do not, or
    where a run does not record its variant."""
    variants = {r["run_id"]: tuple(r["variants"]) for r in ctx.query("er_variant").iter_rows(named=True)}
    notes = []
    for group, arms in ctx.groups(_erag_runs(ctx, ABLATIONS, one_backbone=True)).items():
        unrecorded = [r.run_id for r in arms if "unrecorded" in variants.get(r.run_id, ("unrecorded",))]
        found = {r.run_id: variants.get(r.run_id, ()) for r in arms}
        if unrecorded:
            notes.append(f"Variant not checked on {group}: run(s) {', '.join(unrecorded)} do not record the "
                         "ExecutionRAG variant they ran (agent or composed).")
        elif len(set(found.values())) > 1:
            detail = "; ".join(f"{rid} ({method_name(next(r for r in arms if r.run_id == rid))}): {'/'.join(v)}"
                               for rid, v in found.items())
            notes.append(f"VARIANT NOT MATCHED on {group}: the ablation arms ran different ExecutionRAG variants "
                         f"({detail}); a row does not remove one component of the system beside it.")
    return notes


def execution_rag_report(ctx: ReportContext) -> list[ReportTable]:
    """Every ExecutionRAG table, in paper order, over the context's runs; the matched-budget check's notes
    are printed under each, the matched-variant check's under the ablation tables (2 and 10)."""
    tables = _tables(ctx)
    notes = tuple(budget_check(ctx))
    variant_notes = tuple(variant_check(ctx))
    return [replace(t, notes=(*t.notes, *notes, *(variant_notes if t.name in ABLATION_TABLES else ())))
            if notes or (variant_notes and t.name in ABLATION_TABLES) else t for t in tables]


def _tables(ctx: ReportContext) -> list[ReportTable]:
    return [
        main_results(ctx),
        backbone_results(ctx),
        ablations(ctx),
        *per_category(ctx),
        category_points(ctx),
        efficiency(ctx),
        ablation_efficiency(ctx),
        embedding_efficiency(ctx),
        *failure_analysis(ctx),
        *failures_by_hop(ctx),
        pareto_points(ctx),
        evidence_funnel_stages(ctx),
    ]


__all__ = [
    "ReportFigure",
    "ablation_efficiency",
    "budget_check",
    "variant_check",
    "ablations",
    "backbone_results",
    "category_figure",
    "category_points",
    "efficiency",
    "embedding_efficiency",
    "evidence_funnel_stages",
    "execution_rag_report",
    "failure_analysis",
    "failure_distribution_figure",
    "failures_by_hop",
    "main_results",
    "method_name",
    "pareto_figure",
    "pareto_points",
    "per_category",
]
