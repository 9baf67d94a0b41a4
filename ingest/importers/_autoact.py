"""AutoAct JSONL: `{question, answer, correct, reward, halted, error, prompt}`, the transcript inside `prompt`."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trajscope.format import ErrorStep, FinalStep, Judgment, Trajectory

from ._context import ImportContext, assemble
from ._episodes import Episode, split_episodes
from ._fields import Where, need_object, need_str, opt_str
from ._json_stream import iter_records
from ._questions import plain_question, text_question_id
from ._react_text import read_episode

# AutoAct's own record fields that are facts about the run, not the transcript.
_KEPT = ("reward", "halted", "error")


def _episode(ctx: ImportContext, where: Where, prompt: str) -> Episode:
    layout = split_episodes(prompt, ctx.patterns)
    if len(layout.episodes) != 1:
        raise where.error(f"expected one episode (one `Question:` line) in the prompt, found {len(layout.episodes)}",
                          "prompt")
    return layout.episodes[0]


def autoact_trajectory(ctx: ImportContext, where: Where, record: Any) -> Trajectory:
    """One AutoAct record: steps from its prompt, gold from `answer`, EM verdict from `correct`."""
    record = need_object(record, where)
    prompt = need_str(record, "prompt", where)
    parsed = read_episode(ctx, _episode(ctx, where, prompt))
    text = opt_str(record, "question", where) or parsed.question
    gold = opt_str(record, "answer", where)
    if ctx.questions is not None:
        question = ctx.question(where, source_id=None, text=text, gold=gold, by_text=True)
    else:
        question = plain_question(where, text_question_id(text or ""), text, gold)
    judgments = []
    if isinstance(record.get("correct"), bool):
        judgments.append(Judgment(judge="em", score=1.0 if record["correct"] else 0.0,
                                  rationale="source field `correct`"))
    steps = list(parsed.steps)
    finished = any(isinstance(s, FinalStep) for s in steps)
    end_reason = None
    if record.get("error") is True and not finished:
        steps.append(ErrorStep(error_type="source_error", message="the AutoAct record reports error: true"))
        end_reason = "error"
    elif record.get("halted") is True and not finished:
        end_reason = "budget"
    metadata = {k: record[k] for k in _KEPT if k in record}
    if parsed.verdict_text:
        metadata["verdict"] = parsed.verdict_text
    metadata.update(parsed.notes)
    return assemble(ctx, run=ctx.run(), question=question, steps=steps, judgments=judgments,
                    end_reason=end_reason, metadata=metadata)


def import_autoact(ctx: ImportContext) -> Iterator[Trajectory]:
    """Stream an AutoAct output file (JSONL or a JSON array)."""
    for line, key, value in iter_records(ctx.path):
        yield autoact_trajectory(ctx, ctx.where(line, key if key and key.startswith("[") else ""), value)
