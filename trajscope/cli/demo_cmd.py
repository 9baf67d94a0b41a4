"""`trajscope demo`: build the demo warehouse with the embedded model, then open the dashboard."""
from __future__ import annotations

import time
from pathlib import Path

import click

DEFAULT_CONDITIONS = "read_gate/baseline,read_gate/read_gate,execution_rag/register,vanilla_rag/k5"


def _conditions(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        controller, sep, condition = item.partition("/")
        if not sep or not controller or not condition:
            raise click.BadParameter(f"{item!r}: expected CONTROLLER/CONDITION", param_hint="--conditions")
        pairs.append((controller, condition))
    return pairs


@click.command("demo")
@click.option("--n", "n", type=click.IntRange(min=1), default=10, show_default=True,
              help="Demo questions per condition (the same ids for every condition).")
@click.option("--conditions", default=DEFAULT_CONDITIONS, show_default=True,
              help="Comma-separated CONTROLLER/CONDITION pairs.")
@click.option("--model", default="local", show_default=True, help="'local' (embedded SmolLM2) or any `trajscope run --model` spec.")
@click.option("--max-tokens", type=int, default=96, show_default=True, help="Max output tokens per model call.")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default="demo.duckdb", show_default=True,
              help="Warehouse file to build.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/demo", show_default=True,
              help="Directory of the JSONL logs.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the question sample.")
@click.option("--no-app", is_flag=True, help="Build the warehouse and print the run summary; do not serve the dashboard.")
@click.pass_context
def command(ctx: click.Context, n: int, conditions: str, model: str, max_tokens: int, db_path: str, out_dir: str,
            seed: int, no_app: bool) -> None:
    """Build the demo warehouse with the embedded model and open the dashboard.

    Runs the bundled demo questions under the baseline, Read-Gate and requirement-register conditions
    with SmolLM2-135M served locally (no key, no network), ingests every trajectory into --db, judges
    it (EM / F1 / Contain-Acc, entity coverage, answer checks), then starts `trajscope app` on it.
    Rerunning is fast: finished questions are resumed and model responses come from the on-disk cache.
    """
    from engine.llm import LocalModelError
    from engine.runs import RunSpec, execute_matrix

    started = time.perf_counter()
    specs = [
        RunSpec(dataset="demo", controller=controller, condition=condition, model=model, n=n, seed=seed,
                concurrency=1,  # one llama.cpp server: sequential requests keep its prompt-prefix cache warm
                max_tokens=max_tokens, out_dir=Path(out_dir), db_path=Path(db_path))
        for controller, condition in _conditions(conditions)
    ]
    try:
        _load_corpus(Path(db_path))
    except Exception as exc:  # noqa: BLE001 - any warehouse failure is one clear line, not a traceback
        raise click.ClickException(f"{db_path}: cannot load the demo corpus into the warehouse: {exc}") from None
    click.echo(f"demo: {len(specs)} conditions x {n} questions with model {model!r} -> {db_path}")
    try:
        summaries = execute_matrix(specs, on_done=lambda s: click.echo(s.line()))
    except (LocalModelError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    elapsed = time.perf_counter() - started
    failed = sum(s.n_errors for s in summaries)
    click.echo(f"demo built in {elapsed / 60:.1f} min ({sum(s.n_selected for s in summaries)} trajectories, "
               f"{failed} recorded errors)")
    if any(s.ingest_error for s in summaries):
        raise click.ClickException(f"warehouse ingest failed: {next(s.ingest_error for s in summaries if s.ingest_error)}")
    _judge(Path(db_path), [s.run_id for s in summaries])
    if no_app:
        _print_run_summary(Path(db_path))
        return
    from trajscope.cli.app_cmd import command as app_command

    ctx.invoke(app_command, db=Path(db_path))


def _judge(db: Path, run_ids: list[str]) -> None:
    # Entity coverage and answer checks feed the snippet-only and low-evidence discipline labels;
    # without them the failure plane could only show no-read finals.
    from engine.judge_pass import judge_run

    started = time.perf_counter()
    for run_id in run_ids:
        judge_run(db, run_id)
    click.echo(f"judged {len(run_ids)} runs (entity coverage, answer checks) in "
               f"{time.perf_counter() - started:.1f}s")


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
