"""Plain-text transcript files: split into episodes, grouped by trial banners and outcome sections.

An episode starts at a `Question:` line and runs to the next one (or to a banner / section line).
Banners such as Reflexion's `BEGIN TRIAL n` group the episodes that follow into trial n.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from trajscope.format import RecordError, read_side_text

from ._yaml_nesting import check_yaml_nesting


def _compile(pattern: str, where: str, path: Path | None, line: int = 1) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.M)
    except re.error as exc:
        raise RecordError(path or "<patterns>", line, where, f"not a valid regular expression: {exc}") from None


@dataclass(frozen=True)
class TextPatterns:
    """The regular expressions that structure a text log; every one can be replaced by a patterns file."""

    # `Question:` (HotpotQA) or `Claim:` (FEVER), optionally after the index a notebook printed (`12 Claim: ...`,
    # ReAct's `print(idx, question)`): group `idx` is then the question id.
    episode_start: str = r"^[ \t]*(?:(?P<idx>\d+)[ \t]+)?(?:Question|Claim)[ \t]*:[ \t]*"
    trial_banner: str = (r"^[ \t#=*-]*(?:BEGIN[ \t]+)?(?:TRIAL|Trial|trial|EPOCH|Epoch|epoch|ATTEMPT|Attempt|attempt)"
                         r"[ \t]*[#:]?[ \t]*(?P<n>\d+)[ \t#=*-]*$")
    section: str = r"^[ \t]*-{3,}[ \t]*BEGIN[ \t]+(?P<section>[A-Za-z ]+?)[ \t]+AGENTS[ \t]*-{3,}[ \t]*$"
    separator: str = r"^[ \t]*[#=*]{5,}[ \t]*$"
    trial_summary: str = r"^[ \t]*Trial summary[ \t]*:[ \t]*(?P<summary>.*)$"
    # `(END OF EXAMPLES)` (ReAct, Reflexion), `END OF EXAMPLE`, `--- End of examples ---`, `[END EXAMPLES]`
    end_of_examples: str = (r"^[ \t]*[-=#*(\[ \t]*(?:END[ \t]+OF[ \t]+(?:THE[ \t]+)?EXAMPLES?|END[ \t]+EXAMPLES?|"
                            r"End[ \t]+of[ \t]+(?:the[ \t]+)?examples?|end[ \t]+of[ \t]+(?:the[ \t]+)?examples?)"
                            r"[ \t]*[-=#*)\].]*[ \t]*$")
    gold: str = r"^[ \t]*(?:Correct answer|Gold answer|Ground truth)[ \t]*:[ \t]?(?P<gold>.*?)[ \t]*$"
    verdict_correct: str = r"\bAnswer is CORRECT\b"
    verdict_incorrect: str = r"\bAnswer is INCORRECT\b"
    verdict_judge: str = "em"
    preamble: str = r"You have attempted to answer|The following reflection\(s\)|Reflections?:"
    error: str = r"^[ \t]*Error[ \t]*:[ \t]*(?P<error>.*)$"

    def compiled(self, name: str) -> re.Pattern[str]:
        """The pattern `name`, compiled (multi-line)."""
        return _compile(getattr(self, name), name, None)


_PATTERN_KEYS = {f for f in TextPatterns.__dataclass_fields__}
_JUDGES = ("em", "f1", "contain", "llm")


def load_patterns(path: Path) -> TextPatterns:
    """A YAML/JSON patterns file overriding some of the defaults; errors name the file, line and key."""
    text = read_side_text(path, "patterns file")
    check_yaml_nesting(text, path)
    try:
        node = yaml.compose(text)
        spec = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RecordError(path, mark.line + 1 if mark else 1, None,
                          f"patterns file is not valid YAML/JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise RecordError(path, 1, None, "a patterns file must be an object of name -> regular expression")
    lines = {k.value: k.start_mark.line + 1 for k, _ in node.value} if isinstance(node, yaml.MappingNode) else {}
    for key, value in spec.items():
        line = lines.get(key, 1)
        if key not in _PATTERN_KEYS:
            raise RecordError(path, line, str(key), f"unknown key; allowed: {', '.join(sorted(_PATTERN_KEYS))}")
        if not isinstance(value, str):
            raise RecordError(path, line, str(key), "expected a string")
        if key == "verdict_judge":
            if value not in _JUDGES:
                raise RecordError(path, line, key, f"expected one of {', '.join(_JUDGES)}")
        else:
            _compile(value, key, path, line)
    return TextPatterns(**spec)


@dataclass
class Episode:
    """One episode's lines, where it starts, and the trial / outcome section it sits in."""

    line: int
    text: str
    trial: int | None = None
    section: str | None = None
    preamble: str | None = None
    source_id: str | None = None  # the id printed before the question (`12 Claim: ...`), when the pattern has `idx`


@dataclass
class TrialSummary:
    """A banner's own tally (Reflexion's `Trial summary: Correct: 32, ...`), checked against the episodes."""

    trial: int | None
    line: int
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class TextLayout:
    """Episodes in file order plus the trial summaries the file states about itself."""

    episodes: list[Episode] = field(default_factory=list)
    summaries: list[TrialSummary] = field(default_factory=list)


_SUMMARY_ITEM = re.compile(r"(?P<name>[A-Za-z][A-Za-z ]*?)\s*:\s*(?P<n>\d+)")


def split_episodes(text: str, patterns: TextPatterns, first_line: int = 1) -> TextLayout:
    """Cut a transcript into episodes; text before a `Question:` that is no banner is its preamble."""
    start = patterns.compiled("episode_start")
    banner = patterns.compiled("trial_banner")
    section = patterns.compiled("section")
    separator = patterns.compiled("separator")
    summary = patterns.compiled("trial_summary")
    examples_end = patterns.compiled("end_of_examples")
    layout = TextLayout()
    trial: int | None = None
    outcome: str | None = None
    current: list[str] = []
    current_line = 0
    pending: list[str] = []
    # Episodes below `floor` are kept when an end-of-examples line comes: those since the last banner or
    # section, or since the episode that followed the previous marker, were few-shot examples.
    floor = 0

    current_id: str | None = None

    def close() -> None:
        nonlocal current
        if current:
            preamble = "\n".join(pending).strip() or None
            layout.episodes.append(Episode(current_line, "\n".join(current).rstrip(), trial, outcome, preamble,
                                           current_id))
            pending.clear()
        current = []

    for offset, line in enumerate(text.split("\n")):
        lineno = first_line + offset
        if m := banner.match(line):
            close()
            pending.clear()
            trial, outcome = int(m.group("n")), None
            floor = len(layout.episodes)
        elif m := section.match(line):
            close()
            pending.clear()
            outcome = " ".join(m.group("section").lower().split())
            floor = len(layout.episodes)
        elif m := summary.match(line):
            close()
            counts = {" ".join(i.group("name").lower().split()): int(i.group("n"))
                      for i in _SUMMARY_ITEM.finditer(m.group("summary"))}
            layout.summaries.append(TrialSummary(trial, lineno, counts))
        elif separator.match(line):
            close()
        elif examples_end.match(line):
            # Everything since the floor was few-shot examples, not episodes; the next one is real.
            current, pending = [], []
            del layout.episodes[floor:]
            floor = len(layout.episodes) + 1
        elif m := start.match(line):
            close()
            current, current_line = [line], lineno
            current_id = m.groupdict().get("idx")
        elif current:
            current.append(line)
        elif line.strip():
            pending.append(line)
    close()
    return layout


def after_examples(text: str, patterns: TextPatterns) -> str:
    """The text after the last end-of-examples line (a few-shot prompt's episode), or all of it."""
    marks = list(patterns.compiled("end_of_examples").finditer(text))
    return text[marks[-1].end():] if marks else text


def section_counts(layout: TextLayout) -> dict[tuple[int | None, str], int]:
    """Episodes per (trial, outcome section), to compare with the file's own trial summaries."""
    out: dict[tuple[int | None, str], int] = {}
    for episode in layout.episodes:
        if episode.section:
            key = (episode.trial, episode.section)
            out[key] = out.get(key, 0) + 1
    return out


def summary_mismatches(layout: TextLayout) -> list[str]:
    """Where a trial summary disagrees with the episodes found under that trial (empty when they agree)."""
    found = section_counts(layout)
    problems = []
    for s in layout.summaries:
        for name, n in s.counts.items():
            got = found.get((s.trial, name), 0)
            if got != n:
                problems.append(f"line {s.line}: trial {s.trial} summary says {name} {n}, the file holds {got}")
    return problems


def question_and_preamble(first_line: str, patterns: TextPatterns) -> tuple[str, str | None]:
    """The question text of an episode's first line; a reflection preamble glued onto it is split off."""
    body = patterns.compiled("episode_start").sub("", first_line, count=1)
    m = patterns.compiled("preamble").search(body)
    if m is None:
        return body.strip(), None
    return body[: m.start()].strip(), body[m.start():].strip() or None
