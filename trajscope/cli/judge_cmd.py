"""`trajscope judge`: EM / F1 / Contain-Acc, optional LLM verdicts, entity coverage and answer checks."""
from __future__ import annotations

import click

from trajscope.format import ENTITY_EXTRACTORS

from ._options import db_option


def _llm_judge(spec: str, base_url: str | None, concurrency: int, use_cache: bool):
    from trajscope.engine.judges import LLMJudge
    from trajscope.engine.llm import ChatModel, ResponseCache, default_cache_path, resolve_model

    config = resolve_model(spec, base_url=base_url, temperature=0.0)
    cache = ResponseCache(default_cache_path()) if use_cache else None
    return config, cache, lambda cfg: LLMJudge(ChatModel(cfg, cache=cache), concurrency=concurrency)


@click.command("judge")
@click.argument("run_ids", nargs=-1, required=True)
@click.option("--judge", "judge_spec", default=None, metavar="MODEL",
              help="Also ask an LLM judge for semantic equivalence: a model name on an OpenAI-compatible "
                   "endpoint ($OPENAI_BASE_URL / --base-url), 'local' (embedded model) or 'mock:<url>'.")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint of the judge model.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
              help="LLM judge requests in flight.")
@click.option("--no-cache", is_flag=True, help="Do not reuse or store cached judge responses.")
@click.option("--extractor", "extractors", multiple=True, type=click.Choice(ENTITY_EXTRACTORS),
              default=ENTITY_EXTRACTORS, show_default=True, help="Entity extractors for low-evidence coverage.")
@db_option
def command(run_ids, judge_spec, base_url, concurrency, no_cache, extractors, db_path) -> None:
    """Judge the trajectories of RUN_IDS already in the warehouse.

    Adds em / f1 / contain judgments where a trajectory lacks them, LLM verdicts (with --judge) where
    it lacks one from that model, and recomputes entity coverage and answer checks (abstention,
    snippet-only answers) that the failure views use. Everything is written in one transaction per
    run, with origin 'judge'.

    Example: trajscope judge baseline readgate --judge gpt-5-mini
    """
    from pathlib import Path

    from trajscope.engine.judge_pass import judge_run
    from trajscope.warehouse import WarehouseBusy, check_warehouse_file

    try:
        check_warehouse_file(Path(db_path))  # one line, exit 3, for a file that is not a warehouse
    except FileNotFoundError:
        raise click.ClickException(
            f"{db_path}: no warehouse here; create one with `trajscope ingest LOG --db {db_path}`"
        ) from None
    server = None
    make_judge = None
    try:
        if judge_spec:
            try:
                config, _cache, make_judge = _llm_judge(judge_spec, base_url, concurrency, not no_cache)
            except ValueError as exc:
                raise click.ClickException(f"--judge {judge_spec}: {exc}") from None
            if config.local:
                from trajscope.engine.llm import LocalModelError, LocalModelServer

                try:
                    server = LocalModelServer(model=config.name).start()
                except LocalModelError as exc:
                    raise click.ClickException(f"embedded judge model: {exc}") from None
                config = config.with_overrides(base_url=server.base_url)
        for run_id in run_ids:
            judge = make_judge(config) if make_judge else None
            try:
                report = judge_run(db_path, run_id, llm_judge=judge, extractors=extractors)
            except (LookupError, ValueError, WarehouseBusy) as exc:
                raise click.ClickException(str(exc)) from None
            click.echo(report.summary())
            for error in report.errors:
                click.echo(f"  judge failed: {error}", err=True)
    finally:
        if server is not None:
            server.stop()
