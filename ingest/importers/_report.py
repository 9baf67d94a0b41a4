"""The import report: what one file turned into (trajectories, runs, steps, tools, duplicates, profile)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from trajscope.format import Capabilities

from ._capabilities import RunTally, profile_line
from ._detect import skipped_note


@dataclass
class RunReport:
    """One run of an imported file: its tally and the capability profile written into its records."""

    run_id: str
    tally: RunTally
    profile: Capabilities | None


@dataclass
class FileReport:
    """Everything `trajscope ingest` and the Upload page say about one imported file."""

    source: str
    format: str
    runs: list[RunReport] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # malformed records left out (file:line field: why)
    not_logs: list[str] = field(default_factory=list)  # a directory's documentation and code, not read
    questions_file: str | None = None
    questions_joined: int = 0
    output: Path | None = None  # the canonical log to load (the converted file, or a canonical source as is)
    dataset_lines: list[str] = field(default_factory=list)  # under --dataset: the dataset the questions are keyed by

    @property
    def trajectories(self) -> int:
        return sum(r.tally.trajectories for r in self.runs)

    def _total(self, attr: str) -> Counter[str]:
        total: Counter[str] = Counter()
        for r in self.runs:
            total.update(getattr(r.tally, attr))
        return total

    @property
    def step_kinds(self) -> Counter[str]:
        return self._total("step_kinds")

    @property
    def unmapped_tools(self) -> Counter[str]:
        return self._total("unmapped_tools")

    @property
    def judges(self) -> Counter[str]:
        return self._total("judges")

    def lines(self) -> list[str]:
        """The report as short lines of text (the CLI prints them; the Upload page shows them)."""
        def counts(c: Counter[str]) -> str:
            return ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))) or "none"

        with_gold = sum(r.tally.with_gold for r in self.runs)
        judged = sum(r.tally.with_judgments for r in self.runs)
        scored = sum(r.tally.scored_at_import for r in self.runs)
        out = [
            f"{self.source} ({self.format}): {self.trajectories} trajectories in {len(self.runs)} run(s)",
            *([f"  {skipped_note(self.not_logs)}"] if self.not_logs else []),
            f"  steps: {counts(self.step_kinds)}",
            f"  unmapped tools: {counts(self.unmapped_tools)}",
            f"  duplicates dropped: {len(self.duplicates)}",
            *([f"  malformed records skipped: {len(self.skipped)}"] if self.skipped else []),
            f"  gold answers: {with_gold} of {self.trajectories}; judgments found: {counts(self.judges)} "
            f"({judged} trajectories)" + (f"; em / f1 / contain scored at import for {scored} (the extracted answer "
                                          "against the log's gold)" if scored else ""),
            "  questions joined: " + (f"{self.questions_joined} from {self.questions_file}" if self.questions_file
                                      else "no question file"),
            *self.dataset_lines,
        ]
        labelled = sum(r.tally.human_labels for r in self.runs)
        if labelled:
            out.append(f"  human step labels in the log: {labelled}")
        checked = sum(r.tally.people_checked for r in self.runs)
        if checked:
            disagree = [d for r in self.runs for d in r.tally.people_disagree]
            out.append(f"  answers vs the people's verdict in the log: {checked - len(disagree)} of {checked} agree "
                       "(Contain-Acc on the extracted answer)")
            out.extend(f"    disagree: {d}" for d in disagree)
        for run in self.runs:
            out.append(f"  run {run.run_id}: {run.tally.trajectories} trajectories, "
                       f"end reasons {counts(run.tally.end_reasons)}")
            out.append(f"    capabilities: {profile_line(run.profile)}")
            if run.profile is not None:
                for name in ("read_action",):
                    if run.profile.reasons.get(name):
                        out.append(f"    {name}: {run.profile.reasons[name]}")
        out.extend(f"  duplicate: {d}" for d in self.duplicates[:20])
        out.extend(f"  skipped: {s}" for s in self.skipped)
        out.extend(f"  warning: {w}" for w in self.warnings)
        return out
