"""The Inspect AI half of bench/peers.py: a log written by inspect_ai's own writer, read by inspect_ai and by trajscope.

Run by bench/peers.py; `python bench/peers_inspect.py LOG N` writes the log in a process of its own.
"""
from __future__ import annotations

import json
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from peers_measure import Measured, measure

EPOCHS = 5
FLUSH_EVERY = 1000  # samples between flushes of the log to disk, as an eval flushes its log buffer
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
# `trajscope ingest` with ingest/importers/_archive.py's MAX_MEMBERS set to the first argument.
LIFTED_INGEST = """
import sys
import trajscope.ingest.importers._archive as archive
archive.MAX_MEMBERS = int(sys.argv.pop(1))
from trajscope.cli import main
main(prog_name="trajscope")
"""
# The importer names epoch 1's run after the file and epoch N's "<run>:epochN"; em is the exact scorer's verdict.
ACCURACY_SQL = ("SELECT coalesce(try_cast(regexp_extract(run_id, ':epoch(\\d+)$', 1) AS INTEGER), 1) AS epoch, "
                "n_trajectories, round(em, 6) AS em FROM run_summary ORDER BY epoch")


def _samples(n_samples: int) -> Iterator[Any]:
    """n_samples Inspect samples (n_samples / EPOCHS questions x EPOCHS), each with a search and a read tool call."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score
    from inspect_ai.tool import ToolCall

    questions = max(1, n_samples // EPOCHS)
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
            yield EvalSample(
                id=f"q{q:06d}", epoch=epoch, input=messages[0].text, target=gold, messages=messages,
                output=ModelOutput.from_content("mockllm/model", answer),
                scores={"exact": Score(value="C" if right else "I", answer=answer)})


def build_log(path: Path, n_samples: int) -> None:
    """The log as `inspect eval` writes one: its eval recorder logs each sample and flushes every FLUSH_EVERY.

    Not write_eval_log: it hands the recorder the whole log before one flush, and the recorder's buffer checks
    each new sample against every buffered one, so 100,000 samples take hours there.
    """
    from inspect_ai._util._async import run_coroutine
    from inspect_ai.log import EvalConfig, EvalDataset, EvalPlan, EvalResults, EvalSpec, EvalStats
    from inspect_ai.log._condense import condense_sample
    from inspect_ai.log._recorders import create_recorder_for_format

    spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task=TASK, dataset=EvalDataset(name="peers"),
                    model="mockllm/model", config=EvalConfig(epochs=EPOCHS))
    total = max(1, n_samples // EPOCHS) * EPOCHS

    async def write() -> None:
        recorder = create_recorder_for_format("eval", str(path.parent))
        await recorder.log_init(spec, str(path), clean=True)
        await recorder.log_start(spec, EvalPlan())
        for i, sample in enumerate(_samples(n_samples), 1):
            await recorder.log_sample(spec, condense_sample(sample))
            if i % FLUSH_EVERY == 0:
                await recorder.flush(spec)
        await recorder.log_finish(spec, "success", EvalStats(),
                                  EvalResults(total_samples=total, completed_samples=total), None)

    run_coroutine(write())


def _trajscope_accuracy(csv: str) -> dict[int, float]:
    rows = [line.split(",") for line in csv.strip().splitlines()[1:]]
    return {int(epoch): round(float(em), 6) for epoch, _, em in rows}


def _accuracy(out: str) -> dict[int, float]:
    return {int(k): v for k, v in json.loads(out)["accuracy"].items()}


@dataclass(frozen=True)
class Ingest:
    """trajscope's ingest of the log, and whether the archive member limit had to be lifted for it."""

    measured: Measured
    lifted: bool


def _ingest(log: Path, db: Path, env: dict[str, str], trajscope: list[str]) -> Ingest:
    """`trajscope ingest`; where it refuses the log for its member count alone, that refusal is printed and the
    ingest is measured again with the limit lifted, so the figure exists and the refusal is not hidden."""
    args = ["ingest", str(log), "--db", str(db), "--no-progress"]
    first = measure([*trajscope, *args], env, check=False)
    if first.returncode == 0:
        return Ingest(first, lifted=False)
    refusal = next((line for line in first.stderr.splitlines() if "members per archive" in line), None)
    if refusal is None:
        sys.exit(f"trajscope ingest exited {first.returncode}:\n{first.stdout}\n{first.stderr[-4000:]}")
    print(f"trajscope ingest refuses the log: {refusal.removeprefix('Error: ')}")
    limit = str(2 * n_members(log))
    return Ingest(measure([sys.executable, "-c", LIFTED_INGEST, limit, *args], env), lifted=True)


def n_members(log: Path) -> int:
    with zipfile.ZipFile(log) as archive:
        return len(archive.infolist())


def run(n: int, work: Path, env: dict[str, str], trajscope: list[str]) -> None:
    """Write the log, measure each side in a fresh process, print times, peak memory and ratios."""
    log, db = work / "peers.eval", work / "peers.duckdb"
    db.unlink(missing_ok=True)
    built = measure([sys.executable, __file__, str(log), str(n)], env)
    print(f"{built.stdout.strip()} in {built.seconds:.1f} s: {log.stat().st_size / 1e6:.1f} MB")
    df = measure([sys.executable, "-c", SAMPLES_DF, str(log)], env)
    read = measure([sys.executable, "-c", READ_EVAL_LOG, str(log)], env)
    ingest = _ingest(log, db, env, trajscope)
    query = measure([*trajscope, "sql", ACCURACY_SQL, "--db", str(db), "--format", "csv"], env)
    theirs, ours = _accuracy(df.stdout), _trajscope_accuracy(query.stdout)
    print("accuracy by epoch  samples_df: " + ", ".join(f"{k}: {v:.4f}" for k, v in sorted(theirs.items())))
    print("accuracy by epoch  trajscope:  " + ", ".join(f"{k}: {v:.4f}" for k, v in sorted(ours.items())))
    if ours != theirs or _accuracy(read.stdout) != theirs:
        sys.exit("the two sides disagree about accuracy by epoch: the comparison means nothing")
    both = ingest.measured.seconds + query.seconds
    print(f"{'each in a fresh process (imports included)':<52} {'s':>8} {'peak MB':>9}")
    for label, m in (("inspect_ai samples_df + accuracy by epoch", df),
                     ("inspect_ai read_eval_log + accuracy by epoch", read),
                     ("trajscope ingest" + (" (member limit lifted)" if ingest.lifted else ""), ingest.measured),
                     ("trajscope sql accuracy by epoch (warehouse built)", query)):
        print(f"{label:<52} {m.seconds:>8.2f} {m.peak_mb:>9.0f}")
    print(f"ratio samples_df / (trajscope ingest + query) at {n:,} samples = {df.seconds / both:.2f}")
    print(f"ratio read_eval_log / (trajscope ingest + query) at {n:,} samples = {read.seconds / both:.2f}")
    print(f"ratio samples_df / trajscope query alone (a second question of the same log) = "
          f"{df.seconds / query.seconds:.2f}")


if __name__ == "__main__":
    import inspect_ai

    build_log(Path(sys.argv[1]), int(sys.argv[2]))
    print(f"inspect_ai {inspect_ai.__version__}: wrote {int(sys.argv[2]):,} samples ({EPOCHS} epochs) with tool calls")
