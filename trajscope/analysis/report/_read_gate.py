"""The Read-Gate paper's tables (Before Reasoning Can Fail): T1-T5, the co-occurrence table of §5.1, T17, T18."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from trajscope.analysis.queries import (
    EXTRACTOR_AGREEMENT_SQL,
    JUDGE_ROBUSTNESS_SQL,
    POOLED_COOCCURRENCE_SQL,
    POST_READ_STRATA_SQL,
    extractor_agreement,
    pooled_cooccurrence,
    post_read_odds_ratio,
)
from trajscope.analysis.queries import (
    judge_robustness as judge_robustness_table,
)
from trajscope.analysis.stats import (
    adjust_p_values,
    judge_error_rates,
    rogan_gladen,
)
from trajscope.format import GATE_EXTRACTOR

from ._context import ReportContext, RunInfo, frame, sql_file
from ._funnel import FunnelArm, funnel_table
from ._paired import assumption_notes, mcnemar_applies, paired_comparison
from ._table import Column, Interval, ReportFigure, ReportTable, WithDelta, does_not_apply

PTS = 100.0
BASELINE, GATE, INJECTION, STRICT = "baseline", "read_gate", "context_injection", "strict_prompt"
ACCURACY_NOTE = (
    "Accuracy: LLM-Acc where an LLM verdict exists, else Contain-Acc (trajectory_correctness); "
    "paired on question ids; 95% paired bootstrap CI (1,000 resamples, seed 42; questions resampled "
    "as clusters when a condition has several seeds); McNemar exact p, pooled over seeds."
)
DATASET = Column("dataset", "Dataset", "text")
NO_INTERVAL = Interval(None, None, None)


def _by_condition(ctx: ReportContext, runs: list[RunInfo]) -> dict[str, list[RunInfo]]:
    out: dict[str, list[RunInfo]] = defaultdict(list)
    for run in runs:
        out[run.condition or ""].append(run)
    return out


def _read_runs(ctx: ReportContext) -> list[RunInfo]:
    return [r for r in ctx.runs if r.read_action]


# Every gate condition the paper defines pairs with the baseline: Read-Gate itself, +lowev and the full
# gate set (the demo runs `full`); a dataset with several gets one row per gate condition.
GATE_CONDITIONS = (GATE, "lowev", "full")


def _gate_pairs(ctx: ReportContext) -> list[tuple[str, list[RunInfo], list[RunInfo]]]:
    out = []
    for key, runs in ctx.groups().items():
        conditions = _by_condition(ctx, runs)
        gates = [c for c in GATE_CONDITIONS if conditions.get(c)]
        for condition in gates:
            if conditions.get(BASELINE):
                label = key if condition == GATE and len(gates) == 1 else f"{key} ({condition})"
                out.append((label, conditions[BASELINE], conditions[condition]))
    return out


def _missing_gate_pair() -> str:
    return (
        f"no dataset has both a '{BASELINE}' run and a gate run ({', '.join(GATE_CONDITIONS)}) among the chosen "
        "runs (the table pairs them on question ids)"
    )


def _delta_table(
    ctx: ReportContext, name: str, title: str, caption: str, subset: str | None, with_discipline: bool
) -> ReportTable:
    columns = [
        DATASET,
        Column("n", "n", "int"),
        Column("no_gate", "No gate"),
        Column("read_gate", "Read-Gate"),
        Column("delta", "Δ [95% CI]", "interval"),
        Column("mcnemar_p", "McNemar p", "p"),
        Column("holm_p", "Holm p", "p"),
    ]
    if with_discipline:
        columns.append(Column("baseline_discipline", "Baseline discipline error (%)"))
    columns_t = tuple(columns)
    sql = sql_file("report_outcomes") + ("\n" + sql_file("rg_labels") + "\n" + sql_file("rg_accuracy")
                                         if with_discipline else "")
    pairs = _gate_pairs(ctx)
    if not pairs:
        return does_not_apply(name, title, caption, columns_t, _missing_gate_pair(), sql)
    if not any(r.read_action for _, base, _ in pairs for r in base):
        return does_not_apply(
            name,
            title,
            caption,
            columns_t,
            "the baseline runs have no read action (or it is unknown: run_capabilities), "
            "so zero-read and discipline do not apply",
            sql,
        )
    discipline, judged = {}, {}
    if with_discipline:
        discipline, judged = _discipline_counts(ctx), _accuracy(ctx)
    results, used = [], []
    for key, base, gate in pairs:
        result = paired_comparison(ctx, base, gate, subset=subset)
        results.append((key, base, result))
        used += base + gate
    # A row without a discordant pair has no McNemar p, and takes no part in Holm's correction.
    holm = adjust_p_values([r.mcnemar_p if r is not None and mcnemar_applies(r) else np.nan for _, _, r in results],
                           "holm").adjusted
    rows, warnings = [], []
    n_total = 0
    for (key, base, result), holm_p in zip(results, holm, strict=False):
        row: list[object] = [key]
        warnings += assumption_notes(key, result)
        if result is None:
            row += [0, None, None, Interval(None, None, None), None, None]
        else:
            n_total += 2 * result.n_pairs
            ci = result.delta
            tested = mcnemar_applies(result)
            row += [
                result.n_pairs,
                PTS * result.acc_a,
                PTS * result.acc_b,
                Interval(PTS * ci.delta, PTS * ci.low, PTS * ci.high),
                result.mcnemar_p if tested else None,
                float(holm_p) if tested else None,
            ]
        if with_discipline:
            # P_disc as failure_plane defines it: discipline labels (regex) over the judged trajectories,
            # the population the delta beside it is measured on (an unjudged one is no failure).
            read = [r for r in base if r.read_action]
            total = sum((judged.get(r.run_id) or {}).get("n_judged") or 0 for r in read)
            row.append(PTS * sum(discipline.get(r.run_id, 0) for r in read) / total if total else None)
        rows.append(tuple(row))
    extra = ACCURACY_NOTE + " Holm: across the table's datasets."
    if subset:
        extra += (
            " Subset: questions the baseline finalised voluntarily (end reason final) without a read; "
            "a rescue capacity, not a population effect."
        )
    if with_discipline:
        extra += (" Baseline discipline error: share of the baseline's judged trajectories labelled discipline "
                  "(regex), as P_disc (failure_plane).")
    return ReportTable(name, title, caption, columns_t, tuple(rows), ctx.footnote(used, n_total, extra), sql,
                       notes=tuple(warnings))


def _labels(ctx: ReportContext) -> list[dict]:
    return list(ctx.query("rg_labels").iter_rows(named=True))


def _discipline_counts(ctx: ReportContext) -> dict[str, int]:
    """Per run: wrong trajectories labelled discipline by the regex extractor."""
    counts: dict[str, int] = defaultdict(int)
    for r in _labels(ctx):
        if r["extractor"] == "regex":
            counts[r["run_id"]] += r["n_discipline"]
    return counts


def zero_read_rescue(ctx: ReportContext) -> ReportTable:
    """Table 1: forcing a read on the baseline's voluntary zero-read finals."""
    return _delta_table(
        ctx,
        "rg_t1",
        "Table 1",
        "Zero-read rescue: accuracy (%) on the questions the unconstrained agent finalised "
        "without reading, without and with Read-Gate.",
        "voluntary_zero_read",
        False,
    )


def population_delta(ctx: ReportContext) -> ReportTable:
    """Table 3: the population-level delta with the baseline's discipline error."""
    return _delta_table(
        ctx,
        "rg_t3",
        "Table 3",
        "Population-level effect on the full, unselected cells: accuracy (%) without and with "
        "Read-Gate, and the baseline discipline error.",
        None,
        True,
    )


def model_transfer(ctx: ReportContext) -> ReportTable:
    """Table 12 (App. D.1): Read-Gate's population delta per model, each model's arms paired within its group."""
    columns = (
        DATASET,
        Column("model", "Model", "text"),
        Column("effort", "Reasoning", "text"),
        Column("gate", "Gate", "text"),
        Column("n", "n", "int"),
        Column("no_gate", "No gate"),
        Column("read_gate", "Read-Gate"),
        Column("delta", "Δ [95% CI]", "interval"),
        Column("mcnemar_p", "McNemar p", "p"),
    )
    caption = ("Cross-model transfer: accuracy (%) without and with the gate for each model, paired on question "
               "ids within the model's own runs.")
    sql = sql_file("report_outcomes")
    pairs = _gate_pairs(ctx)
    models = sorted({r.model or "(none)" for _, base, gate in pairs for r in base + gate})
    if len(models) < 2:
        reason = (_missing_gate_pair() if not pairs else
                  f"every baseline / gate pair of the chosen runs is of one model ({models[0]}): "
                  "transfer needs gate pairs of two or more models")
        return does_not_apply("rg_t12", "Table 12", caption, columns, reason, sql)
    rows, used, n_total, warnings = [], [], 0, []
    for key, base, gate in pairs:
        result = paired_comparison(ctx, base, gate)
        used += base + gate
        warnings += assumption_notes(key, result)
        cells: list[object] = [0, None, None, NO_INTERVAL, None]
        if result is not None:
            n_total += 2 * result.n_pairs
            ci = result.delta
            cells = [result.n_pairs, PTS * result.acc_a, PTS * result.acc_b,
                     Interval(PTS * ci.delta, PTS * ci.low, PTS * ci.high),
                     result.mcnemar_p if mcnemar_applies(result) else None]
        rows.append((ctx.dataset_key(base[0]), base[0].model or "(none)", base[0].reasoning_effort or "",
                     gate[0].condition or "", *cells))
    return ReportTable("rg_t12", "Table 12", caption, columns, tuple(rows),
                       ctx.footnote(used, n_total, ACCURACY_NOTE), sql, notes=tuple(warnings))


def _accuracy(ctx: ReportContext) -> dict[str, dict]:
    return {r["run_id"]: r for r in ctx.query("rg_accuracy").iter_rows(named=True)}


def _pooled_accuracy(stats: dict[str, dict], runs: list[RunInfo]) -> tuple[float | None, int]:
    judged = sum(stats[r.run_id]["n_judged"] for r in runs if r.run_id in stats)
    correct = sum(stats[r.run_id]["n_correct"] or 0 for r in runs if r.run_id in stats)
    return (PTS * correct / judged if judged else None), judged


def mechanism_ablation(ctx: ReportContext) -> ReportTable:
    """Table 2: no gate, Read-Gate and context injection side by side (change vs no gate)."""
    columns = (
        DATASET,
        Column("no_gate", "No Read-Gate"),
        Column("read_gate", "Read-Gate", "with_delta"),
        Column("context_injection", "Context injection", "with_delta"),
    )
    caption = (
        "Mechanism ablation: accuracy (%) without the gate, with Read-Gate and with passive context "
        "injection of the top-ranked passage (change against no gate)."
    )
    sql = sql_file("rg_accuracy")
    stats = _accuracy(ctx)
    rows, used, n = [], [], 0
    for key, runs in ctx.groups().items():
        conditions = _by_condition(ctx, runs)
        if not conditions.get(BASELINE) or not (conditions.get(GATE) or conditions.get(INJECTION)):
            continue
        base, n_base = _pooled_accuracy(stats, conditions[BASELINE])
        row: list[object] = [key, base]
        n += n_base
        used += conditions[BASELINE]
        for condition in (GATE, INJECTION):
            acc, n_c = _pooled_accuracy(stats, conditions.get(condition, []))
            n += n_c
            used += conditions.get(condition, [])
            row.append(WithDelta(acc, None if acc is None or base is None else acc - base))
        rows.append(tuple(row))
    if not rows:
        return does_not_apply(
            "rg_t2",
            "Table 2",
            caption,
            columns,
            "no dataset has a 'baseline' run with a 'read_gate' or 'context_injection' run",
            sql,
        )
    note = "Accuracy: LLM-Acc where judged, else Contain-Acc; pooled over seeds; differences are unpaired."
    return ReportTable("rg_t2", "Table 2", caption, columns, tuple(rows), ctx.footnote(used, n, note), sql)


def stratified_odds_ratio(ctx: ReportContext) -> ReportTable:
    """Table 4: marginal OR of post-gold-read failure (Read-Gate vs no gate) and the Mantel-Haenszel OR
    across read-exposure strata (1, 2, 3, 4+ passages read)."""
    columns = (
        DATASET,
        Column("n", "n", "int"),
        Column("marginal_or", "Marginal OR [95% CI]", "plain_interval", 2),
        Column("n_read", "n (read ≥ 1)", "int"),
        Column("mh_or", "MH OR [95% CI]", "plain_interval", 2),
        Column("cmh_p", "CMH p", "p"),
    )
    caption = (
        "Movement across the failure plane: odds ratio of a post-gold-read failure under Read-Gate "
        "against no gate, marginally and stratified by read exposure (Mantel-Haenszel)."
    )
    sql = POST_READ_STRATA_SQL
    pairs = _gate_pairs(ctx)
    if not pairs:
        return does_not_apply("rg_t4", "Table 4", caption, columns, _missing_gate_pair(), sql)
    rows, used, n_total = [], [], 0
    for key, base, gate in pairs:
        used += base + gate
        # The one Table 4 definition (analysis.queries): A = no gate, B = Read-Gate, seeds pooled per arm.
        odds = post_read_odds_ratio(ctx.con, [r.run_id for r in base], [r.run_id for r in gate], extractor="regex")
        marginal, mh = odds.marginal, odds.result
        n_total += marginal.n if marginal else 0
        rows.append(
            (
                key,
                marginal.n if marginal else 0,
                Interval(marginal.odds_ratio, marginal.ci_low, marginal.ci_high) if marginal else NO_INTERVAL,
                odds.n_stratified,
                Interval(mh.odds_ratio, mh.ci_low, mh.ci_high) if mh else NO_INTERVAL,
                mh.cmh_p if mh else None,
            )
        )
    note = (
        "Event: a judged trajectory labelled post-gold-read (regex extractor); exposure B = Read-Gate. "
        "Marginal OR with Woolf CI over all judged trajectories; MH OR with Robins-Breslow-Greenland CI "
        "over those that read at least one passage."
    )
    return ReportTable("rg_t4", "Table 4", caption, columns, tuple(rows), ctx.footnote(used, n_total, note), sql)


def parameter_sweep(ctx: ReportContext) -> ReportTable:
    """Table 5: zero-read finalisation and paired net correctness change along any run parameter."""
    columns = (
        DATASET,
        Column("condition", "Condition", "text"),
        Column("value", "Value", "text"),
        Column("n", "n", "int"),
        Column("zero_read", "Zero-read (%)"),
        Column("zero_read_delta", "Δ zero-read (pp)", "signed"),
        Column("accuracy", "Accuracy (%)"),
        Column("net_delta", "Net Δ correct", "int"),
    )
    caption = (
        "Sweep of a run parameter (the paper: thinking budget): zero-read finalisation and the paired "
        "net change in correct answers against the sweep's first value."
    )
    sql = sql_file("rg_sweep")
    if not ctx.sweep:
        return does_not_apply(
            "rg_t5",
            "Table 5",
            caption,
            columns,
            "no sweep parameter named (give --sweep PARAM, e.g. reasoning_effort)",
            sql,
        )
    values = {
        r["run_id"]: r["value"]
        for r in frame(ctx.con, sql, {"runs": ctx.run_ids, "param": ctx.sweep}).iter_rows(named=True)
    }
    stats = _accuracy(ctx)
    rows, used, n_total = [], [], 0
    for key, runs in ctx.groups(across=(ctx.sweep,)).items():  # the swept parameter varies within a group
        for condition, cond_runs in _by_condition(ctx, runs).items():
            by_value: dict[str, list[RunInfo]] = defaultdict(list)
            for run in cond_runs:
                if values.get(run.run_id) is not None:
                    by_value[values[run.run_id]].append(run)
            if len(by_value) < 2:
                continue
            ordered = sorted(by_value, key=_sweep_order)
            first = by_value[ordered[0]]
            first_zero = _zero_read(stats, first)
            for value in ordered:
                group = by_value[value]
                used += group
                n = sum(stats[r.run_id]["n"] for r in group if r.run_id in stats)
                n_total += n
                zero = _zero_read(stats, group)
                acc, _ = _pooled_accuracy(stats, group)
                result = paired_comparison(ctx, first, group) if value != ordered[0] else None
                net = (
                    None
                    if value != ordered[0] and result is None
                    else (0 if result is None else result.b_only - result.a_only)
                )
                rows.append(
                    (
                        key,
                        condition,
                        str(value),
                        n,
                        zero,
                        None if zero is None or first_zero is None else zero - first_zero,
                        acc,
                        net,
                    )
                )
    if not rows:
        return does_not_apply(
            "rg_t5",
            "Table 5",
            caption,
            columns,
            f"no dataset and condition has runs with two or more values of {ctx.sweep!r}",
            sql,
        )
    note = (
        f"Swept parameter: {ctx.sweep}. Zero-read: voluntary finals without a read. Net Δ correct: "
        "questions fixed minus questions broken against the first value, paired on question ids."
    )
    return ReportTable("rg_t5", "Table 5", caption, columns, tuple(rows), ctx.footnote(used, n_total, note), sql)


def _sweep_order(value: str) -> tuple[int, float | str]:
    try:
        return (0, float(value))
    except ValueError:
        order = {"minimal": 0, "low": 1, "medium": 2, "high": 3}
        return (1, order.get(value, 99)) if value in order else (2, value)


def _zero_read(stats: dict[str, dict], runs: list[RunInfo]) -> float | None:
    # A run without a read action has no zero-read rate (NULL): it is left out, not counted as 0.
    runs = [r for r in runs if r.run_id in stats and stats[r.run_id]["zero_read_final_rate"] is not None]
    n = sum(stats[r.run_id]["n"] for r in runs if r.run_id in stats)
    zero = sum(stats[r.run_id]["zero_read_final_rate"] * stats[r.run_id]["n"] for r in runs if r.run_id in stats)
    return PTS * zero / n if n else None


def cooccurrence(ctx: ReportContext) -> ReportTable:
    """§5.1: discipline and post-gold-read failures as a multi-label table per extractor, with kappa."""
    columns = (
        Column("extractor", "Entity extractor", "text"),
        Column("n_wrong", "Wrong", "int"),
        Column("discipline_only", "Discipline-only (%)"),
        Column("post_only", "Post-only (%)"),
        Column("both", "Both co-occur (%)"),
        Column("neither", "Neither (%)"),
    )
    caption = (
        "The two failure indicators as orthogonal axes: wrong trajectories that are discipline failures "
        "only, post-gold-read failures only, both, or neither."
    )
    sql = POOLED_COOCCURRENCE_SQL + "\n" + EXTRACTOR_AGREEMENT_SQL
    read_runs = _read_runs(ctx)
    if not read_runs:
        return does_not_apply(
            "rg_cooc",
            "§5.1",
            caption,
            columns,
            "none of the chosen runs has a read action, so there is no discipline axis",
            sql,
        )
    ids = [r.run_id for r in read_runs]
    # The one definition (analysis.queries.pooled_cooccurrence over the view failure_rg_cooccurrence).
    pooled = pooled_cooccurrence(ctx.con, ids)
    if pooled.frame.height == 0:
        return does_not_apply(
            "rg_cooc",
            "§5.1",
            caption,
            columns,
            "no wrong final answer of the chosen runs has a discipline indicator (run `trajscope judge`)",
            sql,
        )
    rows, n, unclassified = [], 0, []
    labels = {"regex": "regex", "spacy": "spaCy en_core_web_sm"}
    cells = ("discipline_only", "post_only", "discipline_and_post", "neither")
    for r in pooled.frame.iter_rows(named=True):
        n = max(n, r["n_wrong"])
        rows.append((labels.get(r["extractor"], r["extractor"]), r["n_wrong"],
                     *(PTS * r[f"{c}_share"] for c in cells)))
        left = r["n_wrong"] - sum(r[c] for c in cells)
        if left:
            unclassified.append(f"{left:,} ({labels.get(r['extractor'], r['extractor'])})")
    agreement = extractor_agreement(ctx.con, ids).agreement
    if agreement is not None:
        note = (
            f"Agreement on the discipline indicator between extractors: Cohen's κ = {agreement.kappa:.3f} "
            f"(n = {agreement.n:,})."
        )
    else:
        note = "Cohen's κ between extractors does not apply: no wrong trajectory has both extractors' coverage."
    notes = [note]
    if unclassified:
        notes.append("Wrong trajectories whose discipline or post-gold-read indicator is unknown are in no cell: "
                     + ", ".join(unclassified) + ".")
    if pooled.excluded_runs:
        notes.append("Runs left out (the discipline test does not apply): " + ", ".join(pooled.excluded_runs) + ".")
    used = [r for r in read_runs if r.run_id not in pooled.excluded_runs]
    return ReportTable("rg_cooc", "§5.1", caption, columns, tuple(rows), ctx.footnote(used, n), sql, notes=tuple(notes))


def strict_prompt(ctx: ReportContext) -> ReportTable:
    """Table 17: a strict system prompt against the execution invariant."""
    columns = (
        DATASET,
        Column("zero_read_base", "Zero-read, no gate (%)"),
        Column("zero_read_strict", "Zero-read, strict prompt (%)"),
        Column("acc_strict", "Strict prompt"),
        Column("acc_gate", "Read-Gate"),
    )
    caption = (
        "Prompt instructions do not replace execution invariants: zero-read rate and accuracy (%) of a "
        "strict system prompt against Read-Gate."
    )
    sql = sql_file("rg_accuracy")
    stats = _accuracy(ctx)
    rows, used, n = [], [], 0
    for key, runs in ctx.groups().items():
        c = _by_condition(ctx, runs)
        if not c.get(STRICT):
            continue
        group = c.get(BASELINE, []) + c[STRICT] + c.get(GATE, [])
        used += group
        n += sum(stats[r.run_id]["n"] for r in group if r.run_id in stats)
        rows.append(
            (
                key,
                _zero_read(stats, c.get(BASELINE, [])),
                _zero_read(stats, c[STRICT]),
                _pooled_accuracy(stats, c[STRICT])[0],
                _pooled_accuracy(stats, c.get(GATE, []))[0],
            )
        )
    if not rows:
        return does_not_apply(
            "rg_t17", "Table 17", caption, columns, "no 'strict_prompt' run among the chosen runs", sql
        )
    return ReportTable("rg_t17", "Table 17", caption, columns, tuple(rows), ctx.footnote(used, n), sql)


def _verdicts(ctx: ReportContext) -> dict[tuple[str, str], dict[str, bool]]:
    """LLM verdicts by (judge, judge model): trajectory id -> says right."""
    out: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for r in ctx.query("rg_judge_verdicts").iter_rows(named=True):
        out[("llm", r["judge_model"])][r["trajectory_id"]] = bool(r["says_right"])
    return out


def judge_robustness(ctx: ReportContext) -> ReportTable:
    """Table 18: a second LLM judge on a sample, per run and reweighted to the runs' sizes, with kappa."""
    columns = (
        Column("run", "Run", "text"),
        Column("n_population", "N", "int"),
        Column("n_sample", "n sample", "int"),
        Column("acc_a", "Judge A (%)"),
        Column("acc_b", "Judge B (%)"),
        Column("difference", "B − A (pp)", "signed"),
        Column("kappa", "κ", "num", 3),
    )
    caption = (
        "Judge robustness: accuracy under two LLM judges, the second on a stratified sample reweighted to "
        "the population, and their agreement."
    )
    sql = sql_file("rg_judge_verdicts")
    verdicts = _verdicts(ctx)
    models = sorted(verdicts, key=lambda k: (-len(verdicts[k]), k[1]))
    if len(models) < 2:
        return does_not_apply(
            "rg_t18",
            "Table 18",
            caption,
            columns,
            "the chosen runs carry verdicts of fewer than two LLM judge models",
            sql,
        )
    # The one Table 18 definition (analysis.queries.judge_robustness): B's stratified sample reweighted to
    # each run's strata of A's verdict; the overall row weights runs by their population N.
    robust = judge_robustness_table(
        ctx.con, f"llm:{models[0][1]}", f"llm:{models[1][1]}", run_id=[r.run_id for r in ctx.runs]
    )
    if not robust.runs or not any(r.n_sample for r in robust.runs):
        return does_not_apply(
            "rg_t18", "Table 18", caption, columns, "no trajectory was judged by both LLM judges", sql
        )

    def cells(r):
        b = None if r.accuracy_b_reweighted is None else PTS * r.accuracy_b_reweighted
        d = None if r.difference is None else PTS * r.difference
        return (r.run_id, r.n_population, r.n_sample, PTS * r.accuracy_a, b, d, r.kappa)

    rows = [cells(r) for r in robust.runs if r.n_sample]
    if robust.overall is not None:
        rows.append(cells(robust.overall))
    pooled = robust.agreement.agreement
    n_sample = pooled.n if pooled else 0  # trajectories judged by both, over the chosen runs
    note = (
        f"Judge A: {models[0][1]}; judge B: {models[1][1]}. Judge A over every trajectory it judged; judge B "
        "on the jointly judged sample, reweighted to the run's strata of judge A's verdict "
        "(each stratum's mean B verdict weighted by its share of the run); "
        "the overall row weights each run with an estimate by its N; "
        "κ on the run's (overall: the pooled) sample."
    )
    return ReportTable(
        "rg_t18", "Table 18", caption, columns, tuple(rows), ctx.footnote(ctx.runs, n_sample),
        sql + "\n" + JUDGE_ROBUSTNESS_SQL, notes=(note,),
    )


def _trajectory_keys(ctx: ReportContext, trajectory_ids: list[str]) -> tuple[list[str], list[str], list[str]]:
    df = frame(
        ctx.con,
        "SELECT trajectory_id, run_id, question_id FROM trajectories WHERE list_contains($ids, trajectory_id)",
        {"ids": trajectory_ids},
    )
    return df["trajectory_id"].to_list(), df["run_id"].to_list(), df["question_id"].to_list()


def judge_error_correction(ctx: ReportContext) -> ReportTable:
    """Reviewer check: LLM-Acc corrected for the judge's error against human verdicts (Rogan-Gladen)."""
    columns = (
        Column("run", "Run", "text"),
        Column("n", "n judged", "int"),
        Column("observed", "LLM-Acc (%)"),
        Column("corrected", "Corrected (%) [95% CI]", "plain_interval"),
    )
    caption = (
        "Accuracy corrected for judge error: sensitivity and specificity of the LLM judge on the "
        "human-labelled sample, Rogan-Gladen estimator with a delta-method CI."
    )
    sql = sql_file("rg_judge_verdicts")
    if not ctx.human_labels:
        return does_not_apply(
            "rg_judge_error",
            "Judge error",
            caption,
            columns,
            "no human verdicts given (--human-labels CSV with run_id, question_id, human_right)",
            sql,
        )
    verdicts = _verdicts(ctx)
    llms = sorted(verdicts, key=lambda k: (-len(verdicts[k]), k[1]))
    if not llms:
        return does_not_apply(
            "rg_judge_error",
            "Judge error",
            caption,
            columns,
            "the chosen runs carry no LLM-judge verdicts to correct",
            sql,
        )
    judge = verdicts[llms[0]]
    ids, runs, questions = _trajectory_keys(ctx, sorted(judge))
    key_of = {t: (r, q) for t, r, q in zip(ids, runs, questions, strict=False)}
    sample = [t for t in sorted(judge) if key_of.get(t) in ctx.human_labels]
    try:
        rates = judge_error_rates([judge[t] for t in sample], [ctx.human_labels[key_of[t]] for t in sample])
    except ValueError as exc:
        return does_not_apply("rg_judge_error", "Judge error", caption, columns, str(exc), sql)
    by_run: dict[str, list[bool]] = defaultdict(list)
    for tid, says in judge.items():
        by_run[key_of.get(tid, ("", ""))[0]].append(says)
    rows, n = [], 0
    for run in ctx.runs:
        observed = by_run.get(run.run_id)
        if not observed:
            continue
        n += len(observed)
        try:
            c = rogan_gladen(observed, rates)
            cell = Interval(PTS * c.corrected, PTS * c.low, PTS * c.high)
        except ValueError:
            cell = Interval(None, None, None)
        rows.append((run.run_id, len(observed), PTS * float(np.mean(observed)), cell))
    note = (
        f"Judge {llms[0][1]}: sensitivity {rates.sensitivity:.3f}, specificity {rates.specificity:.3f} on "
        f"{len(sample):,} human-labelled answers ({rates.n_human_right} right, {rates.n_human_wrong} wrong)."
    )
    return ReportTable(
        "rg_judge_error", "Judge error", caption, columns, tuple(rows), ctx.footnote(ctx.runs, n), sql, notes=(note,)
    )


def failure_plane_points(ctx: ReportContext) -> ReportTable:
    """Figure 7's data: each condition's position on the failure plane (P_disc, P_post), per dataset."""
    columns = (
        DATASET,
        Column("condition", "Condition", "text"),
        Column("effort", "Reasoning", "text"),
        Column("p_disc", "P_disc"),
        Column("p_post", "P_post"),
        Column("n", "n", "int"),
    )
    caption = (
        "The failure plane: discipline failures (P_disc) against post-gold-read failures (P_post), % of the "
        f"judged trajectories, per condition and reasoning effort (primary labels, {GATE_EXTRACTOR} extractor)."
    )
    sql = sql_file("rg_plane")
    points = {r["run_id"]: r for r in ctx.query("rg_plane", extractor=GATE_EXTRACTOR).iter_rows(named=True)}
    rows, used, notes, n_total = [], [], [], 0
    for key, runs in ctx.groups(across=("reasoning_effort",)).items():  # effort is a column of its own
        cells: dict[tuple[str, str], list[RunInfo]] = defaultdict(list)
        for r in runs:  # one point per regime: seeds pool, reasoning efforts do not (Figure 7)
            cells[(r.condition or "?", r.reasoning_effort or "")].append(r)
        for (condition, effort), members in cells.items():
            placed = [r for r in members if r.run_id in points
                      and points[r.run_id]["p_disc"] is not None and points[r.run_id]["p_post"] is not None]
            for r in members:
                if r not in placed and r.run_id in points:
                    reason = points[r.run_id]["p_disc_reason"] or points[r.run_id]["p_post_reason"]
                    notes.append(f"{r.run_id} is not on the plane: {reason}.")
            if not placed:
                continue
            n = sum(points[r.run_id]["n_judged"] for r in placed)
            # The shares are counts over the judged trajectories, so seeds pool weighted by those.
            p_disc = sum(points[r.run_id]["p_disc"] * points[r.run_id]["n_judged"] for r in placed) / n
            p_post = sum(points[r.run_id]["p_post"] * points[r.run_id]["n_judged"] for r in placed) / n
            rows.append((key, condition, effort, PTS * p_disc, PTS * p_post, n))
            used += placed
            n_total += n
    if not rows:
        return does_not_apply("rg_plane", "Figure 7", caption, columns,
                              "no chosen run has both a read action and gold passages"
                              + (f" ({' '.join(notes)})" if notes else ""), sql)
    return ReportTable("rg_plane", "Figure 7", caption, columns, tuple(rows), ctx.footnote(used, n_total), sql,
                       notes=tuple(notes))


def failure_plane_figure(table: ReportTable) -> ReportFigure | None:
    """The plane as Vega-Lite: one point per condition, an arrow-like rule from the baseline to each other
    condition, one panel per dataset."""
    if table.not_applicable:
        return None
    values: list[dict[str, Any]] = [dict(zip([c.key for c in table.columns], row, strict=True)) for row in table.rows]
    base = {(v["dataset"], v["effort"]): v for v in values if v["condition"] == BASELINE}
    for v in values:  # a facet's layers share one dataset: each point carries its baseline's position
        origin = base.get((v["dataset"], v["effort"]))  # the baseline of the same reasoning effort
        v["base_disc"] = origin["p_disc"] if origin else None
        v["base_post"] = origin["p_post"] if origin else None
        v["label"] = v["condition"] + (f" ({v['effort']})" if v["effort"] else "")
    axis_x = {"field": "p_disc", "type": "quantitative", "title": "P_disc (% discipline failures)",
              "scale": {"domainMin": 0}}
    axis_y = {"field": "p_post", "type": "quantitative", "title": "P_post (% post-gold-read failures)",
              "scale": {"domainMin": 0}}
    layers = [
        {
            "transform": [{"filter": f"datum.condition != '{BASELINE}' && datum.base_disc != null"}],
            "mark": {"type": "rule", "color": "#999", "strokeDash": [4, 3]},
            "encoding": {"x": {"field": "base_disc", "type": "quantitative"},
                         "y": {"field": "base_post", "type": "quantitative"},
                         "x2": {"field": "p_disc"}, "y2": {"field": "p_post"}},
        },
        {
            "mark": {"type": "point", "filled": True, "size": 80},
            "encoding": {"x": axis_x, "y": axis_y,
                         "color": {"field": "label", "type": "nominal", "title": "Condition"},
                         "tooltip": [{"field": "label"}, {"field": "p_disc", "format": ".1f"},
                                     {"field": "p_post", "format": ".1f"}, {"field": "n"}]},
        },
    ]
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Movement across the failure plane",
        "data": {"values": values},
        "facet": {"column": {"field": "dataset", "type": "nominal", "title": None}},
        "spec": {"width": 240, "height": 220, "layer": layers},
    }
    return ReportFigure("rg_plane", "Figure 7", table.caption, spec, table.sql)


def gate_corrections(ctx: ReportContext) -> ReportTable:
    """Figure 6's data (App. F): corrections per question (finals the gate refused) and accuracy per gate
    condition, the baseline beside them."""
    columns = (
        DATASET,
        Column("condition", "Condition", "text"),
        Column("n", "n", "int"),
        Column("corrections", "Corrections / question", "num", 2),
        Column("corrected", "Corrected (%)"),
        Column("turns", "Turns / question", "num", 2),
        Column("accuracy", "Accuracy", "with_delta"),
    )
    caption = (
        "Gate corrections per question: finals each gate condition refused before accepting one, the share of "
        "questions corrected at least once, turns per question and accuracy (change against no gate)."
    )
    sql = sql_file("rg_corrections")
    stats = {r["run_id"]: r for r in ctx.query("rg_corrections").iter_rows(named=True)}
    rows, used, n_total = [], [], 0
    for key, runs in ctx.groups().items():
        conditions = _by_condition(ctx, runs)
        gates = [c for c in GATE_CONDITIONS if conditions.get(c)]
        if not gates:
            continue
        base, _ = _pooled_accuracy(stats, conditions.get(BASELINE, []))
        for condition in ([BASELINE] if conditions.get(BASELINE) else []) + gates:
            members = [r for r in conditions[condition] if r.run_id in stats]
            n = sum(stats[r.run_id]["n"] for r in members)
            if not n:
                continue
            # Seeds pool weighted by their trajectories: the means are over questions.
            mean = {k: sum(stats[r.run_id][k] * stats[r.run_id]["n"] for r in members) / n
                    for k in ("corrections", "corrected_share", "turns")}
            acc, _ = _pooled_accuracy(stats, members)
            delta = None if acc is None or base is None or condition == BASELINE else acc - base
            rows.append((key, condition, n, mean["corrections"], PTS * mean["corrected_share"], mean["turns"],
                         WithDelta(acc, delta)))
            used += members
            n_total += n
    if not rows:
        return does_not_apply("rg_fig6", "Figure 6", caption, columns,
                              f"no chosen run has a gate condition ({', '.join(GATE_CONDITIONS)})", sql)
    note = ("A correction is a gate_rejection step: a final the environment refused. Accuracy: LLM-Acc where "
            "judged, else Contain-Acc, over judged trajectories; pooled over seeds; differences are unpaired.")
    return ReportTable("rg_fig6", "Figure 6", caption, columns, tuple(rows), ctx.footnote(used, n_total, note), sql)


def gate_corrections_figure(table: ReportTable) -> ReportFigure | None:
    """Figure 6 as Vega-Lite: corrections per question per condition, one panel per dataset."""
    if table.not_applicable:
        return None
    values: list[dict[str, Any]] = [dict(zip([c.key for c in table.columns], row, strict=True)) for row in table.rows]
    for v in values:
        acc = v.pop("accuracy")
        v["accuracy"] = acc.value
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v5.json",
        "title": "Gate corrections per question",
        "data": {"values": values},
        "facet": {"column": {"field": "dataset", "type": "nominal", "title": None}},
        "spec": {
            "width": 200,
            "height": 200,
            "mark": {"type": "bar"},
            "encoding": {
                "x": {"field": "condition", "type": "nominal", "title": None, "sort": None},
                "y": {"field": "corrections", "type": "quantitative", "title": "Corrections / question"},
                "color": {"field": "condition", "type": "nominal", "legend": None},
                "tooltip": [{"field": "condition"}, {"field": "corrections", "format": ".2f"},
                            {"field": "corrected", "format": ".1f"}, {"field": "turns", "format": ".2f"},
                            {"field": "accuracy", "format": ".1f"}, {"field": "n"}],
            },
        },
    }
    return ReportFigure("rg_fig6", "Figure 6", table.caption, spec, table.sql)


FUNNEL_ORDER = (BASELINE, *GATE_CONDITIONS, INJECTION, STRICT)


def evidence_funnel_stages(ctx: ReportContext) -> ReportTable:
    """Where the evidence was lost: per condition the share of gold passages reaching each funnel stage, and
    each condition's paired change per stage against no gate (McNemar, seeds pooled)."""
    caption = (
        "Where the evidence was lost: share of gold passages queried for, retrieved, shown in the top-k, read and "
        "used, per condition; the change per stage against no gate, paired on questions (McNemar)."
    )
    arms = []
    for key, runs in ctx.groups().items():
        conditions = _by_condition(ctx, runs)
        reference = FunnelArm(key, BASELINE, conditions[BASELINE]) if conditions.get(BASELINE) else None
        rank = {c: i for i, c in enumerate(FUNNEL_ORDER)}
        ordered = sorted(conditions, key=lambda c: (rank.get(c, len(rank)), c))
        for condition in ordered:
            if condition == BASELINE and reference is not None:
                arms.append(reference)
            else:
                arms.append(FunnelArm(key, condition or "(none)", conditions[condition], reference))
    return funnel_table(ctx, "rg_funnel", "Evidence funnel", caption, arms)


TABLES = (
    zero_read_rescue,
    mechanism_ablation,
    population_delta,
    stratified_odds_ratio,
    parameter_sweep,
    model_transfer,
    cooccurrence,
    strict_prompt,
    judge_robustness,
    judge_error_correction,
    gate_corrections,
    failure_plane_points,
    evidence_funnel_stages,
)


def read_gate_report(ctx: ReportContext) -> list[ReportTable]:
    """Every Read-Gate table, in paper order, over the context's runs."""
    return [build(ctx) for build in TABLES]


__all__ = [
    "TABLES",
    "cooccurrence",
    "evidence_funnel_stages",
    "failure_plane_figure",
    "failure_plane_points",
    "gate_corrections",
    "gate_corrections_figure",
    "judge_error_correction",
    "judge_robustness",
    "mechanism_ablation",
    "model_transfer",
    "parameter_sweep",
    "population_delta",
    "read_gate_report",
    "strict_prompt",
    "stratified_odds_ratio",
    "zero_read_rescue",
]
