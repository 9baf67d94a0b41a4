"""Side by side with a peer: loading an Inspect AI `.eval` log with inspect_ai itself versus `trajscope ingest`.

Run from the repo root:  .venv/bin/python bench/peers.py [--samples 10000] [--tiny] [--workdir DIR]
Builds an Inspect log of --samples samples (questions x epochs, each with search and read tool calls
and an `exact` score) with inspect_ai's own writer, then measures, each in a fresh process that pays
its own imports: inspect_ai.analysis.samples_df plus accuracy by epoch (pandas groupby), read_eval_log
of the whole log, and `trajscope ingest` of the file plus the accuracy-by-epoch query (`trajscope sql`
over run_summary: the importer makes one run per epoch). Both sides' accuracies are printed and must
agree. Prints measured numbers only.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EPOCHS = 5
TINY_SAMPLES = 50
TASK = "peers_bench"
SAMPLES_DF = """
import sys, json
from inspect_ai.analysis import samples_df
df = samples_df(sys.argv[1])
by_epoch = df.groupby("epoch")["score_exact"].apply(lambda s: (s == "C").mean())
print(json.dumps({"rows": len(df), "accuracy": {int(k): round(float(v), 6) for k, v in by_epoch.items()}}))
"""
READ_EVAL_LOG = """
import sys, json
from collections import defaultdict
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
hits, n = defaultdict(int), defaultdict(int)
for sample in log.samples:
    n[sample.epoch] += 1
    hits[sample.epoch] += sample.scores["exact"].value == "C"
print(json.dumps({"rows": len(log.samples), "accuracy": {k: round(hits[k] / n[k], 6) for k in sorted(n)}}))
"""
# The importer names epoch 1's run after the file and epoch N's "<run>:epochN"; em is the exact scorer's verdict.
ACCURACY_SQL = ("SELECT coalesce(try_cast(regexp_extract(run_id, ':epoch(\\d+)$', 1) AS INTEGER), 1) AS epoch, "
                "n_trajectories, round(em, 6) AS em FROM run_summary ORDER BY epoch")


def build_log(path: Path, n_samples: int) -> None:
    """An Inspect `.eval` log of n_samples samples (n_samples / EPOCHS questions x EPOCHS), by inspect_ai's writer."""
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalPlan,
        EvalResults,
        EvalSample,
        EvalSpec,
        EvalStats,
        write_eval_log,
    )
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    questions = max(1, n_samples // EPOCHS)
    samples = []
    for epoch in range(1, EPOCHS + 1):
        for q in range(questions):
            gold = f"answer {q}"
            right = (q * 7 + epoch) % 10 < 4 + epoch % 3  # 40-60% right, differing by epoch
            answer = gold if right else f"answer {q + 1}"
            passage = f"Passage {q}: the record states that the answer to question {q} is {gold}. " * 6
            messages = [
                ChatMessageUser(content=f"Question {q}: what does the record state?"),
                ChatMessageAssistant(content="I will search.", tool_calls=[
                    ToolCall(id=f"s{q}", function="search", arguments={"query": f"record question {q}"})]),
                ChatMessageTool(content=f"[1] doc-{q} {passage[:200]}", tool_call_id=f"s{q}", function="search"),
                ChatMessageAssistant(content="Reading the top hit.", tool_calls=[
                    ToolCall(id=f"r{q}", function="read", arguments={"doc_id": f"doc-{q}"})]),
                ChatMessageTool(content=passage, tool_call_id=f"r{q}", function="read"),
                ChatMessageAssistant(content=answer),
            ]
            samples.append(EvalSample(
                id=f"q{q:06d}", epoch=epoch, input=messages[0].text, target=gold, messages=messages,
                output=ModelOutput.from_content("mockllm/model", answer),
                scores={"exact": Score(value="C" if right else "I", answer=answer)}))
    log = EvalLog(
        status="success",
        eval=EvalSpec(created="2026-01-01T00:00:00+00:00", task=TASK, dataset=EvalDataset(name="peers"),
                      model="mockllm/model", config=EvalConfig(epochs=EPOCHS)),
        plan=EvalPlan(), results=EvalResults(total_samples=len(samples), completed_samples=len(samples)),
        stats=EvalStats(), samples=samples)
    write_eval_log(log, str(path), format="eval")


def timed_process(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(args[:3])} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return seconds, done.stdout


def trajscope_accuracy(csv: str) -> dict[int, float]:
    rows = [line.split(",") for line in csv.strip().splitlines()[1:]]
    return {int(epoch): round(float(em), 6) for epoch, _, em in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--tiny", action="store_true", help=f"{TINY_SAMPLES} samples: checks the script runs")
    parser.add_argument("--workdir", type=Path, default=None, help="where the log and the warehouse go")
    args = parser.parse_args()
    n = TINY_SAMPLES if args.tiny else args.samples
    work = args.workdir or Path(tempfile.mkdtemp(prefix="trajscope-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    log, db = work / "peers.eval", work / "peers.duckdb"
    db.unlink(missing_ok=True)
    import inspect_ai

    start = time.perf_counter()
    build_log(log, n)
    print(f"inspect_ai {inspect_ai.__version__}: wrote {n:,} samples ({EPOCHS} epochs) with tool calls in "
          f"{time.perf_counter() - start:.1f} s: {log.stat().st_size / 1e6:.1f} MB")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    trajscope = [sys.executable, "-m", "trajscope"] if shutil.which("trajscope") is None else ["trajscope"]

    t_df, out_df = timed_process([sys.executable, "-c", SAMPLES_DF, str(log)], env)
    t_read, out_read = timed_process([sys.executable, "-c", READ_EVAL_LOG, str(log)], env)
    t_ingest, _ = timed_process([*trajscope, "ingest", str(log), "--db", str(db), "--no-progress"], env)
    t_query, out_sql = timed_process([*trajscope, "sql", ACCURACY_SQL, "--db", str(db), "--format", "csv"], env)
    df, read = json.loads(out_df), json.loads(out_read)
    ours = trajscope_accuracy(out_sql)
    theirs = {int(k): v for k, v in df["accuracy"].items()}
    print("accuracy by epoch  samples_df: " + ", ".join(f"{k}: {v:.4f}" for k, v in sorted(theirs.items())))
    print("accuracy by epoch  trajscope:  " + ", ".join(f"{k}: {v:.4f}" for k, v in sorted(ours.items())))
    if ours != theirs or {int(k): v for k, v in read["accuracy"].items()} != theirs:
        sys.exit("the two sides disagree about accuracy by epoch: the comparison means nothing")
    both = t_ingest + t_query
    print(f"{'each in a fresh process (imports included)':<48} {'s':>8}")
    print(f"{'inspect_ai samples_df + accuracy by epoch':<48} {t_df:>8.2f}")
    print(f"{'inspect_ai read_eval_log + accuracy by epoch':<48} {t_read:>8.2f}")
    print(f"{'trajscope ingest':<48} {t_ingest:>8.2f}")
    print(f"{'trajscope sql accuracy by epoch (warehouse built)':<48} {t_query:>8.2f}")
    print(f"ratio samples_df / (trajscope ingest + query) at {n:,} samples = {t_df / both:.2f}")
    print(f"ratio read_eval_log / (trajscope ingest + query) at {n:,} samples = {t_read / both:.2f}")
    print(f"ratio samples_df / trajscope query alone (a second question of the same log) = {t_df / t_query:.2f}")


if __name__ == "__main__":
    main()
