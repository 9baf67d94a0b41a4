"""`trajscope judge`: read a run's trajectories, compute judgments and forensic facts, write them back.

The warehouse is opened twice, briefly: once to read, once to write everything in one
transaction, so a slow LLM judge never holds DuckDB's file lock.
"""
from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.entities import EXTRACTORS, entity_coverage, mentions, passage_haystack
from engine.judges import EquivalenceItem, LLMJudge, is_abstention
from trajscope.format import ENTITY_EXTRACTORS, FORCED_END_REASONS, answer_invalidity, has_gold_answer, score_answer
from warehouse import open_warehouse, transaction

LEXICAL_JUDGES = ("em", "f1", "contain")

_INPUTS_SQL = (resources.files(__package__) / "judge_inputs.sql").read_text()


@dataclass(frozen=True)
class JudgeInput:
    """What judging one trajectory needs, read from the warehouse."""

    trajectory_id: str
    record_hash: str
    question: str
    gold: str | None
    aliases: list[str]
    final_answer: str | None
    judges: list[str]
    llm_models: list[str]
    snippets: list[str]
    read_texts: list[str]
    messages: list[str] = field(default_factory=list)  # the controller's own texts shown to the agent
    end_reason: str | None = None

    @property
    def invalidity(self) -> str | None:
        """'echo' / 'hedge' when no judge may count the answer correct (trajscope.format.answer_invalidity)."""
        return answer_invalidity(self.final_answer, self.question, self.messages)


@dataclass
class JudgeReport:
    """What a judge pass added."""

    run_id: str
    n_trajectories: int = 0
    lexical_added: int = 0
    llm_added: int = 0
    llm_failed: int = 0
    coverage_rows: int = 0
    answer_rows: int = 0
    stale_skipped: int = 0
    no_gold_skipped: int = 0  # trajectories whose question has no gold answer: no verdict is possible
    no_answer_skipped: int = 0  # the log did not capture the answer text (e.g. OTel without content capture)
    source_conflicts: int = 0  # trajectories where a verdict added here disagrees with the source's own
    judge_model: str | None = None
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> str:
        parts = [
            f"run {self.run_id}: {self.n_trajectories} trajectories",
            f"{self.lexical_added} em/f1/contain judgments added",
            f"entity coverage for {self.coverage_rows} (trajectory, extractor) pairs",
        ]
        if self.judge_model:
            parts.append(f"{self.llm_added} {self.judge_model} verdicts added ({self.llm_failed} failed)")
        if self.no_gold_skipped:
            parts.append(f"{self.no_gold_skipped} not judged: their question has no gold answer "
                         "(EM / F1 / Contain and LLM verdicts need one)")
        if self.no_answer_skipped:
            parts.append(f"{self.no_answer_skipped} no answer text: not judged (the log did not capture what "
                         "the agent answered; EM / F1 / Contain would score the missing text 0)")
        if self.source_conflicts:
            parts.append(f"{self.source_conflicts} where trajscope's normalised verdict disagrees with the source's "
                         "own (both kept: see the verdict_conflicts view)")
        if self.stale_skipped:
            parts.append(f"{self.stale_skipped} skipped (re-ingested meanwhile)")
        return "; ".join(parts) + f" ({self.seconds:.1f}s)"


def read_judge_inputs(con: Any, run_id: str) -> list[JudgeInput]:
    """Every trajectory of a run with its question, answer, judgments, snippets and read passages."""
    rows = con.execute(_INPUTS_SQL, {"run": run_id}).fetchall()
    return [JudgeInput(*row) for row in rows]


def _coverage_table(inputs: Sequence[JudgeInput], extractors: Sequence[str]) -> pa.Table:
    questions = [i.question or "" for i in inputs]
    haystacks = [passage_haystack(i.read_texts) for i in inputs]
    columns: dict[str, list[Any]] = {k: [] for k in (
        "trajectory_id", "record_hash", "extractor", "n_entities", "n_covered", "coverage", "entities", "missing"
    )}
    for name in extractors:
        if name not in EXTRACTORS:
            raise ValueError(f"unknown entity extractor {name!r}; known: {', '.join(EXTRACTORS)}")
        for item, entities, hay in zip(inputs, EXTRACTORS[name](questions), haystacks, strict=True):
            cov = entity_coverage(entities, hay)
            columns["trajectory_id"].append(item.trajectory_id)
            columns["record_hash"].append(item.record_hash)
            columns["extractor"].append(name)
            columns["n_entities"].append(cov.n_entities)
            columns["n_covered"].append(cov.n_covered)
            columns["coverage"].append(cov.coverage)
            columns["entities"].append(entities)
            columns["missing"].append(cov.missing)
    return pa.table({
        **{k: columns[k] for k in ("trajectory_id", "record_hash", "extractor")},
        "n_entities": pa.array(columns["n_entities"], pa.int32()),
        "n_covered": pa.array(columns["n_covered"], pa.int32()),
        "coverage": pa.array(columns["coverage"], pa.float64()),
        "entities": pa.array(columns["entities"], pa.list_(pa.string())),
        "missing": pa.array(columns["missing"], pa.list_(pa.string())),
    })


def _answer_table(inputs: Sequence[JudgeInput]) -> pa.Table:
    rows = []
    for i in inputs:
        invalid = i.invalidity
        rows.append((
            i.trajectory_id,
            i.record_hash,
            # An echo of the controller's message is no answer: it counts as abstained (gave up).
            is_abstention(i.final_answer) or invalid == "echo",
            mentions(passage_haystack(i.snippets), i.final_answer),
            mentions(passage_haystack(i.read_texts), i.final_answer),
            invalid == "echo",
            invalid == "hedge",
        ))
    names = ("trajectory_id", "record_hash", "abstained", "answer_in_snippets", "answer_in_reads",
             "echoed", "hedged")
    return pa.table({name: [r[k] for r in rows] for k, name in enumerate(names)})


def has_gold(item: JudgeInput) -> bool:
    """Whether a verdict is possible for this trajectory's question (trajscope.format.has_gold_answer)."""
    return has_gold_answer(item.gold, item.aliases)


# A trajectory without an answer that ended by budget, error or a forced answer did not answer (scored
# 0); one without an answer text that ended otherwise answered in a way the log did not capture.
_DID_NOT_ANSWER = ("error", *FORCED_END_REASONS)


def answer_missing(item: JudgeInput) -> bool:
    """Whether the answer text was not captured (no verdict possible), as opposed to no answer given."""
    return not (item.final_answer or "").strip() and item.end_reason not in _DID_NOT_ANSWER


def _judgment_rows(inputs: Sequence[JudgeInput]) -> list[tuple[str, str, float, None, None]]:
    rows = []
    for item in inputs:
        if not has_gold(item) or answer_missing(item):
            continue
        missing = [j for j in LEXICAL_JUDGES if j not in item.judges]
        if not missing:
            continue
        for judgment in score_answer(item.final_answer, item.gold, item.aliases,
                                     question=item.question, messages=item.messages):
            if judgment.judge in missing:
                rows.append((item.trajectory_id, judgment.judge, judgment.score, None, None))
    return rows


async def _llm_rows(inputs: Sequence[JudgeInput], judge: LLMJudge, report: JudgeReport) -> list[tuple]:
    todo = [i for i in inputs if judge.model_name not in i.llm_models and has_gold(i)
            and not answer_missing(i)]
    # An echo or hedge is wrong under every judge (answer_invalidity): recorded as 0, the model not asked.
    rows = [(i.trajectory_id, "llm", 0.0, judge.model_name,
             f"not an answer ({i.invalidity}): scored 0 without the judge") for i in todo if i.invalidity]
    todo = [i for i in todo if not i.invalidity]
    try:
        verdicts = await judge.judge_many(
            [EquivalenceItem(i.question or "", i.gold, i.aliases, i.final_answer) for i in todo]
        )
    finally:
        # The HTTP pool belongs to this event loop, which ends with the pass.
        await judge.model.close()
    for item, verdict in zip(todo, verdicts, strict=True):
        if verdict.equivalent is None:
            report.llm_failed += 1
            if len(report.errors) < 5:
                report.errors.append(f"{item.trajectory_id}: {verdict.error}")
            continue
        rows.append((item.trajectory_id, "llm", float(verdict.equivalent), judge.model_name, verdict.rationale))
    return rows


def write_judge_results(
    con: Any, inputs: Sequence[JudgeInput], judgment_rows: list[tuple], coverage: pa.Table, answers: pa.Table
) -> int:
    """Replace forensic rows and append judgments in one transaction; skips re-ingested trajectories."""
    current = dict(con.execute(
        "SELECT trajectory_id, record_hash FROM trajectories WHERE trajectory_id IN "
        "(SELECT unnest($ids))", {"ids": [i.trajectory_id for i in inputs]}
    ).fetchall())
    fresh = {i.trajectory_id for i in inputs if current.get(i.trajectory_id) == i.record_hash}
    stale = len(inputs) - len(fresh)
    judgment_rows = [r for r in judgment_rows if r[0] in fresh]
    keep = pa.array([t in fresh for t in coverage.column("trajectory_id").to_pylist()], pa.bool_())
    coverage = coverage.filter(keep)
    keep = pa.array([t in fresh for t in answers.column("trajectory_id").to_pylist()], pa.bool_())
    answers = answers.filter(keep)
    con.register("coverage_rows", coverage)
    con.register("answer_rows", answers)
    try:
        with transaction(con):
            extractors = sorted(set(coverage.column("extractor").to_pylist()))
            con.execute(
                "DELETE FROM entity_coverage WHERE trajectory_id IN (SELECT unnest($ids)) "
                "AND extractor IN (SELECT unnest($extractors))",
                {"ids": sorted(fresh), "extractors": extractors},
            )
            con.execute("DELETE FROM answer_checks WHERE trajectory_id IN (SELECT unnest($ids))",
                        {"ids": sorted(fresh)})
            con.execute("INSERT INTO entity_coverage BY NAME SELECT * FROM coverage_rows")
            con.execute("INSERT INTO answer_checks BY NAME SELECT * FROM answer_rows")
            if judgment_rows:
                names = ("trajectory_id", "judge", "score", "judge_model", "rationale")
                con.register("judgment_rows", pa.table(
                    {name: pa.array([r[k] for r in judgment_rows], pa.float64() if name == "score" else pa.string())
                     for k, name in enumerate(names)}
                ))
                con.execute(
                    "INSERT INTO judgments (trajectory_id, judge, score, judge_model, rationale, origin) "
                    "SELECT trajectory_id, judge, score, judge_model, rationale, 'judge' FROM judgment_rows"
                )
                con.unregister("judgment_rows")
    finally:
        con.unregister("coverage_rows")
        con.unregister("answer_rows")
    return stale


def judge_run(
    db_path: str | Path | None,
    run_id: str,
    *,
    llm_judge: LLMJudge | None = None,
    extractors: Sequence[str] = ENTITY_EXTRACTORS,
) -> JudgeReport:
    """Judge one run: missing em/f1/contain, optional LLM verdicts, entity coverage, answer checks.

    The LLM judge's model client is closed when the pass ends: use a fresh LLMJudge per pass.
    """
    start = time.perf_counter()
    report = JudgeReport(run_id, judge_model=llm_judge.model_name if llm_judge else None)
    with open_warehouse(db_path) as con:
        exists = con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
        inputs = read_judge_inputs(con, run_id)
    if not exists and not inputs:
        raise LookupError(f"no run {run_id!r} in the warehouse (see `trajscope sql \"SELECT run_id FROM runs\"`)")
    report.n_trajectories = len(inputs)
    report.no_gold_skipped = sum(1 for i in inputs if not has_gold(i))
    report.no_answer_skipped = sum(1 for i in inputs if has_gold(i) and answer_missing(i))
    rows = _judgment_rows(inputs)
    if llm_judge is not None:
        rows += asyncio.run(_llm_rows(inputs, llm_judge, report))
    coverage = _coverage_table(inputs, extractors)
    answers = _answer_table(inputs)
    with open_warehouse(db_path) as con:
        report.stale_skipped = write_judge_results(con, inputs, rows, coverage, answers)
        report.source_conflicts = con.execute(
            "SELECT count(DISTINCT trajectory_id) FROM verdict_conflicts WHERE run_id = ?", [run_id]).fetchone()[0]
    fresh = report.n_trajectories - report.stale_skipped
    report.lexical_added = sum(1 for r in rows if r[1] != "llm")
    report.llm_added = sum(1 for r in rows if r[1] == "llm")
    report.coverage_rows = coverage.num_rows if not report.stale_skipped else fresh * len(extractors)
    report.answer_rows = fresh
    report.seconds = time.perf_counter() - start
    return report


__all__ = ["JudgeInput", "JudgeReport", "answer_missing", "has_gold",
           "judge_run", "read_judge_inputs", "write_judge_results"]
