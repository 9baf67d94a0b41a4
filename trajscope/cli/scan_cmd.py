"""`trajscope scan`: ask a model whether each trajectory of a slice matches a rubric; verdicts go to the warehouse."""
from __future__ import annotations

import click

from ._options import db_option, read_failure


def model_options(command):
    """--model, --base-url, --concurrency, --no-cache (shared by scan, attribute and cluster)."""
    for option in reversed([
        click.option("--model", "model_spec", default="local", show_default=True,
                     help="'local' (the embedded model, offline), 'local:NAME', 'mock:<url>', or a model name on an "
                          "OpenAI-compatible endpoint ($OPENAI_BASE_URL / --base-url, key in $OPENAI_API_KEY)."),
        click.option("--base-url", default=None, help="OpenAI-compatible endpoint of the model."),
        click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
                     help="Model requests in flight."),
        click.option("--no-cache", is_flag=True, help="Do not reuse or store cached model responses."),
    ]):
        command = option(command)
    return command


def resolve(model_spec: str, base_url: str | None, no_cache: bool):
    """(ModelConfig, ResponseCache or None); a bad spec is a CLI error."""
    from trajscope.engine.llm import ResponseCache, default_cache_path, resolve_model

    try:
        config = resolve_model(model_spec, base_url=base_url, temperature=0.0)
    except ValueError as exc:
        raise click.ClickException(f"--model {model_spec}: {exc}") from None
    return config, None if no_cache else ResponseCache(default_cache_path())


@click.command("scan")
@click.argument("rubric")
@click.option("--runs", "runs", multiple=True, required=True, metavar="RUN",
              help="Run to scan (repeat for several: --runs baseline --runs readgate).")
@click.option("--where", default=None, metavar="SQL",
              help="SQL condition over the trajectory_forensics view (one row per trajectory); other views via "
                   "subqueries on trajectory_id. Runs in the sandboxed read path.")
@click.option("--limit", type=click.IntRange(1, 10_000_000), default=None, help="Scan at most N trajectories.")
@click.option("--token-budget", type=click.IntRange(200, 1_000_000), default=None,
              help="Tokens (estimated as characters / 4) a rendered trajectory may take; longer ones are cut in "
                   "the middle with a marker. Default 2000.")
@click.option("--show-sql", is_flag=True, help="Print the slice's SQL before scanning.")
@click.option("--progress-file", type=click.Path(dir_okay=False, path_type=str), default=None,
              help="Also report the stage and verdicts done to this JSON file as the scan goes (the Search page "
                   "starts scans with it and polls it).")
@model_options
@db_option
def command(rubric, runs, where, limit, token_budget, show_sql, progress_file, model_spec, base_url, concurrency,
            no_cache, db_path) -> None:
    """Ask a model whether each trajectory of RUNS (and --where) matches RUBRIC.

    Each trajectory is rendered with numbered steps (the log's source_ref, else the step index), gold
    passages marked [GOLD], the question, gold and final answer; the model answers match / no_match /
    unsure with an explanation and the steps it cites. Verdicts are stored with the rubric's text and
    hash, the model and the prompt version (view rubric_verdicts); a malformed reply is an error
    verdict, and citations of steps outside the trajectory are rejected. Use the rubric as an outcome
    with `trajscope compare A B --rubric HASH`.

    Example: trajscope scan "The agent read a gold passage and still answered wrong" --runs baseline
    --where "any_gold_read AND NOT correct" --model gpt-5-mini
    """
    report_to = _progress_writer(progress_file, rubric)
    try:
        report = _scan(rubric, runs, where, limit, token_budget, model_spec, base_url, concurrency, no_cache,
                       db_path, report_to)
    except click.ClickException as exc:
        report_to("failed", 0, 0, exc.format_message())
        raise
    except BaseException as exc:  # a crash (or Ctrl-C) still leaves the page a reason, never "running" forever
        report_to("failed", 0, 0, f"{type(exc).__name__}: {exc}")
        raise
    report_to("done", report.n_trajectories, report.n_trajectories,
              report.summary() if report.n_trajectories else "no trajectory matches the slice; nothing scanned")
    if show_sql:
        click.echo(report.sql, err=True)
    if not report.n_trajectories:
        click.echo(f"no trajectory of {', '.join(runs)} matches the slice; nothing scanned", err=True)
        return
    click.echo(report.summary())
    click.echo(f"verdicts: trajscope sql \"SELECT run_id, question_id, verdict, explanation, cited_steps "
               f"FROM rubric_verdicts WHERE rubric_hash = '{report.rubric_hash}'\"")


def _scan(rubric, runs, where, limit, token_budget, model_spec, base_url, concurrency, no_cache, db_path, report_to):
    from pathlib import Path

    from trajscope.engine.llm import LocalModelError
    from trajscope.engine.scanners import DEFAULT_TOKEN_BUDGET, scan
    from trajscope.warehouse import ReadRefused, WarehouseBusy, WarehouseMissing

    if not Path(db_path).exists():
        raise click.ClickException(
            f"{db_path}: no warehouse here; create one with `trajscope ingest LOG --db {db_path}`")
    config, cache = resolve(model_spec, base_url, no_cache)
    try:
        return scan(db_path, rubric, list(runs), config=config, where=where, limit=limit, cache=cache,
                    concurrency=concurrency, token_budget=token_budget or DEFAULT_TOKEN_BUDGET, progress=True,
                    on_progress=lambda stage, done, total: stage != "done" and report_to(stage, done, total, ""))
    except (WarehouseMissing, WarehouseBusy, ReadRefused) as exc:
        raise read_failure(exc) from None
    except (ValueError, LocalModelError) as exc:
        raise click.ClickException(str(exc)) from None


def _progress_writer(progress_file: str | None, rubric: str):
    """report(stage, done, total, message) into --progress-file (a no-op without one)."""
    if progress_file is None:
        return lambda stage, done, total, message: None
    import os
    from pathlib import Path

    from trajscope.app.jobs import ScanJob, read_scan_job, write_scan_job

    path = Path(progress_file)
    known = read_scan_job(path)
    job_id = known.job_id if known else path.stem
    pid = os.getpid()

    def report(stage: str, done: int, total: int, message: str) -> None:
        write_scan_job(path, ScanJob(job_id=job_id, rubric=rubric.strip(), stage=stage, done=done, total=total,
                                     message=message, pid=pid))

    report("starting", 0, 0, "")
    return report
