"""`trajscope fork`: counterfactual re-runs of logged trajectories (one, or a slice of a run)."""
from __future__ import annotations

import click

from ._options import db_option


@click.command("fork", epilog="Interventions (docs/forks.md): inject_gold[:CHUNK], placebo[:CHUNK], "
               "force_read:CHUNK, replace_query:TEXT, remove_decoy:CHUNK, inject_candidate[:CHUNK], reject_final, "
               "fix_register:ITEM=STATUS[:note], swap_model:MODEL.")
@click.argument("trajectory_id", required=False)
@click.option("--at", "at", required=True,
              help="The fork step: a step index (0-based; -1 the last) or a rule: final, first_read, "
                   "first_decisive_error (batch form: from the warehouse view of that name).")
@click.option("--intervention", "-i", required=True,
              help="NAME[:ARGUMENT] from the documented set (see below); auto / auto_placebo with "
                   "--at first_decisive_error: the intervention each trajectory's decisive error implies.")
@click.option("--runs", "runs", multiple=True, help="Batch form: fork trajectories of this run (repeatable).")
@click.option("--where", default=None,
              help="Batch form: SQL predicate over trajectory_facts joined with trajectory_correctness "
                   "(e.g. \"correct = false\").")
@click.option("--log", "log_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the parent from this canonical log instead of the warehouse.")
@click.option("--model", default=None,
              help="How to reach the parent's model (default: rebuilt from the run record, e.g. local:NAME).")
@click.option("--cache-path", type=click.Path(dir_okay=False), default=None,
              help="The response cache the parent run wrote (default: $TRAJSCOPE_CACHE/llm_responses.sqlite).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs", show_default=True,
              help="Folder of the fork run's log.")
@click.option("--no-ingest", is_flag=True, help="Write the log only; do not load it into the warehouse.")
@click.option("--controller", "imported_controller", type=click.Choice(["read_gate", "arag"]), default=None,
              help="Imported logs only: the trajscope controller that runs the rest (its prefix is replayed from "
                   "the log onto this controller's search / read tools).")
@click.option("--condition", "imported_condition", default=None, help="Imported logs only: the controller's condition.")
@click.option("--dataset", "imported_dataset", default=None,
              help="Imported logs only: the dataset (name or path) whose corpus holds the log's chunk ids.")
@click.option("--retriever", "imported_retriever", type=click.Choice(["bm25", "dense", "hybrid"]), default="bm25",
              show_default=True, help="Imported logs only: the retriever the rest searches with.")
@click.option("--concurrency", type=click.IntRange(1, 256), default=4, show_default=True)
@db_option
def command(trajectory_id, at, intervention, runs, where, log_path, model, cache_path, out_dir, no_ingest,
            imported_controller, imported_condition, imported_dataset, imported_retriever, concurrency,
            db_path) -> None:
    """Fork a logged trajectory at a step, change one thing, and run the rest.

    The parent's controller, tools, budget and model replay the steps before the fork step from the
    response cache (zero model calls; the replay must equal the parent, else the fork fails with the
    reason), the intervention applies at the step, and the rest runs live. Each child is logged in
    a fork run (one per parent run: its log resumes when the same command is given again) and
    ingested like any run; the child records its parent, the step and the intervention.

    Examples:

      trajscope fork 'demo-read_gate-...::q12' --at 3 --intervention force_read:c17

      trajscope fork --runs demo-read_gate-... --where "correct = false" --at final -i reject_final

    An imported log forks where its tool map allows (searches listing chunk ids and reads of chunk ids
    over a corpus given with --dataset): its prefix is replayed from the log itself onto trajscope's
    --controller, and --model runs the rest; otherwise it is refused with the reason.
    """
    from trajscope.engine.forks import (
        ForkError,
        ImportedSetup,
        fork_many,
        load_parent,
        parse_intervention,
        select_parents,
    )
    from trajscope.ingest.datasets import DatasetError
    from trajscope.warehouse.read import ReadRefused

    imported = ImportedSetup(controller=imported_controller or "read_gate", condition=imported_condition,
                             dataset=imported_dataset, retriever=imported_retriever)

    try:
        parse_intervention(intervention)
        if trajectory_id and runs:
            raise click.UsageError("give either TRAJECTORY_ID or --runs, not both")
        facts = None
        if trajectory_id:
            parents = [load_parent(trajectory_id, log=log_path, db=db_path)]
            where = f"trajectory_id = '{trajectory_id}'"
        elif runs:
            if log_path:
                from trajscope.engine.forks import load_log

                parents = [t for t in load_log(log_path) if t.run.run_id in runs]
                if where:
                    raise click.UsageError("--where reads the warehouse; with --log give TRAJECTORY_ID instead")
            else:
                parents, facts = select_parents(db_path, list(runs), where, at)
        else:
            raise click.UsageError("give a TRAJECTORY_ID or --runs RUN")
        if not parents:
            raise click.ClickException("no trajectory matches")
        summaries = fork_many(parents, at, intervention, db_path=None if no_ingest else db_path, out_dir=out_dir,
                              cache_path=cache_path, model=model, where=where, concurrency=concurrency,
                              progress=len(parents) > 1, facts=facts, imported=imported)
    except ForkError as exc:
        raise click.ClickException(str(exc)) from None
    except ReadRefused as exc:  # a --where the read path refuses (not one SELECT filter, a file read, a bad column)
        raise click.ClickException(f"--where {where!r}: {exc}") from None
    except DatasetError as exc:  # the parent's dataset is not here (named by the run, or --dataset)
        raise click.ClickException(f"the parent's dataset cannot be loaded: {exc}") from None
    failed = False
    for summary in summaries:
        for line in summary.lines():
            click.echo(line)
        failed = failed or bool(summary.failed) or summary.run is None
    if failed and trajectory_id:
        raise SystemExit(1)
