"""The documented interventions a fork can apply at its step, parsed from `NAME[:ARGUMENT]`."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trajscope.format import (
    FORK_INTERVENTIONS,
    Chunk,
    ForkInterventionKind,
    ReadStep,
    SearchStep,
    Trajectory,
    fork_step_refusal,
    step_kind,
)


class ForkError(ValueError):
    """A fork that cannot be made (bad step, intervention that does not apply, prefix not cached)."""


# The documented set, one definition (trajscope/format/fork_interventions.json).
InterventionKind = ForkInterventionKind
INTERVENTIONS: dict[str, InterventionKind] = FORK_INTERVENTIONS


@dataclass(frozen=True)
class Intervention:
    """A parsed intervention with its argument resolved against the parent trajectory."""

    name: str
    argument: str | None = None

    @property
    def kind(self) -> InterventionKind:
        return INTERVENTIONS[self.name]  # auto / auto_placebo are replaced by a concrete one before a fork

    @property
    def placebo(self) -> bool:
        """True for a control intervention."""
        return self.name == "placebo"

    def label(self) -> str:
        """NAME or NAME:ARGUMENT, as given on the command line."""
        return self.name if self.argument is None else f"{self.name}:{self.argument}"


def parse_intervention(text: str) -> Intervention:
    """`NAME[:ARGUMENT]` from the documented set; a bad name lists the known ones."""
    name, sep, argument = text.partition(":")
    name = name.strip()
    if name in ("auto", "auto_placebo") and not sep:  # chosen per parent from its first decisive error
        return Intervention(name, None)
    if name not in INTERVENTIONS:
        raise ForkError(f"unknown intervention {name!r}; choose one of: {', '.join(INTERVENTIONS)}")
    kind = INTERVENTIONS[name]
    value = argument if sep else None
    if kind.required and not value:
        raise ForkError(f"intervention {name} needs an argument: {name}:<{kind.argument}>")
    if not kind.argument and value:
        raise ForkError(f"intervention {name} takes no argument (got {value!r})")
    return Intervention(name, value)


def _read_before(parent: Trajectory, k: int) -> set[str]:
    return {p.chunk_id for s in parent.steps[:k] if isinstance(s, ReadStep) for p in s.passages}


def _shown_before(parent: Trajectory, k: int) -> set[str]:
    shown = _read_before(parent, k)
    for s in parent.steps[:k]:
        if isinstance(s, SearchStep):
            shown.update(c.chunk_id for c in s.candidates)
    return shown


def _first_gold(parent: Trajectory, k: int, excluded: set[str], corpus: Mapping[str, Chunk], what: str) -> str:
    golds = [g for g in parent.question.gold_chunk_ids if g in corpus]
    if not golds:
        raise ForkError(f"{parent.trajectory_id}: the question has no gold passage in the loaded corpus ({what})")
    fresh = [g for g in golds if g not in excluded]
    return (fresh or golds)[0]


def placebo_chunk(gold_id: str, golds: set[str], corpus: Mapping[str, Chunk]) -> str:
    """The non-gold passage whose length is nearest the gold one's (ties: corpus order), for the placebo."""
    target = len(corpus[gold_id].text)
    best: tuple[int, int, str] | None = None
    for order, chunk in enumerate(corpus.values()):
        if chunk.chunk_id in golds:
            continue
        candidate = (abs(len(chunk.text) - target), order, chunk.chunk_id)
        best = candidate if best is None or candidate < best else best
    if best is None:
        raise ForkError("the corpus holds no non-gold passage for a placebo")
    return best[2]


def resolve(intervention: Intervention, parent: Trajectory, k: int, corpus: Mapping[str, Chunk]) -> Intervention:
    """Check that the intervention applies at step k of the parent and fill in a default argument."""
    if not 0 <= k < len(parent.steps):
        raise ForkError(f"{parent.trajectory_id}: step {k} is out of range (the trajectory has "
                        f"{len(parent.steps)} steps, 0..{len(parent.steps) - 1})")
    step = parent.steps[k]
    kind = step_kind(step)
    name, arg = intervention.name, intervention.argument
    if name in ("inject_gold", "placebo"):
        gold = arg or _first_gold(parent, k, _read_before(parent, k), corpus, name)
        if gold not in corpus:
            raise ForkError(f"{name}: chunk {gold!r} is not in the loaded corpus")
        if name == "placebo":
            return Intervention(name, placebo_chunk(gold, set(parent.question.gold_chunk_ids), corpus))
        return Intervention(name, gold)
    if name == "force_read" and arg not in corpus:
        raise ForkError(f"force_read: chunk {arg!r} is not in the loaded corpus")
    refusal = fork_step_refusal(name, kind, args=step.args, phase=getattr(step, "phase", None),
                                controller=parent.run.controller)
    if refusal is not None:
        raise ForkError(f"{name} does not apply at step {k} of {parent.trajectory_id}: {refusal}")
    if name == "remove_decoy":
        listed = [c.chunk_id for c in getattr(step, "candidates", ())]
        if arg not in listed:
            raise ForkError(f"remove_decoy: chunk {arg!r} is not among the candidates of step {k} "
                            f"({', '.join(listed) or 'none'})")
    if name == "inject_candidate":
        chunk = arg or _first_gold(parent, k, _shown_before(parent, k + 1), corpus, name)
        if chunk not in corpus:
            raise ForkError(f"inject_candidate: chunk {chunk!r} is not in the loaded corpus")
        return Intervention(name, chunk)
    if name == "fix_register":
        parse_register_fix(arg or "")
    if intervention.kind.hook == "reply" and name != "fix_register" and step.raw is None and step.cached is None:
        raise ForkError(f"{name} rewrites the model reply behind a step; step {k} ({kind}) is the environment's "
                        "own move, not a model reply")
    return intervention


def parse_register_fix(text: str) -> tuple[str, str, str | None]:
    """`ITEM=STATUS[:note]` -> (item, status, note)."""
    item, sep, rest = text.partition("=")
    status, _, note = rest.partition(":")
    statuses = ("pending", "active", "resolved", "retired")
    if not sep or not item.strip() or status.strip() not in statuses:
        raise ForkError(f"fix_register needs ITEM=STATUS[:note] with STATUS one of {', '.join(statuses)} "
                        f"(got {text!r})")
    return item.strip(), status.strip(), (note.strip() or None)
