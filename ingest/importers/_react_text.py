"""Plain-text ReAct logs: every episode a trajectory, trials as runs, gold and verdict read from the text."""
from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import msgspec

from trajscope.format import ErrorStep, FinalStep, ForcedAnswerStep, Judgment, Question, Step, Trajectory

from ._context import ImportContext, assemble
from ._episodes import Episode, question_and_preamble, split_episodes, summary_mismatches
from ._json_stream import MAX_RECORD_BYTES
from ._questions import plain_question, text_question_id
from ._react_turns import steps_from_text


@dataclass(frozen=True)
class EpisodeText:
    """An episode taken apart: question, steps, gold, verdict and the text that is no action."""

    question: str
    steps: list[Step]
    gold: str | None
    verdict: float | None
    verdict_text: str | None
    notes: dict[str, Any]
    error: str | None
    result: dict[str, Any] | None = None  # a printed result dict after the episode (ReAct's `print(info)`)
    step_lines: tuple[int, ...] = ()  # each step's line in the episode text (0: its first line)
    result_line: int | None = None  # the printed result's line, where a forced answer comes from
    error_line: int | None = None  # the line that printed the error


# ReAct's own scripts print `{'steps': 2, 'answer': 'SUPPORTS', 'gt_answer': 'SUPPORTS', 'question_idx': 3,
# 'reward': True, 'em': True, 'f1': 1.0}` after each episode: a Python dict on one line.
_RESULT_LINE = re.compile(r"^[ \t]*(\{.*\})[ \t]*$", re.M)
_RESULT_KEYS = frozenset({"em", "f1", "reward", "answer", "gt_answer", "question_idx", "steps", "correct"})
_RESULT_GOLD = ("gt_answer", "gt", "gold", "gold_answer", "ground_truth")
_MAX_RESULT_CHARS = 100_000


def _printed_result(text: str) -> re.Match[str] | None:
    """The first line that is a printed result dict (literal Python or JSON) with a known key, or None."""
    for m in _RESULT_LINE.finditer(text):
        if len(m.group(1)) > _MAX_RESULT_CHARS:
            continue
        try:
            value = ast.literal_eval(m.group(1))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and _RESULT_KEYS & set(map(str, value)):
            return m
    return None


def read_episode(ctx: ImportContext, episode: Episode) -> EpisodeText:
    """Parse one episode's text with the import's patterns."""
    p = ctx.patterns
    first, _, rest = episode.text.partition("\n")
    full = rest
    question, glued = question_and_preamble(first, p)
    body, gold, trailer = rest, None, None
    result = None
    if printed := _printed_result(rest):  # the printed result ends the transcript; what follows is trailer
        result = ast.literal_eval(printed.group(1))
        rest, trailer = rest[: printed.start()], rest[printed.end():].strip() or None
        body = rest
        gold = next((str(result[k]) for k in _RESULT_GOLD if result.get(k) not in (None, "")), None)
    golds = list(p.compiled("gold").finditer(rest))
    gold_match = golds[-1] if golds else None  # the last gold line: the one after the transcript
    if gold_match is not None:
        body, gold = rest[: gold_match.start()], gold_match.group("gold")
        trailer = "\n".join(x for x in (rest[gold_match.end():].strip(), trailer) if x)
    parsed = steps_from_text(ctx, body)
    error, error_line = None, None
    if trailer and (m := p.compiled("error").search(trailer)):
        error = m.group("error").strip()
        error_line = next((_line(full, e.start()) for e in p.compiled("error").finditer(full)
                           if e.start() >= len(body) and e.group("error").strip() == error), None)
    verdict, verdict_text = None, None
    correct, incorrect = p.compiled("verdict_correct"), p.compiled("verdict_incorrect")
    for step in reversed(parsed.steps):
        text = step.observation or ""
        if m := incorrect.search(text):
            verdict, verdict_text = 0.0, m.group(0)
        elif m := correct.search(text):
            verdict, verdict_text = 1.0, m.group(0)
        if verdict is not None:
            break
    preamble = "\n".join(x for x in (episode.preamble, glued, parsed.preface) if x) or None
    notes: dict[str, Any] = {k: v for k, v in (("preamble", preamble), ("reflections", parsed.reflections or None),
                                                ("trailing_thought", parsed.trailing_thought),
                                                ("trailer", trailer or None)) if v}
    if result is not None:
        notes["result"] = {str(k): v if isinstance(v, (str, int, float, bool)) or v is None else repr(v)
                           for k, v in result.items()}
    return EpisodeText(question, parsed.steps, gold, verdict, verdict_text, notes, error, result,
                       tuple(_line(full, o) for o in parsed.offsets),
                       _line(full, printed.start()) if printed else None, error_line)


def _line(rest: str, offset: int) -> int:
    """The episode line of an offset into the text after its first line."""
    return 1 + rest.count("\n", 0, offset)


def episode_id(episode: Episode, parsed: EpisodeText) -> str | None:
    """The id the log gives an episode: printed before its question, else its result's `question_idx`."""
    if episode.source_id is not None:
        return episode.source_id
    idx = (parsed.result or {}).get("question_idx")
    return str(idx) if isinstance(idx, (str, int)) and not isinstance(idx, bool) else None


def episode_question(ctx: ImportContext, episode: Episode, text: str, gold: str | None,
                     source_id: str | None = None) -> Question:
    """The episode's question: by the log's own id when it has one (joined by id or index from --questions),
    else joined by text from --questions, else keyed by a hash of its text."""
    where = ctx.where(episode.line, "question")
    if not text:
        raise where.error("episode has no question text after `Question:`")
    if source_id is not None:
        if ctx.questions is not None:
            return ctx.question(where, source_id=source_id, index=int(source_id) if source_id.isdigit() else None,
                                text=text, gold=gold)
        return plain_question(where, source_id, text, gold)
    if ctx.questions is not None:
        return ctx.question(where, source_id=None, text=text, gold=gold, by_text=True)
    return plain_question(where, text_question_id(text), text, gold)


def forced_answer(parsed: EpisodeText) -> str | None:
    """The answer a printed result gives an episode that never ran Finish (its step limit forced one)."""
    answer = (parsed.result or {}).get("answer")
    if isinstance(answer, str) and answer.strip() and not any(isinstance(s, FinalStep) for s in parsed.steps):
        return answer
    return None


# The scores a printed result can carry, as the judges Judgment names.
_RESULT_JUDGES: tuple[Literal["em", "f1"], ...] = ("em", "f1")


def outcome_fields(ctx: ImportContext, episode: Episode, parsed: EpisodeText) -> dict[str, Any]:
    """Judgments (a printed result's em / f1, else the verdict in the text, else the outcome section) and the
    end reason."""
    section = episode.section or ""
    result = parsed.result or {}
    judgments = [Judgment(judge=judge, score=float(result[judge]),
                          rationale=f"source result: {judge}={result[judge]!r}")
                 for judge in _RESULT_JUDGES if isinstance(result.get(judge), (bool, int, float))]
    if not judgments and parsed.verdict is not None:
        judgments.append(Judgment(judge=ctx.patterns.verdict_judge, score=parsed.verdict,  # type: ignore[arg-type]
                                  rationale=f"source verdict: {parsed.verdict_text}"))
    elif not judgments and section in ("correct", "incorrect"):
        judgments.append(Judgment(judge=ctx.patterns.verdict_judge, score=1.0 if section == "correct" else 0.0,  # type: ignore[arg-type]
                                  rationale=f"source section: BEGIN {section.upper()} AGENTS"))
    end_reason = None
    if not any(isinstance(s, FinalStep) for s in parsed.steps):
        if "error" in section or parsed.error:
            end_reason = "error"
        elif forced_answer(parsed) is not None:
            end_reason = "forced_answer"
        elif section == "halted" or parsed.result is not None:
            # ReAct ends an episode without Finish at its step limit (and runs an unprinted `finish[]`).
            end_reason = "budget"
    return {"judgments": judgments, "end_reason": end_reason}


def _content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def _ref(locate: Callable[[int], str] | None, episode: Episode, line: int | None) -> str | None:
    """The source_ref of an episode line (None without a locator or a line)."""
    return None if locate is None or line is None else locate(episode.line + line)


def import_text_log(ctx: ImportContext, text: str | None = None,
                    locate: Callable[[int], str] | None = None) -> Iterator[Trajectory]:
    """Every episode of a text log (the file, or `text` taken from it); trial n is the run
    `<run_id>:trial<n>`, a repeated question an attempt. `locate` turns a line of `text` into the
    source_ref its steps keep (a notebook's cell and output)."""
    if text is None:
        if ctx.path.stat().st_size > MAX_RECORD_BYTES:
            raise ctx.where(1).error(f"plain-text transcript larger than {MAX_RECORD_BYTES // 2**20} MB")
        text = ctx.path.read_text(encoding="utf-8-sig")
    layout = split_episodes(text, ctx.patterns)
    if not layout.episodes:
        raise ctx.where(1).error("no episode found: no line starts with `Question:` (see --patterns)")
    ctx.notes.warnings.extend(summary_mismatches(layout))
    seen: dict[tuple[str, str], dict[str, int]] = {}  # (run, question id) -> content hash -> first line
    for episode in layout.episodes:
        parsed = read_episode(ctx, episode)
        question = episode_question(ctx, episode, parsed.question, parsed.gold, episode_id(episode, parsed))
        run_id = ctx.run_id if episode.trial is None else f"{ctx.run_id}:trial{episode.trial}"
        versions = seen.setdefault((run_id, question.question_id), {})
        digest = _content_hash(episode.text)
        if digest in versions:
            ctx.notes.duplicates.append(f"line {episode.line}: identical to the episode at line {versions[digest]} "
                                        f"(question {question.question_id}, run {run_id}); counted once")
            continue
        versions[digest] = episode.line
        if len(versions) > 1:  # the same question again with other content: a further attempt, kept apart
            run_id = f"{run_id}:attempt{len(versions)}"
        steps = [s if locate is None else msgspec.structs.replace(s, source_ref=_ref(locate, episode, line))
                 for s, line in zip(parsed.steps, parsed.step_lines, strict=True)]
        if parsed.error is not None and not any(isinstance(s, FinalStep) for s in steps):
            steps.append(ErrorStep(error_type="runtime_error", message=parsed.error,
                                   source_ref=_ref(locate, episode, parsed.error_line)))
        forced = forced_answer(parsed)
        if forced is not None and parsed.error is None:
            # The step limit's forced answer, as printed in the result line.
            steps.append(ForcedAnswerStep(answer=forced, source_ref=_ref(locate, episode, parsed.result_line)))
        metadata = {"source_line": episode.line, **parsed.notes}
        if episode.trial is not None:
            metadata["trial"] = episode.trial
        if episode.section:
            metadata["section"] = episode.section
        yield assemble(ctx, run=ctx.run(run_id), question=question, steps=steps, metadata=metadata,
                       error=parsed.error, final_answer=forced if parsed.error is None else None,
                       **outcome_fields(ctx, episode, parsed))
