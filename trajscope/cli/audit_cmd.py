"""`trajscope audit`: run the answer-presence intervention audit, or import audit records run elsewhere."""
from __future__ import annotations

from pathlib import Path

import click

from trajscope.engine.audit import COMPILE_DECODING, READER_DECODING, VERIFY_BASELINES
from trajscope.format import F1_RULES


def _csv(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


def _import(paths: tuple[str, ...], db: str | None) -> None:
    from trajscope.format import RecordError
    from trajscope.warehouse import WarehouseBusy
    from trajscope.warehouse.audit import load_audit_files

    try:
        report = load_audit_files(db, list(paths))
    except (RecordError, WarehouseBusy) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(report.summary())


@click.command("audit")
@click.option("--dataset", help="Dataset: 'demo', a known name (hotpotqa, ...) or a path.")
@click.option("--compiler-a", default="local", show_default=True,
              help="Model A: compiles B2 and the B4 draft ('local', 'mock:<url>' or an endpoint model).")
@click.option("--compiler-b", default="local", show_default=True,
              help="Model B (a different family from A): compiles B3 and verifies B4.")
@click.option("--reader", default="local", show_default=True, help="The reader model.")
@click.option("--n", "n", type=int, default=None, help="Audit a seeded sample of N questions (default: all).")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed (pairs cells by construction).")
@click.option("--cell", default=None, help="Cell label in the tables, e.g. S1 (default: the audit id).")
@click.option("--verify", "verify", default="hard", show_default=True,
              help=f"B4 verification modes, comma-separated: {', '.join(VERIFY_BASELINES)} "
                   f"(-> {', '.join(VERIFY_BASELINES.values())}).")
@click.option("--sentinel-baselines", default="b2", show_default=True,
              help="Compiled baselines that get the whole five-sentinel panel (others: [MASK] only).")
@click.option("--top-k", type=int, default=10, show_default=True,
              help="B1 passages per question for datasets without their own paragraphs (BM25).")
@click.option("--f1-rule", type=click.Choice(F1_RULES), default="squad", show_default=True,
              help="Reader F1 rule: SQuAD's, or HotpotQA's official one (a yes / no answer scores 0 unless both "
                   "sides agree).")
@click.option("--question-blind", is_flag=True,
              help="Also compile b2 and b3 with the question withheld (b2_blind, b3_blind) for the question-blind "
                   "containment table (AP §14).")
@click.option("--compile-max-tokens", type=int, default=COMPILE_DECODING.max_tokens, show_default=True)
@click.option("--reader-max-tokens", type=int, default=READER_DECODING.max_tokens, show_default=True)
@click.option("--concurrency", type=int, default=4, show_default=True, help="Model calls and questions in flight.")
@click.option("--out-dir", type=click.Path(file_okay=False), default="runs", show_default=True,
              help="Where the audit log <audit-id>.jsonl is written (and resumed from).")
@click.option("--audit-id", default=None, help="Explicit audit id (default: derived from the settings).")
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help="Warehouse to load the records into (default $TRAJSCOPE_DB or ./trajscope.duckdb).")
@click.option("--no-db", is_flag=True, help="Only write the log; do not load the warehouse.")
@click.option("--no-cache", is_flag=True, help="Bypass the on-disk response cache.")
@click.option("--base-url", default=None, help="OpenAI-compatible endpoint for named models.")
@click.option("--timeout", "timeout_s", type=float, default=None, help="Per-request timeout in seconds.")
@click.option("--import", "import_paths", multiple=True, type=click.Path(dir_okay=False),
              help="Instead of running: validate and load external audit records (JSONL; repeatable).")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def command(dataset: str | None, compiler_a: str, compiler_b: str, reader: str, n: int | None, seed: int,
            cell: str | None, verify: str, sentinel_baselines: str, top_k: int, f1_rule: str, question_blind: bool,
            compile_max_tokens: int,
            reader_max_tokens: int, concurrency: int, out_dir: str, audit_id: str | None, db: str | None,
            no_db: bool, no_cache: bool, base_url: str | None, timeout_s: float | None,
            import_paths: tuple[str, ...], quiet: bool) -> None:
    """Answer-presence intervention audit of compile-then-read pipelines.

    Runs B1 (raw retrieval), B2 (compile by A), B3 (compile by B) and B4 (A then verified by B),
    reads each with the reader, then re-reads every compiled context under the four edits: remove
    and placebo where the gold is in the context, insert_prepend, insert_mid and an identity rerun
    where it is not. The log is resumable; rerunning the same command continues where it stopped.
    Then `trajscope audit-report` prints the tables.

    \b
    Examples:
      trajscope audit --dataset demo --n 5 --db demo.duckdb
      trajscope audit --import my_pipeline.jsonl --db w.duckdb
    """
    if import_paths:
        if dataset:
            raise click.UsageError("use either --dataset (run an audit) or --import (load records), not both")
        _import(import_paths, db)
        return
    if not dataset:
        raise click.UsageError("--dataset is required (or --import FILE to load external audit records)")

    from dataclasses import replace

    from trajscope.engine.audit import AuditLogCorrupt, AuditSpec, run_audit
    from trajscope.engine.llm import LocalModelError
    from trajscope.format import RecordError
    from trajscope.ingest.datasets import DatasetError
    from trajscope.warehouse import WarehouseBusy, default_db_path

    try:
        spec = AuditSpec(
            dataset=dataset, compiler_a=compiler_a, compiler_b=compiler_b, reader=reader, n=n, seed=seed,
            cell=cell, audit_id=audit_id, verify_modes=_csv(verify), sentinel_baselines=_csv(sentinel_baselines),
            top_k=top_k, f1_rule=f1_rule, question_blind=question_blind,
            compile_decoding=replace(COMPILE_DECODING, max_tokens=compile_max_tokens),
            reader_decoding=replace(READER_DECODING, max_tokens=reader_max_tokens), concurrency=concurrency,
            out_dir=Path(out_dir), db_path=None if no_db else Path(db) if db else default_db_path(),
            cache=not no_cache, base_url=base_url, timeout_s=timeout_s, progress=not quiet,
        )
        summary = run_audit(spec)
    except (ValueError, DatasetError, RecordError, AuditLogCorrupt, LocalModelError, WarehouseBusy) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(summary.line())
