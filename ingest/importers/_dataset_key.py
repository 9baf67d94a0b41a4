"""`--dataset NAME`: the benchmark an import's questions are keyed under when its records name none."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec

from trajscope.format import RecordError, Trajectory

# What `trajscope ingest --dataset` and the Upload page's dataset field say about it.
DATASET_HELP = ("The benchmark the imported questions come from (e.g. hotpotqa_dev): every trajectory whose "
                "question and run name no dataset is keyed under NAME, so logs that number their questions "
                "0, 1, 2, ... from two benchmarks do not meet. A record that names its own dataset keeps it, "
                "and the import report counts those. Canonical logs too.")


def check_dataset_name(name: str, source: str) -> str:
    """The name stripped; refused when empty or shaped like a --per-run-questions key (`run:...`)."""
    stripped = name.strip()
    if not stripped:
        raise RecordError(source, 0, "dataset", "--dataset needs a non-empty benchmark name")
    if stripped.startswith("run:") or "/run:" in stripped:
        raise RecordError(source, 0, "dataset", f"{name!r}: 'run:' marks --per-run-questions keys; "
                          "name the benchmark (e.g. hotpotqa_dev)")
    return stripped


@dataclass
class DatasetKeying:
    """Sets `run.dataset` to `name` on every trajectory whose question and run name no dataset."""

    name: str
    keyed: int = 0
    # The datasets records named themselves, kept as they are (a record knows its benchmark better than a flag).
    kept: Counter[str] = field(default_factory=Counter)

    def apply(self, records: Iterator[Trajectory]) -> Iterator[Trajectory]:
        for t in records:
            if _key(t):
                yield t
                continue
            # An empty question.dataset would still win the loader's coalesce over the run's.
            question = t.question if t.question.dataset is None else msgspec.structs.replace(t.question, dataset=None)
            yield msgspec.structs.replace(t, question=question, run=msgspec.structs.replace(t.run, dataset=self.name))

    def count(self, t: Trajectory) -> None:
        """Count one loaded trajectory (after duplicates are dropped) by the dataset its question is keyed under."""
        key = _key(t)
        if key == self.name:
            self.keyed += 1
        else:
            self.kept[key] += 1

    def lines(self) -> list[str]:
        """The import report's lines: how many trajectories were keyed under the name, and what records kept."""
        out = [f"  dataset: {self.keyed} trajectories keyed under {self.name!r} (--dataset)"]
        if self.kept:
            named = ", ".join(f"{k!r} {v}" for k, v in sorted(self.kept.items(), key=lambda kv: (-kv[1], kv[0])))
            out.append(f"  dataset: {sum(self.kept.values())} trajectories keep the dataset their record names "
                       f"({named}), not --dataset's")
        return out


def _key(t: Trajectory) -> str:
    """The dataset the warehouse keys this trajectory's question under, as stage.sql's coalesce reads it."""
    return (t.question.dataset if t.question.dataset is not None else t.run.dataset) or ""
