"""Dashboard benchmark: every page's warehouse queries on 100,000 synthetic trajectories (target < 1 s).

    .venv/bin/python bench/app_pages.py [--n 100000] [--db PATH] [--tiny] [--funnel-before SQL [SQL ...]]

Times each page's queries the way the page runs them (fresh sandboxed read-only connections), cold
(first run after open) and warm (best of three), and prints one row per page. --funnel-before FILE...
also times the funnel pages on a copy of the warehouse whose views are those files' (older definitions,
e.g. tests/fixtures/funnel/first_decisive_error_before.sql, or an earlier revision's view files from
git show REV:warehouse/views/NAME.sql), in the same run.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.synthetic import write_synthetic_log  # noqa: E402

# Imported up front as the app does at start-up, so the Compare row times queries, not imports.
from trajscope.analysis.queries import LABELLED_RUNS_SQL, compare_funnels, compare_runs, post_read_odds_ratio  # noqa: E402
from trajscope.app.access import read_connection, run_queries, warehouse_state  # noqa: E402
from trajscope.app.console import run_console_query  # noqa: E402
from trajscope.app.queries import (  # noqa: E402
    RunFilters,
    decisive_error_summary_sql,
    failure_breakdown_sql,
    failure_plane_sql,
    funnel_summary_sql,
    hop_breakdown_sql,
    overview_contents_sql,
    overview_gate_rejections_sql,
    overview_pairs_sql,
    overview_plane_moves_sql,
    plane_arrows_sql,
    plane_failures_sql,
    question_choices_sql,
    replay_peers_sql,
    run_choices_sql,
    run_filter_options_sql,
    run_trajectories_sql,
    runs_sql,
    transition_questions_sql,
    type_breakdown_sql,
)
from trajscope.app.replay import replay_queries  # noqa: E402
from trajscope.warehouse import ingest_paths  # noqa: E402

TARGET_S = 1.0


def _pages(db: Path) -> dict[str, Callable[[], object]]:
    state = warehouse_state(db)
    runs = run_queries(db, {"r": run_choices_sql()})["r"].df["run_id"].to_list()
    run_a, run_b = runs[0], runs[1]
    tid = run_queries(db, {"t": question_choices_sql(run_a, limit=1)})["t"].df["trajectory_id"][0]

    def compare() -> None:
        with read_connection(db) as con:
            comparison = compare_runs(con, run_a, run_b)
            post_read_odds_ratio(con, run_a, run_b)
        ids = comparison.overall.transitions.b_only[:5000]
        run_queries(db, {"cell": transition_questions_sql(run_a, run_b, ids)})

    def funnel() -> None:
        # The Evidence funnel page: summaries, the decisive-error breakdown, then the paired stage table.
        run_queries(db, {
            "runs": run_choices_sql(), "summary": funnel_summary_sql(runs[:2]),
            "decisive": decisive_error_summary_sql(runs[:2]),
            "erag": failure_breakdown_sql(runs[:2], "execution_rag", "hop_count")})
        with read_connection(db) as con:
            compare_funnels(con, run_a, run_b)

    return {
        "every page: warehouse state": lambda: warehouse_state(db),
        "Overview": lambda: run_queries(db, {
            "contents": overview_contents_sql(), "gates": overview_gate_rejections_sql(),
            "pairs": overview_pairs_sql(), "moves": overview_plane_moves_sql()}),
        "Runs": lambda: run_queries(db, {
            "options": run_filter_options_sql(), "runs": runs_sql(RunFilters()),
            "trajectories": run_trajectories_sql(run_a)}),
        "Failure plane": lambda: run_queries(db, {
            "points": failure_plane_sql("regex", []), "arrows": plane_arrows_sql("regex", []),
            "failures": plane_failures_sql(run_a, "regex"), "labelled": LABELLED_RUNS_SQL}),
        "Breakdowns": lambda: run_queries(db, {
            "runs": run_choices_sql(),
            "by_hop": failure_breakdown_sql(runs, "execution_rag", "hop_count"),
            "by_type": failure_breakdown_sql(runs, "execution_rag", "question_type"),
            "hops": hop_breakdown_sql(runs), "types": type_breakdown_sql(runs)}),
        "Trajectory replay": lambda: run_queries(db, {
            "runs": run_choices_sql(), "choices": question_choices_sql(run_a),
            "peers": replay_peers_sql(tid),
            **replay_queries(tid, with_labels={"failure_rg", "failure_erag"} <= state.views,
                             with_funnel={"evidence_funnel", "first_decisive_error"} <= state.views)}),
        "Compare": compare,
        "Evidence funnel": funnel,
        "SQL console (run_summary)": lambda: run_console_query(
            db, "SELECT * FROM run_summary", timeout_s=10, row_cap=10_000),
        "Export (trajectory_facts, 100k rows)": lambda: run_queries(db, {
            "export": "SELECT * FROM trajectory_facts LIMIT 100000"}),
    }


_FUNNEL_PAGES = ("Evidence funnel", "Trajectory replay")


def _funnel_before(db: Path, sql_files: list[Path]) -> None:
    """The funnel pages on this warehouse and on a copy whose views are sql_files' (in order), interleaved."""
    import duckdb

    before = db.with_name(db.stem + ".before.duckdb")
    shutil.copyfile(db, before)
    con = duckdb.connect(str(before))
    try:
        for sql_file in sql_files:  # the copy's views_state is unchanged, so no open reinstalls the views
            con.execute(sql_file.read_text())
    finally:
        con.close()
    pages = {"after": _pages(db), "before": _pages(before)}
    label = "funnel page (" + ", ".join(f.stem for f in sql_files) + ")"
    print(f"\n{label[:48]:48s} {'before cold':>11s} {'before warm':>11s} "
          f"{'after cold':>10s} {'after warm':>10s}")
    for name in _FUNNEL_PAGES:
        times = {}
        for which in ("before", "after"):
            fn = pages[which][name]
            times[which] = (_time(fn), min(_time(fn) for _ in range(3)))
        print(f"{name:48s} {times['before'][0]:11.3f} {times['before'][1]:11.3f} "
              f"{times['after'][0]:10.3f} {times['after'][1]:10.3f}")
    before.unlink()


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="synthetic trajectories")
    parser.add_argument("--db", type=Path, default=None, help="reuse (or create) this warehouse")
    parser.add_argument("--tiny", action="store_true",
                        help="300 trajectories; exits 0 whatever the timings (checks the script runs, not speed)")
    parser.add_argument("--funnel-before", type=Path, nargs="+", default=None, metavar="SQL",
                        help="also time the funnel pages on a copy whose views are these files' (e.g. an older "
                             "revision's, from git show REV:warehouse/views/NAME.sql), applied in order")
    args = parser.parse_args()
    if args.tiny:
        args.n = 300
    folder = Path(tempfile.mkdtemp(prefix="trajscope-bench-app-"))
    db = args.db or folder / "bench.duckdb"
    if not db.exists():
        log = folder / "synthetic.jsonl"
        t = time.perf_counter()
        steps = write_synthetic_log(log, args.n, seed=0)
        print(f"wrote {args.n:,} trajectories ({steps:,} steps) in {time.perf_counter() - t:.1f}s")
        t = time.perf_counter()
        ingest_paths(db, [log], progress=False)
        print(f"ingested in {time.perf_counter() - t:.1f}s -> {db}")
    state = warehouse_state(db)
    print(f"warehouse: {state.n_trajectories:,} trajectories in {state.n_runs} runs\n")
    print(f"{'page':40s} {'cold s':>8s} {'warm s':>8s}  < {TARGET_S:g} s")
    worst = 0.0
    for name, fn in _pages(db).items():
        cold = _time(fn)
        warm = min(_time(fn) for _ in range(3))
        worst = max(worst, warm)
        print(f"{name:40s} {cold:8.3f} {warm:8.3f}  {'yes' if warm < TARGET_S else 'NO'}")
    print(f"\nslowest page (warm): {worst:.3f} s")
    if args.funnel_before:
        _funnel_before(db, args.funnel_before)
    return 0 if worst < TARGET_S or args.tiny else 1


if __name__ == "__main__":
    sys.exit(main())
