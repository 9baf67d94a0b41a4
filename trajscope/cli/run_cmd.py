"""`trajscope run`: run a controller over a dataset (or a run matrix), logging every trajectory."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ._options import LakeLocation


def _params(pairs: tuple[str, ...]) -> dict[str, Any]:
    from trajscope.format import RecordError
    from trajscope.ingest.importers import load_yaml  # here, not at the top: the importers take 0.4 s to load

    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE", param_hint="--param")
        try:  # typed: 2 -> int, true -> bool, [a, b] -> list; aliases bounded like every YAML the user writes
            params[key.strip()] = load_yaml(value, f"--param {key.strip()}", "value")
        except RecordError as exc:
            raise click.BadParameter(f"{key.strip()}: {exc.message}", param_hint="--param") from None
    return params


@click.command("run")
@click.option("--dataset", help="'demo' or a dataset path (see `trajscope data list`).")
@click.option("--controller", help="Controller name, e.g. read_gate, arag, execution_rag, direct, vanilla_rag.")
@click.option("--condition", help="Condition of the controller, e.g. baseline, read_gate, register (default: its own).")
@click.option("--model", default=None, help="'local' (embedded SmolLM2, default), 'mock:<url>', or a model name "
              "served at --base-url / $OPENAI_BASE_URL with the key in $OPENAI_API_KEY.")
@click.option("--base-url", help="OpenAI-compatible endpoint root (default $OPENAI_BASE_URL, else OpenAI).")
@click.option("--api-key-env", default=None, metavar="NAME",
              help="Environment variable holding the API key (default OPENAI_API_KEY); keys are never logged.")
@click.option("--n", "n", type=click.IntRange(min=1), help="Number of questions (seeded sample); default all.")
@click.option("--seed", type=int, default=None, help="Seed of the question sample (default 0).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None, help="Episodes in flight at once (default 4).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default=None,
              help="Warehouse to ingest into as trajectories finish (default $TRAJSCOPE_DB or ./trajscope.duckdb).")
@click.option("--no-ingest", is_flag=True, help="Only write the JSONL log.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Log directory (default ./runs).")
@click.option("--resume", is_flag=True, help="Require an existing log to continue (a rerun resumes anyway).")
@click.option("--run-id", help="Explicit run id (default: derived from the settings).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Controller parameter override (repeatable).")
@click.option("--temperature", type=float, help="Sampling temperature (default: the model config's, 0).")
@click.option("--max-tokens", type=int, help="Max output tokens per call.")
@click.option("--reasoning-effort", help="Passed through to reasoning models (low / medium / high).")
@click.option("--protocol", type=click.Choice(["tools", "json"]),
              help="Action protocol (default: json for local, tools otherwise).")
@click.option("--timeout", "timeout_s", type=float, help="Per-request timeout in seconds (default 60).")
@click.option("--episode-timeout", "episode_timeout_s", type=float,
              help="Give up on one question after this many seconds.")
@click.option("--retriever", type=click.Choice(["hybrid", "bm25", "dense"]), default=None,
              help="Retriever (default hybrid).")
@click.option("--top-k", type=int, default=None, help="Search results per query (default 5).")
@click.option("--embedding-model", default=None,
              help="Dense retriever model: any sentence-transformers name or path (default all-MiniLM-L6-v2, bundled).")
@click.option("--no-cache", is_flag=True, help="Do not use the on-disk response cache.")
@click.option("--cache", "cache_path", type=click.Path(dir_okay=False),
              help="Response cache file (default $TRAJSCOPE_CACHE/llm_responses.sqlite).")
@click.option("--prices", type=click.Path(exists=True, dir_okay=False),
              help="Price table (JSON/YAML: model -> [usd_per_1k_in, usd_per_1k_out]).")
@click.option("--matrix", type=click.Path(exists=True, dir_okay=False),
              help="Run-matrix YAML: shared settings plus a `runs:` list; every run uses the same question ids.")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@click.option("--ray", "ray_address", metavar="ADDRESS",
              help="Run on a Ray cluster ('auto', HOST:6379 or ray://HOST:10001): one task per (run, shard), each "
              "the same orchestrator on a worker, retried on another node when one is lost; this process shows "
              "the progress and ingests each shard's log as it ends. Every node needs this trajscope installed.")
@click.option("--shards", type=click.IntRange(min=1), default=4, show_default=True,
              help="With --ray: shards per run (every shards-th question of the seeded selection each).")
@click.option("--storage", "ray_storage", metavar="DIR|URL",
              help="With --ray: where the shard logs go, seen by every node and this one: a shared directory "
              "(resumes per trajectory) or an fsspec URL such as s3://bucket/runs (resumes from the last "
              "finished attempt). Default: --out, made absolute.")
@click.option("--lake", "ray_lake", type=LakeLocation(exists=False), default=None, metavar="DIR|URL",
              help="With --ray: add each run to this lake (trajscope lake: a folder or an object storage URL) as "
              "one writer once its last shard has ended, instead of ingesting into --db. A rerun of a finished "
              "matrix adds nothing twice.")
@click.option("--ray-retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="With --ray: times a shard is retried after its node or worker dies.")
@click.option("--plan", is_flag=True,
              help="With --matrix: print the minimum detectable effect and power of each paired "
              "comparison (every run against the matrix's first) and run nothing.")
@click.option("--plan-discordance", type=click.FloatRange(0, 1, min_open=True), default=0.2, show_default=True,
              help="Assumed share of questions two conditions answer differently (a pilot run's compare tells you).")
@click.option("--plan-effect", type=click.FloatRange(0, 1, min_open=True), default=0.05, show_default=True,
              help="Accuracy difference whose power is printed.")
@click.option("--plan-power", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8,
              show_default=True, help="Target power of the MDE.")
@click.option("--plan-alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Family-wise alpha, Holm-corrected across the matrix's comparisons.")
def command(**options: Any) -> None:
    """Run an agent controller over a dataset and log every trajectory.

    Each finished trajectory is appended to <out>/<run_id>.jsonl (flushed and fsync'd) and ingested
    into the warehouse in small batches. Starting the same run again resumes it: finished question ids
    are skipped. Failures of a question (model errors after retries, controller bugs) are logged as
    error trajectories; the run goes on.

    \b
    Examples:
      trajscope run --dataset demo --controller read_gate --condition read_gate --n 20
      trajscope run --dataset data/hotpot --controller execution_rag --model gpt-4o-mini --concurrency 16
      trajscope run --matrix matrix.yaml
      trajscope run --matrix matrix.yaml --ray auto --shards 8 --storage /mnt/shared/runs

    With --ray the matrix runs as (run, shard) tasks on the cluster: the same run ids, seeds and
    question ids as a local run, each shard logged to <storage>/<run_id>.shard-K-of-N.jsonl and
    resumable on its own (see docs/scaling.md).
    """
    from trajscope.engine.llm import LocalModelError
    from trajscope.engine.runs import LogCorrupt, MatrixError, RunSetupError, RunSpec, execute_matrix, load_matrix

    if options["prices"]:
        os.environ["TRAJSCOPE_PRICES"] = options["prices"]
    if options["plan"]:
        _print_plan(options)
        return
    shared = _shared_settings(options)
    try:
        if options["matrix"]:
            if options["dataset"] or options["controller"]:
                raise click.UsageError(
                    "--matrix takes dataset and controllers from the file; drop --dataset/--controller"
                )
            specs = load_matrix(options["matrix"], **shared)
        else:
            if not options["dataset"] or not options["controller"]:
                raise click.UsageError("--dataset and --controller are required (or use --matrix FILE)")
            specs = [RunSpec(dataset=options["dataset"], controller=options["controller"],
                             condition=options["condition"], n=options["n"], run_id=options["run_id"],
                             params=_params(options["params"]), **shared)]
        for spec in specs:
            spec.condition = spec.condition or _default_condition(spec.controller)
            if options["no_ingest"]:
                spec.db_path = None
            elif spec.db_path is None:
                from trajscope.warehouse import default_db_path

                spec.db_path = Path(default_db_path())
        if options["ray_address"]:
            _run_on_ray(specs, options)
            return
        if options["ray_storage"]:
            raise click.UsageError("--storage is for --ray runs (a local run logs to --out)")
        if options["ray_lake"]:
            raise click.UsageError("--lake is for --ray runs (a local run ingests into --db; `trajscope ingest "
                                   "--lake` adds its log to a lake)")
        summaries = execute_matrix(specs, on_done=lambda s: click.echo(s.line()))
    except (RunSetupError, MatrixError, LogCorrupt, LocalModelError, ValueError, FileNotFoundError) as exc:
        raise click.ClickException(str(exc)) from None
    if any(s.n_errors for s in summaries):
        click.echo(f"{sum(s.n_errors for s in summaries)} question(s) ended in a recorded error "
                   "(see the `error` field / the warehouse).", err=True)
    # The exit status says whether the work was done: not when a run's every question errored, nor when its
    # log did not reach the warehouse.
    all_errored = [s.run_id for s in summaries if s.n_completed and s.n_errors >= s.n_completed]
    not_ingested = [s.run_id for s in summaries if s.ingest_error]
    if all_errored or not_ingested:
        raise click.ClickException("; ".join(
            ([f"every question of {', '.join(all_errored)} ended in an error"] if all_errored else [])
            + ([f"{', '.join(not_ingested)} not ingested into the warehouse (its log is kept: `trajscope ingest` "
                "it once the cause is fixed)"] if not_ingested else [])))


def _run_on_ray(specs: list[Any], options: dict[str, Any]) -> None:
    """The matrix as Ray tasks; one line per run, then per retried or failed shard; exit 1 if any failed."""
    from trajscope.engine.distributed import run_matrix_on_ray

    db_paths = {spec.db_path for spec in specs}
    if len(db_paths) > 1 and not options["ray_lake"]:
        raise click.UsageError("--ray ingests into one warehouse: give the runs one db (or --db)")
    if options["ray_lake"] and options["no_ingest"]:
        raise click.UsageError("--lake adds the runs to a lake; --no-ingest adds them nowhere: give one")
    if options["ray_lake"]:
        from trajscope.warehouse.lake import LakeError, create_lake

        try:
            create_lake(options["ray_lake"])  # before any shard runs: a location that cannot be a lake is refused
        except LakeError as exc:
            raise click.ClickException(str(exc)) from None
    try:
        result = run_matrix_on_ray(specs, address=options["ray_address"], shards=options["shards"],
                                   storage=options["ray_storage"], db_path=db_paths.pop(),
                                   max_retries=options["ray_retries"], progress=not options["no_progress"],
                                   lake=options["ray_lake"])
    except ConnectionError as exc:  # ray.init: no cluster at that address
        raise click.ClickException(f"--ray {options['ray_address']}: {exc}") from None
    except ImportError as exc:  # the `distributed` extra is not installed
        raise click.ClickException(str(exc)) from None
    for line in result.lines():
        click.echo(line)
    if result.ingested:
        click.echo(f"ingested {result.ingested} trajectories as their " + ("runs" if options["ray_lake"] else "shards")
                   + " ended")
    if result.failed or result.not_ingested:
        raise click.ClickException(f"{len(result.failed)} shard(s) failed, {len(result.not_ingested)} not ingested: "
                                   "run the same command again to resume them")


def _question_count(dataset: str) -> int:
    from trajscope.ingest.datasets import load_dataset

    return len(load_dataset(dataset).questions)


def _print_plan(options: dict[str, Any]) -> None:
    """MDE / power of the matrix's paired comparisons before anything runs."""
    from trajscope.analysis.stats import plan_comparisons
    from trajscope.engine.runs import MatrixError, load_matrix

    if not options["matrix"]:
        raise click.UsageError("--plan needs --matrix FILE (the comparisons are the matrix's runs against its first)")
    try:
        specs = load_matrix(options["matrix"])
    except MatrixError as exc:
        raise click.ClickException(str(exc)) from None
    if len(specs) < 2:
        raise click.ClickException(f"{options['matrix']}: a plan needs two or more runs to compare")
    for spec in specs:
        spec.condition = spec.condition or _default_condition(spec.controller)
    try:
        n = specs[0].n if specs[0].n is not None else _question_count(specs[0].dataset)
    except (ValueError, FileNotFoundError) as exc:
        raise click.ClickException(f"{options['matrix']}: field dataset: {exc}") from None
    first = specs[0].resolved_run_id()
    pairs = [(first, spec.resolved_run_id(), n) for spec in specs[1:]]
    plans = plan_comparisons(pairs, discordance=options["plan_discordance"], alpha=options["plan_alpha"],
                             power=options["plan_power"], effect=options["plan_effect"])
    click.echo(f"power plan: {len(plans)} paired comparison(s) on n = {n:,} questions, discordance "
               f"{options['plan_discordance']:.2f}, family alpha {options['plan_alpha']:.3f} (Holm: "
               f"{plans[0].alpha:.4f} per test at worst), target power {options['plan_power']:.2f}")
    width = max(len(p.run_b) for p in plans)
    header = (f"{'against ' + first:<{width + 8}}  {'MDE (pp)':>9}  {'power at':>8}  {'Connor':>7}  {'exact':>7}  "
              f"{'McNemar sim':>11}")
    click.echo(header)
    for p in plans:
        click.echo(f"{'  ' + p.run_b:<{width + 8}}  {100 * p.mde:>9.2f}  {100 * p.power_at:>6.1f}pp  "
                   f"{p.power_normal:>7.3f}  {p.power_mcnemar_exact:>7.3f}  {p.power_mcnemar_simulated:>11.3f}")
    click.echo("MDE: smallest accuracy difference McNemar's z-test detects with the target power by Connor's "
               "(1987) formula (Connor: its power at the effect); exact: the exact McNemar test's power by "
               "enumeration; McNemar sim: the same by simulation (4,000 draws, seed 42). Nothing was run.")


def _default_condition(controller: str) -> str | None:
    # Recorded explicitly so the run id and the Run record name the condition that actually ran.
    from trajscope.engine.controllers import CONTROLLERS

    spec = CONTROLLERS.get(controller)
    if spec is None:
        raise click.ClickException(f"unknown controller {controller!r}; choose one of: {', '.join(CONTROLLERS)}")
    return spec.default_condition


def _shared_settings(options: dict[str, Any]) -> dict[str, Any]:
    names = ("model", "base_url", "api_key_env", "seed", "concurrency", "db_path", "out_dir", "temperature",
             "max_tokens", "reasoning_effort", "protocol", "timeout_s", "episode_timeout_s", "retriever", "top_k",
             "embedding_model", "cache_path")
    shared = {k: options[k] for k in names if options.get(k) is not None}
    if options["no_cache"]:
        shared["cache"] = False
    if options["resume"]:
        shared["require_resume"] = True
    if options["no_progress"]:
        shared["progress"] = False
    if options["no_ingest"]:
        shared["db_path"] = None
    if options.get("matrix") and options["params"]:
        shared["params"] = _params(options["params"])
    return shared
