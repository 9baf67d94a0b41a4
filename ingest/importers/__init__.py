"""Importers for external trajectory logs: each turns one file into canonical `Trajectory` records.

`import_file` streams; bad input raises `trajscope.format.RecordError` naming file, line and field.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from trajscope.format import RecordError, Trajectory

from ._actions import CANONICAL_ACTIONS, DEFAULT_TOOL_MAP, merged_tool_map
from ._arag import ARAG_MAPPING, import_arag
from ._atif import import_atif
from ._context import ImportContext, default_run_id
from ._detect import detect_format
from ._inspect import SCORER_JUDGES, import_inspect
from ._mapped import import_mapped
from ._mapping import Mapping, load_mapping, load_tool_map
from ._openinference import import_openinference
from ._otel_genai import import_otel_genai
from ._questions import QuestionBook
from ._react import import_react


@dataclass(frozen=True)
class Importer:
    """One supported format: its reader and a one-line description for --help and the app."""

    name: str
    description: str
    read: Callable[[ImportContext], Iterator[Trajectory]]


def _needs_mapping(ctx: ImportContext) -> Iterator[Trajectory]:
    raise RecordError(ctx.path, 0, None, "format 'mapped' needs a --mapping file")


FORMATS: dict[str, Importer] = {
    imp.name: imp
    for imp in (
        Importer("openinference", "OpenInference spans (Phoenix JSON/JSONL or OTLP JSON); one trace per trajectory",
                 import_openinference),
        Importer("otel_genai", "OpenTelemetry GenAI spans in OTLP JSON (gen_ai.operation.name)", import_otel_genai),
        Importer("atif", "ATIF agent trajectories (schema_version ATIF-v1.x), one per file or JSONL", import_atif),
        Importer("inspect", "Inspect AI eval logs (.json or .eval archive): samples, tool calls, scores",
                 import_inspect),
        Importer("react", "ReAct Thought/Action/Observation logs (FireAct JSON, chat lists, plain text)",
                 import_react),
        Importer("arag", "A-RAG predictions.jsonl (trajectory of tool calls, chunks_read_ids, total_cost)",
                 import_arag),
        Importer("mapped", "any JSONL, described by a --mapping YAML/JSON file of dotted paths", _needs_mapping),
    )
}


def import_file(path: Path, *, format: str | None = None, mapping: Path | None = None,
                questions: Path | None = None, tool_map: dict[str, str] | None = None,
                run_id: str | None = None) -> Iterator[Trajectory]:
    """Stream canonical trajectories from an external log (format detected unless given)."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(path, 0, None, "no such file")
    if mapping is not None and format in (None, "mapped"):
        format = "mapped"
    if format is None:
        format = detect_format(path)
        if format is None:
            raise RecordError(path, 1, None, "unrecognised log format; pass --format "
                              f"({', '.join(FORMATS)}) or a --mapping file")
    if format not in FORMATS:
        raise RecordError(path, 0, None, f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    spec = load_mapping(Path(mapping)) if format == "mapped" else None
    overrides = {**(spec.tool_map if spec else {}), **(tool_map or {})}
    try:
        table = merged_tool_map(overrides)
    except ValueError as exc:
        raise RecordError(path, 0, "tool_map", str(exc)) from None
    ctx = ImportContext(path=path, format=format, run_id=run_id or default_run_id(format, path), tool_map=table,
                        questions=QuestionBook(Path(questions)) if questions is not None else None)
    if spec is not None:
        return import_mapped(ctx, spec)
    return FORMATS[format].read(ctx)


__all__ = [
    "ARAG_MAPPING", "CANONICAL_ACTIONS", "DEFAULT_TOOL_MAP", "FORMATS", "SCORER_JUDGES", "Importer", "Mapping",
    "QuestionBook", "RecordError", "detect_format", "import_arag", "import_file", "load_mapping", "load_tool_map",
]
