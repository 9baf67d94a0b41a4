"""A run's capability profile: inferred from what its records hold, overridden by what a user declares."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trajscope.format import (
    CAPABILITY_NAMES,
    Capabilities,
    FinalStep,
    ReadStep,
    SearchStep,
    ToolStep,
    Trajectory,
    has_gold_answer,
    mentions_answer,
    step_kind,
)

from ._import_scores import is_import_score

NO_READ = "no read action in this log: discipline metrics do not apply"
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


@dataclass
class RunTally:
    """What the trajectories of one run hold, counted as they stream past."""

    trajectories: int = 0
    search_steps: int = 0
    searches_with_candidates: int = 0
    searches_with_snippets: int = 0
    searches_with_text: int = 0
    read_steps: int = 0
    with_final: int = 0
    with_gold: int = 0
    with_gold_passages: int = 0
    with_judgments: int = 0  # trajectories carrying a verdict of the log's own
    scored_at_import: int = 0  # trajectories the importer scored (gold in the log, no verdict)
    with_search_passages: int = 0  # trajectories whose search results carry the passages' text (metadata)
    # Contain-Acc of the answer against the person's verdict the log carries (metadata.human_answer_correct)
    human_labels: int = 0  # step labels the records carry (Who&When mistakes, embedded step_labels)
    people_checked: int = 0
    people_disagree: list[str] = field(default_factory=list)
    step_kinds: Counter[str] = field(default_factory=Counter)
    unmapped_tools: Counter[str] = field(default_factory=Counter)
    judges: Counter[str] = field(default_factory=Counter)
    end_reasons: Counter[str] = field(default_factory=Counter)
    carried: Capabilities | None = None  # the profile the first record carries ...
    carried_alike: bool = True  # ... and whether every later record carries the same one

    def add(self, t: Trajectory) -> None:
        """Count one trajectory."""
        self.trajectories += 1
        for step in t.steps:
            self.step_kinds[step_kind(step)] += 1
            if isinstance(step, SearchStep):
                self.search_steps += 1
                self.searches_with_candidates += bool(step.candidates)
                self.searches_with_snippets += any(c.snippet for c in step.candidates)
                # result text counts as snippets only where no structured candidates stand for the results
                self.searches_with_text += not step.candidates and bool(step.observation and step.observation.strip())
            elif isinstance(step, ReadStep):
                self.read_steps += 1
            elif isinstance(step, ToolStep) and step.tool_name is not None:  # a turn without a tool is no tool
                self.unmapped_tools[step.tool_name] += 1
        self.with_final += any(isinstance(s, FinalStep) for s in t.steps)
        self.with_gold += t.question.gold_answer is not None
        self.with_gold_passages += bool(t.question.gold_chunk_ids)
        carried = [j for j in t.judgments if not is_import_score(j.rationale)]
        self.with_judgments += bool(carried)
        self.scored_at_import += len(carried) < len(t.judgments)
        self.with_search_passages += bool(t.metadata.get("search_shows_passages"))
        self.human_labels += len(t.human_labels)
        person = t.metadata.get("human_answer_correct")
        if isinstance(person, bool) and has_gold_answer(t.question.gold_answer, t.question.aliases):
            self.people_checked += 1
            contain = mentions_answer(t.final_answer, t.question.gold_answer, t.question.aliases)
            if contain != person:
                self.people_disagree.append(
                    f"{t.trajectory_id}: answer {t.final_answer!r}, gold {t.question.gold_answer!r}: Contain-Acc says "
                    f"{'right' if contain else 'wrong'}, the person {'right' if person else 'wrong'}")
        self.judges.update(j.judge for j in carried)
        self.end_reasons[t.end_reason or "none"] += 1
        if self.trajectories == 1:
            self.carried = t.run.capabilities
        elif t.run.capabilities != self.carried:
            self.carried_alike = False


def _share(k: int, n: int, what: str) -> str:
    return f"{k} of {n} {what}"


def infer_capabilities(tally: RunTally, notes: Mapping[str, str] | None = None) -> Capabilities:
    """The profile the records support; `notes` (the format's own facts) are added to the reasons."""
    n = tally.trajectories
    values: dict[str, Any] = {}
    reasons: dict[str, str] = {}
    s = tally.search_steps
    values["search_candidates"] = tally.searches_with_candidates > 0
    reasons["search_candidates"] = (
        _share(tally.searches_with_candidates, s, "search steps list candidate chunk ids") if s
        else "no search steps in this log")
    values["snippets"] = tally.searches_with_snippets > 0 or tally.searches_with_text > 0
    reasons["snippets"] = (
        _share(tally.searches_with_snippets, s, "search steps carry candidate snippets")
        if tally.searches_with_snippets else
        _share(tally.searches_with_text, s, "search steps carry result text (no candidate ids)") if s
        else "no search steps in this log")
    values["read_action"] = tally.read_steps > 0
    reasons["read_action"] = (f"{tally.read_steps} read steps open a full passage" if tally.read_steps
                              else f"{NO_READ} (no step of {n} trajectories opens a passage)")
    if tally.with_search_passages:
        reasons["read_action"] += (f"; search returns the passages' text in {tally.with_search_passages} of {n} "
                                   "trajectories: what a search shows counts as read (metadata.search_shows_passages)")
    values["gold_answers"] = tally.with_gold > 0
    reasons["gold_answers"] = (_share(tally.with_gold, n, "questions have a gold answer") if tally.with_gold
                               else "no gold answer in the log or its question file: correctness does not apply")
    values["gold_passages"] = tally.with_gold_passages > 0
    reasons["gold_passages"] = (
        _share(tally.with_gold_passages, n, "questions list gold passages") if tally.with_gold_passages
        else "no gold passages in this log: gold-evidence measures do not apply")
    values["judgments"] = tally.with_judgments > 0
    reasons["judgments"] = (
        _share(tally.with_judgments, n,
               f"trajectories carry the source's own verdicts ({', '.join(sorted(tally.judges))})")
        if tally.with_judgments else "the source log records no verdicts")
    for name, note in (notes or {}).items():
        reasons[name] = f"{reasons[name]}; {note}"
    return Capabilities(**values, reasons=reasons)


def carried_capabilities(tally: RunTally) -> Capabilities | None:
    """The profile canonical records carry themselves, when every record of the run carries the same one."""
    return tally.carried if tally.carried_alike else None


def parse_declarations(items: Iterable[str]) -> dict[str, bool]:
    """`name=true|false` pairs (CLI, Upload page) as a dict; an unknown name or value is a ValueError."""
    out: dict[str, bool] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip().lower()
        if not sep or name not in CAPABILITY_NAMES or value not in _TRUE | _FALSE:
            raise ValueError(f"expected NAME=true|false with NAME one of {', '.join(CAPABILITY_NAMES)}, got {item!r}")
        out[name] = value in _TRUE
    return out


def declare(profile: Capabilities, declared: Mapping[str, bool], source: str) -> Capabilities:
    """The profile with the user's statements applied; each is marked declared, with where it came from."""
    if not declared:
        return profile
    values = {name: getattr(profile, name) for name in CAPABILITY_NAMES}
    reasons = dict(profile.reasons)
    for name, value in declared.items():
        values[name] = value
        reasons[name] = f"declared {'true' if value else 'false'} by {source}" + (
            f" ({NO_READ})" if name == "read_action" and not value else "")
    names = sorted(set(profile.declared) | set(declared), key=CAPABILITY_NAMES.index)
    return Capabilities(**values, declared=names, reasons=reasons)


def profile_line(profile: Capabilities | None) -> str:
    """One line: each capability yes / no / unknown, declared ones marked with *."""
    if profile is None:
        return "as the records carry it (none recorded: the warehouse infers it at load)"
    def mark(name: str) -> str:
        value = getattr(profile, name)
        text = "unknown" if value is None else ("yes" if value else "no")
        return f"{name}={text}{'*' if name in profile.declared else ''}"
    return ", ".join(mark(n) for n in CAPABILITY_NAMES)
