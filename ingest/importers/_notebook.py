"""Jupyter notebooks whose code-cell outputs hold printed transcripts (ReAct's own notebooks print each
episode: `<idx> Claim: ...`, Thought / Action / Observation, then a result dict)."""
from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trajscope.format import UTF8_BOM, RecordError, Trajectory, loads_bounded

from ._context import ImportContext
from ._fields import need_list, need_object
from ._json_stream import MAX_RECORD_BYTES, check_text
from ._react_text import import_text_log


def _text(value: Any) -> str:
    """nbformat text: a string or a list of lines."""
    if isinstance(value, list):
        return "".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Transcript:
    """A notebook's printed outputs joined, and where each output starts in the joined text."""

    text: str
    starts: list[int]  # offset of each output part in text
    origins: list[tuple[int, int]]  # (cell index, output index) of each part
    lines: list[int]  # offset where each line of text starts

    def source_ref(self, line: int) -> str:
        """`cell:<i>/output:<j>/line:<k>` of a transcript line (1-based): the cell and output printing it and
        the line inside that output's text (from 1), where a per-step label points."""
        offset = self.lines[line - 1]
        part = bisect.bisect_right(self.starts, offset) - 1
        cell, output = self.origins[part]
        within = 1 + self.text.count("\n", self.starts[part], offset)
        return f"cell:{cell}/output:{output}/line:{within}"


def notebook_transcript(ctx: ImportContext) -> Transcript:
    """The printed output of every code cell in order: streams (stdout) and plain-text results."""
    if ctx.path.stat().st_size > MAX_RECORD_BYTES:
        raise ctx.where(1).error(f"notebook larger than {MAX_RECORD_BYTES // 2**20} MB")
    raw = ctx.path.read_bytes().removeprefix(UTF8_BOM)
    check_text(ctx.path, raw[:8192])
    try:
        doc = loads_bounded(raw.decode("utf-8"), path=ctx.path, line=1)
    except json.JSONDecodeError as exc:
        raise RecordError(ctx.path, exc.lineno, None, f"notebook is not valid JSON: {exc.msg}") from None
    where = ctx.where(1)
    doc = need_object(doc, where)
    parts: list[str] = []
    starts: list[int] = []
    origins: list[tuple[int, int]] = []
    size = 0
    for i, cell in enumerate(need_list(doc.get("cells"), where.at("cells"))):
        cell = need_object(cell, where.at("cells").at(i))
        if cell.get("cell_type") != "code":
            continue
        for j, output in enumerate(need_list(cell.get("outputs") or [], where.at("cells").at(i).at("outputs"))):
            output = need_object(output, where.at("cells").at(i).at("outputs").at(j))
            if output.get("output_type") == "stream" and output.get("name", "stdout") == "stdout":
                text = _text(output.get("text"))
            elif output.get("output_type") in ("execute_result", "display_data"):
                data = found if isinstance(found := output.get("data"), dict) else {}
                text = _text(data.get("text/plain")) + "\n"
            else:
                continue
            parts.append(text)
            starts.append(size)
            origins.append((i, j))
            size += len(text)
    text = "".join(parts)
    return Transcript(text, starts, origins, [0, *(m.end() for m in re.finditer("\n", text))])


def import_notebook(ctx: ImportContext) -> Iterator[Trajectory]:
    """Every episode printed in the notebook's outputs, read as a text log (same patterns, same rules); each
    step keeps the cell, output and line that printed it."""
    transcript = notebook_transcript(ctx)
    if not transcript.text.strip():
        raise ctx.where(1).error("the notebook's code cells have no printed output (run it and save the outputs)",
                                 "cells")
    return import_text_log(ctx, transcript.text, transcript.source_ref)
