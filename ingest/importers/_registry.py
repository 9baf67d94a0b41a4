"""The registry of formats and how one file is opened: format resolved, tool table and context built."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from trajscope.format import RecordError, Trajectory, check_regular_file

from ._actions import DEFAULT_TOOL_MAP, REACT_TOOL_MAP, merged_tool_map
from ._arag import import_arag
from ._atif import ATIF_NOTES, import_atif
from ._autoact import import_autoact
from ._canonical import import_canonical
from ._chat import import_chat
from ._claude_code import CLAUDE_CODE_NOTES, CLAUDE_CODE_TOOL_MAP, import_claude_code
from ._context import ImportContext, default_run_id
from ._detect import detect_format, is_empty, list_directory
from ._dspy import DSPY_NOTES, import_dspy
from ._episodes import TextPatterns, load_patterns
from ._inspect import import_inspect
from ._langfuse import LANGFUSE_NOTES, import_langfuse
from ._langsmith import LANGSMITH_NOTES, import_langsmith
from ._mapped import import_mapped
from ._mapping import load_mapping
from ._notebook import import_notebook
from ._openinference import import_openinference
from ._otel_genai import import_otel_genai
from ._questions import QuestionBook
from ._react import import_react
from ._smolagents import SMOLAGENTS_NOTES, SMOLAGENTS_TOOL_MAP, import_smolagents
from ._swe_agent import import_swe_agent
from ._trail import import_trail
from ._weave import WEAVE_NOTES, import_weave
from ._who_and_when import import_who_and_when


@dataclass(frozen=True)
class Importer:
    """One supported format: its reader, a one-line description, its tool table and facts for its profile."""

    name: str
    description: str
    read: Callable[[ImportContext], Iterator[Trajectory]]
    tool_table: dict[str, str] = field(default_factory=lambda: DEFAULT_TOOL_MAP)
    capability_notes: dict[str, str] = field(default_factory=dict)


def _needs_mapping(ctx: ImportContext) -> Iterator[Trajectory]:
    raise RecordError(ctx.path, 0, None, "format 'mapped' needs a --mapping file")


_REACT_NOTES = {"read_action": "ReAct Search[...] returns the page text itself and Lookup[...] finds a sentence "
                               "inside it; only Retrieve[...] opens a page (a read)"}

FORMATS: dict[str, Importer] = {
    imp.name: imp
    for imp in (
        Importer("canonical", "trajscope's own JSONL trajectory log (see `trajscope schema`)", import_canonical),
        Importer("openinference", "OpenInference spans (Phoenix JSON/JSONL or OTLP JSON); one trace per trajectory",
                 import_openinference),
        Importer("otel_genai", "OpenTelemetry GenAI spans in OTLP JSON (gen_ai.operation.name)", import_otel_genai),
        Importer("atif", "ATIF agent trajectories (schema_version ATIF-v1.x, continued trajectories joined), one "
                         "per file or JSONL", import_atif, capability_notes=ATIF_NOTES),
        Importer("inspect", "Inspect AI eval logs (.json or .eval archive): samples, tool calls, scores",
                 import_inspect),
        Importer("react", "ReAct Thought/Action/Observation logs (FireAct JSON, chat lists, text with many episodes "
                          "and trials)", import_react, REACT_TOOL_MAP, _REACT_NOTES),
        Importer("notebook", "Jupyter notebook (.ipynb) whose code-cell outputs hold printed ReAct transcripts "
                             "(episodes, result dicts), read as a text log", import_notebook, REACT_TOOL_MAP,
                 _REACT_NOTES),
        Importer("autoact", "AutoAct JSONL (question, answer, correct, halted, and the transcript in prompt)",
                 import_autoact, REACT_TOOL_MAP, _REACT_NOTES),
        Importer("swe_agent", "SWE-agent .traj files (one trajectory; open reads a file, find_file searches)",
                 import_swe_agent),
        Importer("who_and_when", "Who&When failure logs (one JSON per trajectory: history, mistake_step / "
                 "mistake_agent / mistake_reason as human labels); a directory of them is one run",
                 import_who_and_when),
        Importer("trail", "TRAIL-style span exports ({trace_id, spans} with nested child_spans, OpenInference "
                          "attributes; smolagents steps); a directory of them is one run", import_trail),
        Importer("arag", "A-RAG predictions.jsonl (trajectory of tool calls, chunks_read_ids, total_cost)",
                 import_arag),
        Importer("openai_chat", "OpenAI chat-completions records: a `messages` list with tool_calls and tool "
                                "turns, beside question / gold / extra fields (JSONL or JSON array)", import_chat),
        Importer("smolagents", "smolagents run outputs (agent memory as messages; tool-calling and code agents, "
                               "calls inside generated code counted; `true_answer` as gold)", import_smolagents,
                 SMOLAGENTS_TOOL_MAP, SMOLAGENTS_NOTES),
        Importer("langfuse", "Langfuse traces and observations (app export, public API, flat observation lists); "
                             "TOOL / RETRIEVER observations and tool-named SPANs are the calls", import_langfuse,
                 capability_notes=LANGFUSE_NOTES),
        Importer("claude_code", "Claude Code session transcripts (JSONL): the main session and each sub-agent "
                                "side chain, tool_use blocks matched to their tool_result", import_claude_code,
                 CLAUDE_CODE_TOOL_MAP, CLAUDE_CODE_NOTES),
        Importer("langsmith", "LangSmith runs (run trees with child_runs, flat run lists, SDK post/patch "
                              "payloads); tool and retriever runs are the calls", import_langsmith,
                 capability_notes=LANGSMITH_NOTES),
        Importer("weave", "W&B Weave traces: agent spans, classic calls and the chat view (JSON, JSONL, or a "
                          "recorded HTTP cassette); execute_tool spans and leaf calls are the tool calls", import_weave,
                 capability_notes=WEAVE_NOTES),
        Importer("dspy", "DSPy program traces: a saved program's bootstrapped demos, one trajectory per run "
                         "(dspy_uuid); query predictors are retrieval hops, context passages their results",
                 import_dspy, capability_notes=DSPY_NOTES),
        Importer("mapped", "any JSONL, described by a --mapping YAML/JSON file of dotted paths", _needs_mapping),
    )
}


def resolve_format(path: Path, format: str | None, mapping: Path | None) -> str:
    """The format to read `path` with: given, implied by a mapping file, or detected; else a clear error.

    A directory's files must all be of one format (it is read as one run, see `list_directory`).
    """
    path = Path(path)
    if path.is_dir():
        listing = list_directory(path)
        files = listing.logs
        if not files:
            raise RecordError(path, 0, None, listing.nothing_to_read())
        formats = {f: resolve_format(f, format, mapping) for f in files}
        first = files[0]
        for f, fmt in formats.items():
            if fmt != formats[first]:
                raise RecordError(f, 1, None, f"format {fmt!r}, but {first.name} in the same directory is "
                                  f"{formats[first]!r}: a directory is read as one run of one format")
        return formats[first]
    if not path.is_file():
        if path.exists():  # a FIFO or device says what it is, and is never opened
            check_regular_file(path, "log")
        raise RecordError(path, 0, None, "no such file")
    if mapping is not None and format in (None, "mapped"):
        return "mapped"
    if is_empty(path):
        raise RecordError(path, 1, None, "empty file: it holds no records")
    if format is None:
        format = detect_format(path)
        if format is None:
            raise RecordError(path, 1, None, "unrecognised log format; pass --format "
                              f"({', '.join(FORMATS)}) or a --mapping file")
    if format not in FORMATS:
        raise RecordError(path, 0, None, f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    return format


def open_import(path: Path, *, format: str | None = None, mapping: Path | None = None,
                questions: Path | None = None, tool_map: dict[str, str] | None = None,
                run_id: str | None = None, patterns: TextPatterns | Path | None = None,
                ) -> tuple[ImportContext, Importer, Iterator[Trajectory]]:
    """The context, the importer and the record stream of one file (nothing is read until iterated)."""
    path = Path(path)
    format = resolve_format(path, format, mapping)
    importer = FORMATS[format]
    spec = load_mapping(Path(mapping)) if format == "mapped" and mapping is not None else None
    overrides = {**(spec.tool_map if spec else {}), **(tool_map or {})}
    try:
        table = merged_tool_map(overrides, importer.tool_table)
    except ValueError as exc:
        raise RecordError(path, 0, "tool_map", str(exc)) from None
    if isinstance(patterns, (str, Path)):
        patterns = load_patterns(Path(patterns))
    ctx = ImportContext(path=path, format=format, run_id=run_id or default_run_id(format, path), tool_map=table,
                        questions=QuestionBook(Path(questions)) if questions is not None else None,
                        patterns=patterns or TextPatterns(), declared=dict(spec.declare) if spec else {},
                        mapping_path=Path(mapping) if spec is not None and mapping is not None else None)

    def read(one: ImportContext) -> Iterator[Trajectory]:
        return import_mapped(one, spec) if spec is not None else importer.read(one)

    records: Iterator[Trajectory]
    if path.is_dir():  # every file with the directory's run id (and the import's shared notes)
        listing = list_directory(path)
        ctx.notes.not_logs.extend(p.name for p in listing.not_logs)
        records = (t for f in listing.logs for t in read(dataclasses.replace(ctx, path=f)))
    else:
        records = read(ctx)
    return ctx, importer, records


def import_file(path: Path, *, format: str | None = None, mapping: Path | None = None,
                questions: Path | None = None, tool_map: dict[str, str] | None = None,
                run_id: str | None = None, patterns: TextPatterns | Path | None = None) -> Iterator[Trajectory]:
    """Stream canonical trajectories from a log (format detected unless given), before profiling."""
    return open_import(path, format=format, mapping=mapping, questions=questions, tool_map=tool_map,
                       run_id=run_id, patterns=patterns)[2]
