"""`trajscope demo`: build the demo warehouse with the embedded model, then open the dashboard."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

import click

from trajscope.app.progress import BuildProgress, PlannedRun, now, write_progress

# The baseline; the Read-Gate with all three gates (read_gate, snippet-only, low-evidence), which the
# embedded model's low-evidence finals trip; the requirement register, the slowest per question (three
# long prompts, none sharing a prefix), on the first 6 of the same questions; vanilla RAG (no read action).
DEFAULT_CONDITIONS = "read_gate/baseline,read_gate/full,execution_rag/register@6,vanilla_rag/k5"


def _conditions(text: str) -> list[tuple[str, str, int | None]]:
    """CONTROLLER/CONDITION[@N] items: @N runs the condition on the first N of the demo's questions."""
    items = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        pair, at, subset = item.partition("@")
        controller, sep, condition = pair.partition("/")
        if not sep or not controller or not condition or (at and not (subset.isdigit() and int(subset) >= 1)):
            raise click.BadParameter(f"{item!r}: expected CONTROLLER/CONDITION or CONTROLLER/CONDITION@N "
                                     "(N >= 1)", param_hint="--conditions")
        items.append((controller, condition, int(subset) if subset else None))
    return items


def _question_ids(n: int, seed: int, subset: int | None) -> list[str] | None:
    # A subset is a prefix of the very questions the other conditions run, so every pair stays paired.
    if subset is None or subset >= n:
        return None
    from trajscope.engine.runs import select_questions
    from trajscope.ingest.datasets import load_dataset

    return [q.question_id for q in select_questions(load_dataset("demo").questions, n, seed)][:subset]


@click.command("demo")
@click.option("--n", "n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Demo questions per condition (the same ids for every condition).")
@click.option("--conditions", default=DEFAULT_CONDITIONS, show_default=True,
              help="Comma-separated CONTROLLER/CONDITION pairs; CONTROLLER/CONDITION@N runs that one on the "
                   "first N of the --n questions.")
@click.option("--model", default="local", show_default=True,
              help="'local' (the embedded default), 'local:NAME' (another embedded model) or any "
                   "`trajscope run --model` spec.")
@click.option("--max-tokens", type=int, default=96, show_default=True, help="Max output tokens per model call.")
@click.option("--audit-n", type=click.IntRange(min=0), default=2, show_default=True,
              help="Questions per stratum in the short answer-presence audit (B1/B2/B3; remove / placebo where "
                   "B1 holds the gold, insert where retrieval missed it); 0 skips it.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default="demo.duckdb", show_default=True,
              help="Warehouse file to build.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/demo", show_default=True,
              help="Directory of the JSONL logs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the question sample.")
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True,
              help="Dashboard port on 127.0.0.1.")
@click.option("--forks", "n_forks", type=click.IntRange(min=0), default=0, show_default=True,
              help="Fork up to this many wrong trajectories of the first run at their first decisive error with "
                   "--intervention auto and auto_placebo (docs/forks.md); 0 skips it (it adds model calls).")
@click.option("--no-app", is_flag=True,
              help="Build the warehouse and print the run summary; do not serve the dashboard.")
@click.option("--wait-for-setup", "setup_stamp", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Serve the dashboard first, then wait until this file exists (the set-up that `make demo` "
                   "runs meanwhile writes it) before the model runs; SETUP_STAMP.failed means it failed.")
@click.option("--setup-log", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The background set-up's log, quoted when it fails.")
def command(n: int, conditions: str, model: str, max_tokens: int, audit_n: int, db_path: str,
            out_dir: str, seed: int, port: int, n_forks: int, no_app: bool, setup_stamp: Path | None,
            setup_log: Path | None) -> None:
    """Build the demo warehouse with the embedded model and open the dashboard.

    Runs the bundled demo questions under the baseline, the Read-Gate (all gates), the requirement
    register and vanilla RAG with the embedded model served locally (no key, no network), ingests every
    trajectory into --db, judges it (EM / F1 / Contain-Acc, entity coverage, answer checks), runs a
    short answer-presence audit and prints the three things to look at first.

    The dashboard's URL is the first line printed: it serves as soon as the warehouse exists and fills
    live (each finished trajectory is ingested, each run judged as it ends; the Overview shows the
    build's progress per condition and which findings are ready). Rerunning is fast: finished
    questions are resumed and model responses come from the on-disk cache.

    Example: trajscope demo --n 10 --db demo.duckdb
    """
    started = time.perf_counter()
    db = Path(db_path)
    root = f"http://127.0.0.1:{port}"
    items = _conditions(conditions)
    if not no_app:
        from trajscope.cli.app_cmd import _port_free

        if not _port_free(port):
            raise click.ClickException(f"port {port} on 127.0.0.1 is already in use; pass --port N")
        # The first line: where to look. The dashboard fills while the demo builds.
        click.echo(f"Dashboard: {root}  (it serves in a few seconds and fills as the demo builds; Ctrl-C stops both)")
    progress = BuildProgress(stage="preparing", message="loading the demo corpus into the warehouse",
                             started_at=now(), updated_at=now(), url=None if no_app else root, pid=os.getpid())
    try:
        _load_corpus(db)
    except Exception as exc:  # noqa: BLE001 - any warehouse failure is one clear line, not a traceback
        raise click.ClickException(f"{db_path}: cannot load the demo corpus into the warehouse: {exc}") from None
    write_progress(db, progress)
    click.echo(f"corpus loaded into the warehouse at {time.perf_counter() - started:.1f}s")
    dashboard = None if no_app else _start_dashboard(db, port, started)
    try:
        if setup_stamp is not None:
            _wait_for_setup(db, progress, setup_stamp, setup_log, started)
        _build(db, progress, items, n, model, max_tokens, audit_n, Path(out_dir), seed, started, n_forks)
        progress.stage, progress.message = "done", f"built in {(time.perf_counter() - started) / 60:.1f} min"
        write_progress(db, progress)
        if no_app:
            _print_run_summary(db)
        _print_guide(db, port, serving=not no_app)
        if dashboard is not None:
            _wait_for_dashboard(dashboard)
    except BaseException as exc:
        if progress.stage != "done":
            progress.stage = "failed"
            progress.message = "stopped" if isinstance(exc, KeyboardInterrupt) else (
                str(exc).splitlines() or [type(exc).__name__])[0][:300]
            write_progress(db, progress)
        raise
    finally:
        if dashboard is not None:
            _stop_dashboard(dashboard)


def _build(db: Path, progress: BuildProgress, items: list[tuple[str, str, int | None]], n: int, model: str,
           max_tokens: int, audit_n: int, out_dir: Path, seed: int, started: float, n_forks: int = 0) -> None:
    """The runs (each trajectory ingested as it finishes, each run judged as it ends), then the audit."""
    from trajscope.engine.llm import LocalModelError
    from trajscope.engine.runs import RunSpec, execute_matrix

    specs = []
    for controller, condition, subset in items:
        ids = _question_ids(n, seed, subset)
        specs.append(RunSpec(
            dataset="demo", controller=controller, condition=condition, model=model,
            n=len(ids) if ids else n, seed=seed, question_ids=ids,
            concurrency=1,  # one embedded server: sequential requests keep its prompt-prefix cache warm
            ingest_batch=1,  # each finished trajectory reaches the dashboard at once
            max_tokens=max_tokens, out_dir=out_dir, db_path=db))
    progress.runs = [PlannedRun(run_id=s.resolved_run_id(), controller=s.controller, condition=s.condition or "",
                                planned=s.n or n) for s in specs]
    progress.stage, progress.message = "runs", "starting the embedded model server and the retrieval index"
    write_progress(db, progress)
    sizes = ", ".join(f"{s.controller}/{s.condition} x {s.n}" for s in specs)
    click.echo(f"demo: {sizes} questions with model {model!r} -> {db}")
    printer = _timing_printer(started)

    def done(summary) -> None:  # noqa: ANN001 - engine.runs.RunSummary
        printer(summary)
        if summary.ingest_error is None:
            progress.message = f"judging {summary.run_id}"
            write_progress(db, progress)
            _judge(db, [summary.run_id])
        for planned in progress.runs:
            planned.judged = planned.judged or planned.run_id == summary.run_id
        progress.message = f"{sum(p.judged for p in progress.runs)} of {len(progress.runs)} runs done"
        write_progress(db, progress)

    try:
        summaries = execute_matrix(specs, on_done=done)
    except (LocalModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    failed = sum(s.n_errors for s in summaries)
    click.echo(f"runs done in {(time.perf_counter() - started) / 60:.1f} min "
               f"({sum(s.n_selected for s in summaries)} trajectories, {failed} recorded errors)")
    if any(s.ingest_error for s in summaries):
        first_error = next(s.ingest_error for s in summaries if s.ingest_error)
        raise click.ClickException(f"warehouse ingest failed: {first_error}")
    if n_forks and summaries:
        progress.stage, progress.message = "forks", "counterfactual forks at the first decisive error"
        write_progress(db, progress)
        _forks(db, out_dir, summaries[0].run_id, n_forks)
    if audit_n:
        progress.stage, progress.message = "audit", "the answer-presence audit"
        write_progress(db, progress)
        _audit(db, out_dir, model, audit_n, seed)
    click.echo(f"demo built in {(time.perf_counter() - started) / 60:.1f} min")


def _wait_for_setup(db: Path, progress: BuildProgress, stamp: Path, log: Path | None, started: float) -> None:
    """Block until the background set-up has installed what the demo runs on; its failure ends the demo.

    That is the deps stamp beside the set-up's stamp (Makefile: DEPS_STAMP): the test tools may still install."""
    failed = stamp.with_name(stamp.name + ".failed")
    deps = stamp.with_name(".deps-stamp")
    if stamp.exists() or deps.exists():
        return
    progress.stage = "setup"
    progress.message = "installing torch and the model runtime" + (f" (log: {log})" if log else "")
    write_progress(db, progress)
    click.echo(f"waiting for the set-up to install the demo's packages{f' (log: {log})' if log else ''} ...")
    while not (stamp.exists() or deps.exists()):
        if failed.exists():
            tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise click.ClickException(f"the set-up failed{f'; the end of {log}:' if log else ''}\n{tail}")
        time.sleep(1.0)
    click.echo(f"the demo's packages are in at {time.perf_counter() - started:.1f}s"
               + ("" if stamp.exists() else " (the test tools still install)"))


def _start_dashboard(db: Path, port: int, started: float) -> subprocess.Popen:
    """`trajscope app` in the background (its output in DB.app.log); a thread says when it answers."""
    import threading

    from trajscope.cli.app_cmd import _die_with_parent

    log = open(db.with_name(db.name + ".app.log"), "wb")  # noqa: SIM115 - owned by the child for its lifetime
    proc = subprocess.Popen([sys.executable, "-m", "trajscope", "app", "--db", str(db), "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=_die_with_parent)  # noqa: PLW1509 - no threads yet
    log.close()

    def announce() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        click.echo(f"dashboard serving at {time.perf_counter() - started:.1f}s")
                        return
            except OSError:
                time.sleep(0.5)

    threading.Thread(target=announce, daemon=True).start()
    return proc


def _wait_for_dashboard(proc: subprocess.Popen) -> None:
    """Keep serving until Ctrl-C (or the dashboard stops by itself)."""
    try:
        proc.wait()
    except KeyboardInterrupt:
        pass


def _stop_dashboard(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _timing_printer(started: float):  # noqa: ANN202 - a RunSummary callback
    """Each run's line with its model requests; the first also says what preceded it (index, server)."""
    first = True

    def done(summary) -> None:  # noqa: ANN001 - engine.runs.RunSummary
        nonlocal first
        if first:
            first = False
            before = time.perf_counter() - started - summary.elapsed_s
            click.echo(f"set-up before the first run (corpus, retrieval index, model server) {before:.1f}s")
        click.echo(f"{summary.line()} [{summary.model_requests} model requests, {summary.cache_hits} from cache]")

    return done


def _forks(db: Path, out_dir: Path, run_id: str, n: int) -> None:
    """auto and auto_placebo forks of the run's first n wrong trajectories, judged, and the per-rule rescue."""
    from trajscope.engine.forks import fork_many, select_parents
    from trajscope.warehouse import run_read_query

    started = time.perf_counter()
    parents, facts = select_parents(db, [run_id], "correct = false", "first_decisive_error")
    run_ids = []
    for intervention in ("auto", "auto_placebo"):
        for summary in fork_many(parents[:n], "first_decisive_error", intervention, db_path=db,
                                 out_dir=out_dir / "forks", facts=facts, concurrency=1):
            if summary.run is not None:
                run_ids.append(summary.run.run_id)
            click.echo(summary.lines()[0])
    _judge(db, run_ids)
    rows = run_read_query(db.resolve(), "SELECT decisive_rule, intervention, n_parent_wrong, n_rescued, "
                          "placebo_n_parent_wrong, placebo_n_rescued FROM fork_rule_rescue ORDER BY 1").df
    for row in rows.iter_rows(named=True):
        click.echo(f"  {row['decisive_rule']}: {row['intervention']} rescued {row['n_rescued']}/"
                   f"{row['n_parent_wrong']}, placebo {row['placebo_n_rescued']}/{row['placebo_n_parent_wrong']}")
    click.echo(f"forks done in {time.perf_counter() - started:.1f}s (view fork_rule_rescue)")


def _judge(db: Path, run_ids: list[str]) -> None:
    # Entity coverage and answer checks feed the snippet-only and low-evidence discipline labels;
    # without them the failure plane could only show no-read finals.
    from trajscope.engine.judge_pass import judge_run

    started = time.perf_counter()
    for run_id in run_ids:
        judge_run(db, run_id)
    click.echo(f"judged {len(run_ids)} run{'' if len(run_ids) == 1 else 's'} (entity coverage, answer checks) in "
               f"{time.perf_counter() - started:.1f}s")


def _audit(db: Path, out_dir: Path, model: str, per_stratum: int, seed: int) -> None:
    # A short audit so the Intervention audit page has both tables: B1 is the BM25 top 5 (as in a
    # RAG pipeline, so retrieval can miss the gold), questions are picked by what it retrieved (see
    # questions_by_b1_stratum); no B4, the [MASK] sentinel only, budgets sized for the small model, and
    # a greedy compile: at the paper's 0.2 the 135M compiler kept or lost the gold from run to run.
    from dataclasses import replace

    from trajscope.engine.audit import (
        COMPILE_DECODING,
        READER_DECODING,
        AuditLogCorrupt,
        AuditSpec,
        questions_by_b1_stratum,
        run_audit,
    )
    from trajscope.engine.llm import LocalModelError
    from trajscope.ingest.datasets import load_dataset

    spec = AuditSpec(dataset="demo", compiler_a=model, compiler_b=model, reader=model, seed=seed,
                     cell="demo", verify_modes=(), sentinel_baselines=(), b1_source="retriever", top_k=5,
                     compile_decoding=replace(COMPILE_DECODING, temperature=0.0, max_tokens=160),
                     reader_decoding=replace(READER_DECODING, max_tokens=32),
                     concurrency=1, out_dir=out_dir, db_path=db, progress=False)
    dataset = load_dataset("demo")
    ids = questions_by_b1_stratum(dataset, spec, per_stratum)
    spec = replace(spec, n=len(ids), question_ids=ids)
    try:
        summary = run_audit(spec, dataset)
    except (ValueError, AuditLogCorrupt, LocalModelError) as exc:
        raise click.ClickException(f"demo audit: {exc}") from None
    click.echo(summary.line())


def _load_corpus(db: Path) -> None:
    # The dashboard shows passages and golds by id; give it the demo corpus and questions.
    from trajscope.ingest.datasets import load_dataset
    from trajscope.warehouse import load_chunks, load_questions

    dataset = load_dataset("demo")
    load_chunks(db, dataset.chunks, dataset.name)
    load_questions(db, dataset.questions, dataset.name)


def _print_run_summary(db: Path) -> None:
    import polars as pl

    from trajscope.warehouse import open_read

    with open_read(db) as reader:
        table = reader.frame("SELECT * FROM run_summary ORDER BY 1")
    with pl.Config(tbl_cols=-1, tbl_rows=-1, tbl_width_chars=400, tbl_hide_dataframe_shape=True):
        click.echo(str(table))


def _print_guide(db: Path, port: int, *, serving: bool) -> None:
    """Where the dashboard is and the three findings to open first, from the Overview page's own queries."""
    from trajscope.app.queries import overview_gate_rejections_sql, overview_pairs_sql, overview_plane_moves_sql
    from trajscope.warehouse import open_read

    root = f"http://127.0.0.1:{port}"
    with open_read(db) as con:
        gate = con.execute(overview_gate_rejections_sql()).fetchone()
        move = con.execute(overview_plane_moves_sql()).fetchone()
        pair = con.execute(overview_pairs_sql()).fetchone()
    how = "serves on" if serving else f"serves with `trajscope app --db {db}` on"
    where = f"The dashboard {how} {root}"
    lines = [f"{where} (the Overview page lists every finding). Look first at:"]
    if gate:
        run_id, controller, condition, rejections, trajectories, first = gate
        lines.append(f"  1. The gate at work: {run_id} ({controller}/{condition}) rejected {rejections} final(s) "
                     f"in {trajectories} trajectories; a replay: {root}/replay?{urlencode({'trajectory': first})}")
    else:
        lines.append("  1. The gate at work: no gate rejected a final in this warehouse (Runs page: "
                     f"{root}/runs)")
    if move:
        _, from_run, to_run, condition, disc_a, post_a, disc_b, post_b, _ = move
        lines.append(f"  2. The failure plane: {from_run} -> {to_run} ({condition}) moves P_disc "
                     f"{disc_a:.0%} -> {disc_b:.0%}, P_post {post_a:.0%} -> {post_b:.0%}: "
                     f"{root}/failure_plane?{urlencode({'run': to_run})}")
        # The paper's four classes keep a forced wrong answer on the discipline axis: say what that leaves.
        lines.append("     (Read-Gate's four classes: a wrong answer the gate forced at the turn cap is classified "
                     "like any other" + ("; the gate did not lower P_disc here.)" if disc_b >= disc_a else ".)"))
    else:
        lines.append(f"  2. The failure plane: {root}/failure_plane")
    if pair:
        run_a, run_b, controller, condition, _, paired, broken, fixed = pair
        lines.append(f"  3. McNemar for baseline vs {controller}/{condition} on {paired} paired questions "
                     f"({fixed} fixed, {broken} broken): {root}/compare?{urlencode({'a': run_a, 'b': run_b})}")
    else:
        lines.append(f"  3. Paired statistics: {root}/compare")
    click.echo("\n".join(lines))
