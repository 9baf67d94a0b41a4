"""One trajectory's replay, shown inline in a notebook: the question, its gold, every step, the verdicts."""
from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

# Step columns a replay shows, when the warehouse has them (older warehouses lack some).
_STEP_COLUMNS = ("step_index", "kind", "tool_name", "args", "observation", "answer", "tokens_in", "tokens_out")
# Longest cell shown inline; the full text stays in `.steps`.
_CELL_CHARS = 300


@dataclass(frozen=True)
class Replay:
    """A trajectory as the dashboard's Replay page reads it: `.header` (one row of facts) and `.steps`."""

    trajectory_id: str
    header: dict[str, Any]
    steps: pl.DataFrame

    @property
    def table(self) -> pl.DataFrame:
        """The steps, in order."""
        return self.steps

    def _repr_html_(self) -> str:
        h = self.header
        facts = [("run", h.get("run_id")), ("question", h.get("question")), ("gold", h.get("gold_answer")),
                 ("answer", h.get("final_answer")), ("correct", h.get("correct")), ("ended", h.get("end_reason")),
                 ("EM / F1 / Contain", f"{h.get('em')} / {h.get('f1')} / {h.get('contain')}"),
                 ("searches / reads", f"{h.get('search_count')} / {h.get('read_count')}")]
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(str(v))}</td></tr>"
                       for k, v in facts)
        shown = self.steps.select([c for c in _STEP_COLUMNS if c in self.steps.columns])
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cut(v))}</td>" for v in row) + "</tr>" for row in shown.iter_rows())
        head = "".join(f"<th>{html.escape(c)}</th>" for c in shown.columns)
        return (f"<div><b>Trajectory {html.escape(self.trajectory_id)}</b><table>{rows}</table>"
                f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table></div>")

    def _repr_mimebundle_(self, include: Sequence[str] | None = None,
                          exclude: Sequence[str] | None = None) -> dict[str, str]:
        text = (f"trajectory {self.trajectory_id}: {self.header.get('question')} -> {self.header.get('final_answer')} "
                f"(gold {self.header.get('gold_answer')}), {self.steps.height} steps")
        return {"text/html": self._repr_html_(), "text/plain": text}


def _cut(value: object) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= _CELL_CHARS else text[: _CELL_CHARS - 1] + "…"


__all__ = ["Replay"]
