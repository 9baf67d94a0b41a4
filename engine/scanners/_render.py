"""A trajectory as the model reads it: numbered steps, gold passages marked, cut to a stated token budget."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from trajscope.format import SEARCH_KINDS

CHARS_PER_TOKEN = 4  # the budget's token estimate: ceil(characters / 4), stated in every cut marker
GOLD_MARK = "[GOLD]"
FIELD_CHARS = 700  # one observation, passage or snippet list is cut here first, so no single step fills the budget


def estimate_tokens(text: str) -> int:
    """The budget's token estimate of a text: ceil(len / CHARS_PER_TOKEN)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class StepView:
    """One step as read from the warehouse (the fields the renderer shows)."""

    step_index: int
    kind: str
    label: str  # what the model cites: the log's source_ref when present, else the step index
    agent: str | None = None
    tool_name: str | None = None
    query: str | None = None
    thought: str | None = None
    observation: str | None = None
    answer: str | None = None
    message: str | None = None
    raw: str | None = None  # the step's text as logged (a chat message's content in a multi-agent log)
    args: dict[str, Any] | None = None
    snippets: list[tuple[str, str | None]] = field(default_factory=list)  # (chunk_id, snippet) in rank order
    passages: list[tuple[str, str | None]] = field(default_factory=list)  # (chunk_id, text)


@dataclass(frozen=True)
class TrajectoryView:
    """One trajectory as the scanners read it."""

    trajectory_id: str
    record_hash: str
    run_id: str
    question_id: str
    question: str
    gold: str | None
    aliases: list[str]
    final_answer: str | None
    gold_chunk_ids: frozenset[str]
    steps: list[StepView]

    @property
    def labels(self) -> dict[str, int]:
        """Citation label -> step index."""
        return {s.label: s.step_index for s in self.steps}

    @property
    def agents(self) -> list[str]:
        """Agents named in the log, in order of first appearance (empty: the log has none)."""
        return list(dict.fromkeys(s.agent for s in self.steps if s.agent))


@dataclass(frozen=True)
class Rendered:
    """The rendered text, whether the budget cut it, and which steps it shows."""

    text: str
    truncated: bool
    shown: list[int]
    tokens: int


def _cut(text: str | None, limit: int = FIELD_CHARS) -> str:
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit:,} characters cut]"


def _gold(chunk_id: str, gold: frozenset[str]) -> str:
    return f"{chunk_id} {GOLD_MARK}" if chunk_id in gold else chunk_id


def render_step(step: StepView, gold: frozenset[str]) -> str:
    """One step's block: `[label] kind (agent)` then its contents, gold chunk ids marked."""
    head = f"[{step.label}] {step.kind}" + (f" by {step.agent}" if step.agent else "")
    lines = [head]
    if step.thought:
        lines.append(f"  thought: {_cut(step.thought)}")
    if step.kind in SEARCH_KINDS:
        lines.append(f"  query: {_cut(step.query, 200)}")
        hits = " | ".join(f"{k}. {_gold(c, gold)}: {_cut(s, 160)}" for k, (c, s) in enumerate(step.snippets, 1))
        lines.append(f"  results: {_cut(hits, FIELD_CHARS * 2) or '(none)'}")
    elif step.passages:
        for chunk_id, text in step.passages:
            lines.append(f"  passage {_gold(chunk_id, gold)}: {_cut(text)}")
    elif step.kind in ("final", "forced_answer"):
        lines.append(f"  answer: {_cut(step.answer, 300)}")
    else:
        if step.tool_name:
            args = json.dumps(step.args, ensure_ascii=False, default=str) if step.args else ""
            lines.append(f"  call: {step.tool_name}({_cut(args, 300)})")
        if step.message:
            lines.append(f"  message: {_cut(step.message)}")
        if step.answer:
            lines.append(f"  answer: {_cut(step.answer, 300)}")
        if step.raw and step.raw != step.observation and not (step.tool_name or step.message or step.answer):
            lines.append(f"  content: {_cut(step.raw)}")
    if step.observation and not step.passages and step.kind not in SEARCH_KINDS:
        lines.append(f"  observation: {_cut(step.observation)}")
    return "\n".join(lines)


def render_header(t: TrajectoryView) -> str:
    """Question, gold answer (and aliases), final answer, gold passages."""
    gold = t.gold if t.gold is not None else "(none given)"
    aliases = f" (also accepted: {'; '.join(t.aliases)})" if t.aliases else ""
    passages = ", ".join(sorted(t.gold_chunk_ids)) or "(none given)"
    return (f"Question: {_cut(t.question, 1500)}\nGold answer: {_cut(gold, 300)}{aliases}\n"
            f"Final answer: {_cut(t.final_answer, 300) or '(none)'}\nGold passages (marked {GOLD_MARK}): {passages}")


def render_trajectory(t: TrajectoryView, token_budget: int, steps: list[StepView] | None = None) -> Rendered:
    """The header and the steps (all, or the ones given) within token_budget; a cut keeps the first and last
    steps and says which steps were left out and how many tokens they held."""
    steps = t.steps if steps is None else steps
    header = render_header(t)
    blocks = [render_step(s, t.gold_chunk_ids) for s in steps]
    costs = [estimate_tokens(b) + 1 for b in blocks]
    room = token_budget - estimate_tokens(header) - 40  # 40: the cut marker's own room
    if sum(costs) <= room + 40:
        text = header + "\nSteps:\n" + "\n".join(blocks)
        return Rendered(text, False, [s.step_index for s in steps], estimate_tokens(text))
    # Alternate from both ends: the start shows the plan, the end the answer; the middle goes first.
    head: list[int] = []
    tail: list[int] = []
    lo, hi, used, take_head = 0, len(blocks) - 1, 0, True
    while lo <= hi:
        k = lo if take_head else hi
        if used + costs[k] > room:
            break
        used += costs[k]
        if take_head:
            head.append(k)
            lo += 1
        else:
            tail.insert(0, k)
            hi -= 1
        take_head = not take_head
    cut = list(range(lo, hi + 1))
    cut_tokens = sum(costs[k] for k in cut)
    first, last = steps[cut[0]].label, steps[cut[-1]].label
    span = f"step [{first}]" if first == last else f"steps [{first}] to [{last}]"
    marker = (f"[... {span} cut: {len(cut)} step(s), about {cut_tokens:,} tokens, over the {token_budget:,}-token "
              f"budget (1 token = {CHARS_PER_TOKEN} characters) ...]")
    parts = [blocks[k] for k in head] + [marker] + [blocks[k] for k in tail]
    text = header + "\nSteps:\n" + "\n".join(parts)
    return Rendered(text, True, [steps[k].step_index for k in head + tail], estimate_tokens(text))


def normalise_citation(value: Any) -> str:
    """A cited step as the model wrote it ("3", 3, "[3]", "step 3") -> the label form ("3")."""
    text = str(value).strip().strip("[]").strip()
    if text.lower().startswith("step"):
        text = text[4:].strip(" :#")
    return text.strip("[]").strip()


__all__ = ["CHARS_PER_TOKEN", "GOLD_MARK", "Rendered", "StepView", "TrajectoryView", "estimate_tokens",
           "normalise_citation", "render_header", "render_step", "render_trajectory"]
