"""Compare: two runs paired on question ids; delta with CI, McNemar, transitions, stratified odds ratio."""
from __future__ import annotations

import duckdb
import polars as pl
import streamlit as st

from trajscope.analysis.queries import (
    DEFAULT_COMPARE_METRIC,
    METRICS,
    STRATA,
    QueryError,
    compare_runs,
    comparison_frame,
    post_read_odds_ratio,
)
from trajscope.analysis.stats import UnpairedComparison
from trajscope.app.access import read_connection
from trajscope.app.charts import readable_run_names
from trajscope.app.queries import run_choices_sql, transition_questions_sql
from trajscope.app.ui import (
    app_config,
    fetch,
    page_header,
    require_warehouse,
    run_ids_help,
    set_url,
    show_error,
    sql_expander,
    table_exports,
    table_panel,
    url_choice,
    url_value,
    warehouse_stamp,
)
from trajscope.warehouse import WarehouseBusy

page_header("Compare", "Two runs on the same question ids: accuracy delta with a bootstrap CI, exact "
            "McNemar, the transition table, per-stratum statistics and the read-exposure-stratified "
            "odds ratio of post-gold-read failures.")

CELLS = {"b_only": "Fixed by B (A wrong → B right)", "a_only": "Broken by B (A right → B wrong)",
         "both_right": "Right under both", "both_wrong": "Wrong under both"}


def strata_frame(tables: dict[int, list[list[int]]], run_a: str, run_b: str) -> pl.DataFrame:
    """Each read-exposure stratum's 2x2 table as rows (passages_read 4 means 4 or more)."""
    return pl.DataFrame(
        [{"passages_read": k, "run": run, "post_gold_read": t[row][0], "other": t[row][1]}
         for k, t in sorted(tables.items()) for row, run in ((0, run_b), (1, run_a))],
        schema={"passages_read": pl.Int64, "run": pl.Utf8, "post_gold_read": pl.Int64, "other": pl.Int64})


def _number(value: float, spec: str) -> str:
    # An undefined estimate (NaN: a zero cell) reads as "undefined", not "nan".
    return "undefined" if value != value else format(value, spec)


@st.cache_data(max_entries=64, show_spinner="Comparing…")
def _compare(db_path: str, stamp: tuple[int, ...], run_a: str, run_b: str, metric: str,
             strata: str | None, with_odds: bool):
    # Cached per warehouse stamp: the statistics are recomputed only after the warehouse changes.
    config = app_config()
    with read_connection(db_path, lock_wait_s=config.lock_wait_s) as con:
        comparison = compare_runs(con, run_a, run_b, metric=metric, strata=strata)
        odds = post_read_odds_ratio(con, run_a, run_b) if with_odds else None
    return comparison, odds


config = app_config()
state = require_warehouse()
if state:
    runs = fetch(run_choices_sql())
    if runs is not None and runs.df.height < 2:
        st.info("Comparing needs at least two runs in the warehouse.")
    elif runs is not None:
        run_ids = runs.df["run_id"].to_list()
        names = readable_run_names(runs.df, run_ids)
        a_default, b_default = url_value("a"), url_value("b")
        c1, c2, c3, c4 = st.columns(4)
        run_a = c1.selectbox("Run A (reference)", run_ids, key="compare-a", format_func=names.__getitem__,
                             help=run_ids_help(names), index=run_ids.index(a_default) if a_default in run_ids else 0)
        run_b = c2.selectbox("Run B", run_ids, key="compare-b", format_func=names.__getitem__, help=run_ids_help(names),
                             index=run_ids.index(b_default) if b_default in run_ids else 1)
        metric = c3.selectbox("Outcome", METRICS, key="compare-metric",
                              index=METRICS.index(url_choice("metric", list(METRICS), DEFAULT_COMPARE_METRIC)))
        strata_options = [None, *STRATA]
        strata = c4.selectbox("Stratify by", strata_options, key="compare-strata",
                              index=strata_options.index(url_choice("strata", ["", *STRATA], "") or None),
                              format_func=lambda s: "—" if s is None else s)
        for key, value in (("a", run_a), ("b", run_b), ("metric", metric if metric != DEFAULT_COMPARE_METRIC else None),
                           ("strata", strata)):
            set_url(key, value)
        comparison = odds = None
        try:
            comparison, odds = _compare(str(config.db_path), warehouse_stamp(config.db_path), run_a, run_b,
                                        metric, strata, "failure_rg" in state.views)
        except (UnpairedComparison, QueryError) as exc:
            st.warning(str(exc), icon=":material/link:")
        except WarehouseBusy as exc:
            st.warning(str(exc), icon=":material/hourglass_top:")
        except duckdb.Error as exc:
            show_error(f"The comparison query failed: {str(exc).splitlines()[0]}", icon=":material/warning:")
        if comparison is not None:
            overall = comparison.overall
            st.info(f"B against A — {comparison.pairing}.", icon=":material/link:")
            m = st.columns(5)
            m[0].metric("Paired questions", f"{overall.n:,}")
            m[1].metric(f"A · {metric}", f"{overall.accuracy_a:.1%}")
            m[2].metric(f"B · {metric}", f"{overall.accuracy_b:.1%}", delta=f"{overall.delta * 100:+.1f} pts")
            m[3].metric("95% CI of delta", f"[{overall.bootstrap.low * 100:+.1f}, {overall.bootstrap.high * 100:+.1f}]")
            m[4].metric("McNemar exact p", f"{overall.mcnemar.exact_p:.3g}" if overall.mcnemar else "n/a (not 0/1)")
            frame = comparison_frame(comparison)
            st.dataframe(frame, hide_index=True, key="compare-frame", column_config={
                c: st.column_config.NumberColumn(format="percent")
                for c in ("acc_a", "acc_b", "delta", "ci_low", "ci_high")})
            with st.expander("Show SQL"):
                st.code(comparison.sql, language="sql")
                st.caption(f"with $run_a = '{run_a}', $run_b = '{run_b}'; statistics by "
                           "analysis.queries.compare_runs over these rows")
            table_exports(frame, key="compare", stem=f"compare-{run_a}-vs-{run_b}")

            transitions = overall.transitions
            if transitions is not None:
                st.subheader("Transition table")
                table = pl.DataFrame({
                    "": ["A right", "A wrong"],
                    "B right": [len(transitions.both_right), len(transitions.b_only)],
                    "B wrong": [len(transitions.a_only), len(transitions.both_wrong)],
                })
                left, right = st.columns([1, 2], gap="large")
                left.dataframe(table, hide_index=True, key="compare-transitions")
                cell_default = url_value("cell") or "b_only"
                cell = right.radio("List the questions of", list(CELLS), format_func=CELLS.__getitem__,
                                   key="compare-cell",
                                   index=list(CELLS).index(cell_default) if cell_default in CELLS else 0)
                set_url("cell", cell if cell != "b_only" else None)
                ids = getattr(transitions, cell)
                if ids:
                    questions = fetch(transition_questions_sql(run_a, run_b, ids))
                    if questions is not None:
                        table_panel(questions, key="compare-questions", stem=f"{cell}-{run_a}-vs-{run_b}",
                                    column_config={"side_by_side": st.column_config.LinkColumn(
                                        "Replay A | B", display_text="open ↗")})
                else:
                    st.caption("No questions in this cell.")
            if odds is not None:
                st.subheader("Post-gold-read failures, stratified by read exposure")
                if odds.result is None or odds.result.odds_ratio != odds.result.odds_ratio:
                    st.caption("Undefined here: no read-exposure stratum has trajectories of both runs "
                               "and both outcomes, so none carries information about the odds ratio "
                               "(the strata, as counted, are below).")
                    st.dataframe(strata_frame(odds.tables, run_a, run_b), hide_index=True)
                else:
                    r, m = odds.result, odds.marginal
                    o = st.columns(4)
                    if m is not None:
                        o[0].metric("Marginal OR", _number(m.odds_ratio, ".2f"),
                                    help=f"{m.confidence:.0%} CI [{_number(m.ci_low, '.2f')}, "
                                         f"{_number(m.ci_high, '.2f')}] over all {m.n:,} judged trajectories")
                    o[1].metric("Mantel-Haenszel OR", _number(r.odds_ratio, ".2f"))
                    o[2].metric(f"{r.confidence:.0%} CI",
                                f"[{_number(r.ci_low, '.2f')}, {_number(r.ci_high, '.2f')}]")
                    o[3].metric("CMH p", _number(r.cmh_p, ".3g"))
                    st.caption(f"Read-Gate Table 4: n = {odds.n_stratified:,} trajectories in the read-exposure "
                               "strata; `trajscope compare A B --table4` prints the same table.")
                sql_expander(odds.sql)
