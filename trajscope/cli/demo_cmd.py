"""`trajscope demo`: build the demo warehouse with the embedded model, then open the dashboard."""
from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import urlencode

import click

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
    from engine.runs import select_questions
    from ingest.datasets import load_dataset

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
@click.option("--no-app", is_flag=True,
              help="Build the warehouse and print the run summary; do not serve the dashboard.")
@click.pass_context
def command(ctx: click.Context, n: int, conditions: str, model: str, max_tokens: int, audit_n: int, db_path: str,
            out_dir: str, seed: int, port: int, no_app: bool) -> None:
    """Build the demo warehouse with the embedded model and open the dashboard.

    Runs the bundled demo questions under the baseline, the Read-Gate (all gates), the requirement
    register and vanilla RAG with the embedded model served locally (no key, no network), ingests every
    trajectory into --db, judges it (EM / F1 / Contain-Acc, entity coverage, answer checks), runs a
    short answer-presence audit, prints the three things to look at first, then starts `trajscope app`.
    Rerunning is fast: finished questions are resumed and model responses come from the on-disk cache.
    """
    from engine.llm import LocalModelError
    from engine.runs import RunSpec, execute_matrix

    started = time.perf_counter()
    specs = []
    for controller, condition, subset in _conditions(conditions):
        ids = _question_ids(n, seed, subset)
        specs.append(RunSpec(
            dataset="demo", controller=controller, condition=condition, model=model,
            n=len(ids) if ids else n, seed=seed, question_ids=ids,
            concurrency=1,  # one llama.cpp server: sequential requests keep its prompt-prefix cache warm
            max_tokens=max_tokens, out_dir=Path(out_dir), db_path=Path(db_path)))
    try:
        _load_corpus(Path(db_path))
    except Exception as exc:  # noqa: BLE001 - any warehouse failure is one clear line, not a traceback
        raise click.ClickException(f"{db_path}: cannot load the demo corpus into the warehouse: {exc}") from None
    sizes = ", ".join(f"{s.controller}/{s.condition} x {s.n}" for s in specs)
    click.echo(f"demo: {sizes} questions with model {model!r} -> {db_path}")
    click.echo(f"corpus loaded into the warehouse at {time.perf_counter() - started:.1f}s")
    try:
        summaries = execute_matrix(specs, on_done=_timing_printer(started))
    except (LocalModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    failed = sum(s.n_errors for s in summaries)
    click.echo(f"runs done in {(time.perf_counter() - started) / 60:.1f} min "
               f"({sum(s.n_selected for s in summaries)} trajectories, {failed} recorded errors)")
    if any(s.ingest_error for s in summaries):
        first_error = next(s.ingest_error for s in summaries if s.ingest_error)
        raise click.ClickException(f"warehouse ingest failed: {first_error}")
    _judge(Path(db_path), [s.run_id for s in summaries])
    if audit_n:
        _audit(Path(db_path), Path(out_dir), model, audit_n, seed)
    click.echo(f"demo built in {(time.perf_counter() - started) / 60:.1f} min")
    if no_app:
        _print_run_summary(Path(db_path))
    _print_guide(Path(db_path), port, serving=not no_app)
    if no_app:
        return
    from trajscope.cli.app_cmd import command as app_command

    ctx.invoke(app_command, db=Path(db_path), port=port)


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


def _judge(db: Path, run_ids: list[str]) -> None:
    # Entity coverage and answer checks feed the snippet-only and low-evidence discipline labels;
    # without them the failure plane could only show no-read finals.
    from engine.judge_pass import judge_run

    started = time.perf_counter()
    for run_id in run_ids:
        judge_run(db, run_id)
    click.echo(f"judged {len(run_ids)} runs (entity coverage, answer checks) in "
               f"{time.perf_counter() - started:.1f}s")


def _audit(db: Path, out_dir: Path, model: str, per_stratum: int, seed: int) -> None:
    # A short audit so the Intervention audit page has both tables: B1 is the BM25 top 5 (as in a
    # RAG pipeline, so retrieval can miss the gold), questions are picked by what it retrieved (see
    # questions_by_b1_stratum); no B4, the [MASK] sentinel only, budgets sized for the small model, and
    # a greedy compile: at the paper's 0.2 the 135M compiler kept or lost the gold from run to run.
    from dataclasses import replace

    from engine.audit import (
        COMPILE_DECODING,
        READER_DECODING,
        AuditLogCorrupt,
        AuditSpec,
        questions_by_b1_stratum,
        run_audit,
    )
    from engine.llm import LocalModelError
    from ingest.datasets import load_dataset

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
    from ingest.datasets import load_dataset
    from warehouse import load_chunks, load_questions

    dataset = load_dataset("demo")
    load_chunks(db, dataset.chunks, dataset.name)
    load_questions(db, dataset.questions, dataset.name)


def _print_run_summary(db: Path) -> None:
    from warehouse import open_readonly

    with open_readonly(db) as con:
        table = con.sql("SELECT * FROM run_summary ORDER BY 1")
        click.echo(str(table))


def _print_guide(db: Path, port: int, *, serving: bool) -> None:
    """Where the dashboard is and the three findings to open first, from the Overview page's own queries."""
    from app.queries import overview_gate_rejections_sql, overview_pairs_sql, overview_plane_moves_sql
    from warehouse import open_readonly

    root = f"http://127.0.0.1:{port}"
    with open_readonly(db) as con:
        gate = con.execute(overview_gate_rejections_sql()).fetchone()
        move = con.execute(overview_plane_moves_sql()).fetchone()
        pair = con.execute(overview_pairs_sql()).fetchone()
    how = "is starting on" if serving else f"serves with `trajscope app --db {db}` on"
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
    else:
        lines.append(f"  2. The failure plane: {root}/failure_plane")
    if pair:
        run_a, run_b, controller, condition, _, paired, broken, fixed = pair
        lines.append(f"  3. McNemar for baseline vs {controller}/{condition} on {paired} paired questions "
                     f"({fixed} fixed, {broken} broken): {root}/compare?{urlencode({'a': run_a, 'b': run_b})}")
    else:
        lines.append(f"  3. Paired statistics: {root}/compare")
    click.echo("\n".join(lines))
