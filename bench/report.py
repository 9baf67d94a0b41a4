"""Benchmark: all three paper reports over 100,000 synthetic trajectories (target < 5 s).

Run: .venv/bin/python bench/report.py [--n 100000] [--audit-records 4000] [--repeats 3] [--tiny]
Builds a warehouse from bench/synthetic.py's paired runs (not timed) plus synthetic audit records,
then times `build_report` for read-gate, execution-rag and audit (every table, every bootstrap, the
warehouse hash) and the rendering of all three to LaTeX, Markdown and CSV; prints the median.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from synthetic import CONDITIONS, write_synthetic_log

from trajscope.analysis.report import build_report, forget_digests, render_all
from trajscope.format import AuditRecord, ReaderOutput
from trajscope.warehouse import ingest_paths, open_read
from trajscope.warehouse.audit import load_audit_records

TINY_N = 2_000
TINY_AUDIT = 200
TARGET_S = 5.0
WORDS = ("river", "mill", "founded", "mayor", "bridge", "company", "born", "museum", "harbour", "railway")


def audit_records(n: int, seed: int = 0) -> list[AuditRecord]:
    """n synthetic audit records over four cells: four settings, [MASK] remove / placebo, a sentinel panel."""
    rng = random.Random(seed)
    records = []
    for i in range(n):
        gold = f"Answer {i}"
        has = {b: rng.random() < p for b, p in (("b1", 0.6), ("b2", 0.8), ("b3", 0.7), ("b4", 0.75))}
        contexts = {
            b: " ".join(rng.choice(WORDS) for _ in range(40)) + (f" {gold}." if h else ".") for b, h in has.items()
        }
        outputs = []
        for b, h in has.items():
            base = round(min(1.0, max(0.0, (0.7 if h else 0.3) + rng.uniform(-0.2, 0.2))), 3)
            outputs.append(ReaderOutput(baseline=b, answer="a", f1=base))
            if b != "b1" and h:
                # The sentinel panel runs on B2 of two cells, as in the paper (S1, S2).
                sentinels = ("[MASK]", "[REMOVED]", "###") if b == "b2" and i % 4 < 2 else ("[MASK]",)
                outputs += [
                    ReaderOutput(
                        baseline=b, intervention="remove", sentinel=s, answer="x", f1=round(base * rng.random(), 3)
                    )
                    for s in sentinels
                ]
                outputs.append(
                    ReaderOutput(
                        baseline=b,
                        intervention="placebo",
                        sentinel="[MASK]",
                        answer="y",
                        f1=round(base * rng.uniform(0.9, 1.0), 3),
                    )
                )
        cell = f"S{i % 4 + 1}"
        records.append(
            AuditRecord(
                audit_id=f"bench-{cell}",
                cell=cell,
                dataset="synthetic",
                question_id=f"q{i:06d}",
                question=f"Question {i}?",
                gold=gold,
                reader_model="reader",
                contexts=contexts,
                outputs=outputs,
            )
        )
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000, help="trajectories (split over the paired runs)")
    parser.add_argument("--audit-records", type=int, default=4_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_N} trajectories: checks the script runs, not speed")
    args = parser.parse_args()
    if args.tiny:
        args.n, args.audit_records, args.repeats = TINY_N, TINY_AUDIT, 1
    with tempfile.TemporaryDirectory() as tmp:
        log, db = Path(tmp) / "synthetic.jsonl", Path(tmp) / "bench.duckdb"
        write_synthetic_log(log, args.n)
        started = time.perf_counter()
        ingest_paths(db, [log], progress=False, per_run_questions=True)  # synthetic golds differ per run
        load_audit_records(db, audit_records(args.audit_records))
        print(
            f"warehouse: {args.n:,} trajectories in {len(CONDITIONS)} runs and {args.audit_records:,} audit records "
            f"(built in {time.perf_counter() - started:.1f} s, not timed)"
        )
        runs = {
            "read-gate": [f"synthetic-{c}" for c in ("baseline", "read_gate", "context_injection")],
            "execution-rag": [f"synthetic-{c}" for c in CONDITIONS],
            "audit": [],
        }
        timings: dict[str, list[float]] = {paper: [] for paper in runs}
        totals = []
        for _ in range(args.repeats):
            forget_digests(db)  # each repeat hashes the warehouse file once, shared by the three reports
            total = 0.0
            for paper, run_ids in runs.items():
                t0 = time.perf_counter()
                with open_read(db) as con:
                    tables = build_report(con, paper, run_ids, db_path=db)
                for fmt in ("latex", "markdown", "csv"):
                    render_all(tables, fmt)
                elapsed = time.perf_counter() - t0
                timings[paper].append(elapsed)
                total += elapsed
            totals.append(total)
        applicable = {
            paper: sum(not t.not_applicable for t in build_tables(db, paper, ids)) for paper, ids in runs.items()
        }
    for paper, values in timings.items():
        print(f"  {paper:<14} {statistics.median(values):6.2f} s  ({applicable[paper]} tables with numbers)")
    median = statistics.median(totals)
    print(
        f"all three reports over {args.n:,} trajectories: {median:.2f} s median of {args.repeats} "
        f"(target < {TARGET_S:.0f} s: {'met' if median < TARGET_S else 'NOT met'})"
    )


def build_tables(db: Path, paper: str, run_ids: list[str]):
    with open_read(db) as con:
        return build_report(con, paper, run_ids, db_path=db)


if __name__ == "__main__":
    main()
