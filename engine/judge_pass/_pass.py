"""`trajscope judge`: a run's trajectories scored (judgments and forensic facts); the reads and writes are
warehouse.judgments'."""
from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from trajscope.engine.entities import EXTRACTORS, entity_coverage, mentions, passage_haystack
from trajscope.engine.judges import EquivalenceItem, LLMJudge, is_abstention
from trajscope.format import ENTITY_EXTRACTORS, FORCED_END_REASONS, has_gold_answer, score_answer
from trajscope.warehouse.judgments import JudgeInput, load_judge_inputs, store_judge_results

LEXICAL_JUDGES = ("em", "f1", "contain")


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
# One stored verdict: trajectory, judge, score, judge model, rationale.
_Row = tuple[str, str, float, str | None, str | None]


def answer_missing(item: JudgeInput) -> bool:
    """Whether the answer text was not captured (no verdict possible), as opposed to no answer given."""
    return not (item.final_answer or "").strip() and item.end_reason not in _DID_NOT_ANSWER


def _judgment_rows(inputs: Sequence[JudgeInput]) -> list[_Row]:
    rows: list[_Row] = []
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


async def _llm_rows(inputs: Sequence[JudgeInput], judge: LLMJudge, report: JudgeReport) -> list[_Row]:
    todo = [i for i in inputs if judge.model_name not in i.llm_models and has_gold(i)
            and not answer_missing(i)]
    # An echo or hedge is wrong under every judge (answer_invalidity): recorded as 0, the model not asked.
    rows: list[_Row] = [(i.trajectory_id, "llm", 0.0, judge.model_name,
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
    # The warehouse is opened twice, briefly (warehouse.judgments): a slow LLM judge never holds its file lock.
    loaded = load_judge_inputs(db_path, run_id)
    inputs = loaded.inputs
    if not loaded.run_exists and not inputs:
        raise LookupError(f"no run {run_id!r} in the warehouse (see `trajscope sql \"SELECT run_id FROM runs\"`)")
    report.n_trajectories = len(inputs)
    report.no_gold_skipped = sum(1 for i in inputs if not has_gold(i))
    report.no_answer_skipped = sum(1 for i in inputs if has_gold(i) and answer_missing(i))
    rows = _judgment_rows(inputs)
    if llm_judge is not None:
        rows += asyncio.run(_llm_rows(inputs, llm_judge, report))
    coverage = _coverage_table(inputs, extractors)
    answers = _answer_table(inputs)
    stored = store_judge_results(db_path, run_id, inputs, rows, coverage, answers)
    report.stale_skipped, report.source_conflicts = stored.stale_skipped, stored.source_conflicts
    fresh = report.n_trajectories - report.stale_skipped
    report.lexical_added = sum(1 for r in rows if r[1] != "llm")
    report.llm_added = sum(1 for r in rows if r[1] == "llm")
    report.coverage_rows = coverage.num_rows if not report.stale_skipped else fresh * len(extractors)
    report.answer_rows = fresh
    report.seconds = time.perf_counter() - start
    return report


__all__ = ["JudgeInput", "JudgeReport", "answer_missing", "has_gold", "judge_run"]
