"""Short names for runs in figures: run ids are long and differ in their middle, where axes cut them."""
from __future__ import annotations

from collections import Counter

import polars as pl


def short_run_labels(runs: pl.DataFrame, run_ids: list[str]) -> dict[str, str]:
    """controller/condition per run; dataset, then the run id, are added where that is not unique."""
    rows = {r["run_id"]: r for r in runs.filter(pl.col("run_id").is_in(run_ids)).iter_rows(named=True)}

    def name(run_id: str, level: int) -> str:
        row = rows.get(run_id)
        if row is None or level == 2:
            return run_id
        parts = [p for p in (row.get("controller"), row.get("condition")) if p]
        if not parts:
            return run_id
        label = "/".join(parts)
        return f"{label} ({row['dataset']})" if level == 1 and row.get("dataset") else label

    labels = {}
    for level in range(3):
        labels = {r: name(r, level) for r in run_ids}
        if len(set(labels.values())) == len(labels):
            break
    return labels


def readable_run_names(runs: pl.DataFrame, run_ids: list[str]) -> dict[str, str]:
    """dataset · controller/condition · model per run (the parts the runs table has); a run whose name another
    run shares, or that has none of them, is named by its id after the name."""
    rows = {r["run_id"]: r for r in runs.filter(pl.col("run_id").is_in(run_ids)).iter_rows(named=True)}

    def name(run_id: str) -> str:
        row = rows.get(run_id) or {}
        setting = "/".join(p for p in (row.get("controller"), row.get("condition")) if p)
        return " · ".join(p for p in (row.get("dataset"), setting, row.get("model")) if p)

    names = {r: name(r) for r in run_ids}
    counts = Counter(names.values())
    return {r: n if n and counts[n] == 1 else (f"{n} · {r}" if n else r) for r, n in names.items()}
