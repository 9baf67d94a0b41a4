"""The declarative mapping file: where each canonical field sits in a user's records (dotted paths).

A value is a dotted path, a list of alternative paths (the first present wins) or `{const: VALUE}`.
Errors name the mapping file, the line of the offending key and the key.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trajscope.format import CAPABILITY_NAMES, RecordError, loads_bounded, read_side_text

from ._actions import CANONICAL_ACTIONS
from ._yaml_nesting import load_yaml


@dataclass(frozen=True)
class Const:
    """A constant a mapping file states for every record (`action: {const: search}`)."""

    value: Any


Paths = tuple[str, ...]  # alternatives: the first path present in a record wins
Source = Paths | Const

_SINGLE_KEYS = ("question_id", "question", "gold", "aliases", "prediction", "steps", "records", "end_reason",
                "question_type", "hop_count", "dataset", "gold_chunk_ids", "gold_titles", "error", "run_id")
_RECORD_KEYS = {*_SINGLE_KEYS, "step", "judgments", "totals", "run", "metadata", "final_step", "tool_map",
                "end_reasons", "declare", "corpus"}
_STEP_KEYS = {"action", "arguments", "observation", "thought", "tokens_in", "tokens_out", "cost_usd", "latency_ms",
              "query", "candidates", "candidate", "error"}
_CANDIDATE_KEYS = {"id", "title", "score", "snippet"}
_JUDGES = {"em", "f1", "contain", "llm"}
_TOTALS = {"cost_usd", "tokens_in", "tokens_out", "latency_ms"}
_RUN_KEYS = {"model", "dataset", "controller", "condition", "intervention", "seed", "started_at"}
_END_REASONS = ("final", "budget", "forced_answer", "loop_cap", "context_budget", "error")


@dataclass(frozen=True)
class Mapping:
    """Dotted paths (each with alternatives) or constants from a source record to canonical fields."""

    question_id: Source
    question: Source = ()
    gold: Source = ()
    aliases: Source = ()
    prediction: Source = ()
    steps: Source = ()
    records: Source = ()
    question_type: Source = ()
    hop_count: Source = ()
    dataset: Source = ()
    gold_chunk_ids: Source = ()
    gold_titles: Source = ()
    error: Source = ()  # present and not empty / false / null: the record is an error trajectory
    run_id: Source = ()  # records grouped into runs by this field: run `<run id>:<value>`
    step: dict[str, Source] = field(default_factory=dict)
    candidate: dict[str, Source] = field(default_factory=dict)
    judgments: dict[str, Source] = field(default_factory=dict)
    totals: dict[str, Source] = field(default_factory=dict)
    run: dict[str, Source] = field(default_factory=dict)
    metadata: Paths = ()
    end_reason: Source = ()
    end_reasons: dict[str, tuple[str, ...]] = field(default_factory=dict)  # canonical -> source values
    final_step: bool = True
    tool_map: dict[str, str] = field(default_factory=dict)
    declare: dict[str, bool] = field(default_factory=dict)
    corpus: str | None = None  # a dataset (name or path) whose chunks gold titles and candidate titles match
    corpus_line: int = 1


class _Lines:
    """Line numbers of the keys of a mapping file, by dotted key path (1 when unknown)."""

    def __init__(self, text: str):
        self.lines: dict[str, int] = {}
        try:
            self._walk(yaml.compose(text), "")
        except yaml.YAMLError:
            pass

    def _walk(self, node: Any, prefix: str) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = f"{prefix}.{key.value}" if prefix else str(key.value)
                self.lines[name] = key.start_mark.line + 1
                self._walk(value, name)

    def of(self, key: str | None) -> int:
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rpartition(".")[0]
        return 1


@dataclass
class _Reader:
    path: Path
    lines: _Lines

    def error(self, key: str | None, message: str) -> RecordError:
        return RecordError(self.path, self.lines.of(key), key, message)

    def source(self, value: Any, key: str) -> Source:
        if isinstance(value, dict):
            if set(value) != {"const"}:
                raise self.error(key, "expected a dotted path, a list of paths or {const: VALUE}")
            return Const(value["const"])
        if isinstance(value, str) and value:
            return (value,)
        if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
            return tuple(value)
        raise self.error(key, "expected a dotted path, a list of alternative paths or {const: VALUE}")

    def table(self, value: Any, allowed: set[str], key: str) -> dict[str, Source]:
        if not isinstance(value, dict):
            raise self.error(key, "expected a mapping of names to dotted paths")
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise self.error(f"{key}.{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}")
        return {k: self.source(v, f"{key}.{k}") for k, v in value.items()}


def _end_reasons(reader: _Reader, value: Any) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, dict):
        raise reader.error("end_reasons", "expected end reason -> list of source values")
    out = {}
    for reason, values in value.items():
        if reason not in _END_REASONS:
            raise reader.error(f"end_reasons.{reason}", f"unknown end reason; allowed: {', '.join(_END_REASONS)}")
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, list) or not all(isinstance(v, (str, int, bool)) for v in values):
            raise reader.error(f"end_reasons.{reason}", "expected a source value or a list of them")
        out[reason] = tuple(str(v).lower() for v in values)
    return out


def _declare(reader: _Reader, value: Any) -> dict[str, bool]:
    if not isinstance(value, dict):
        raise reader.error("declare", "expected capability -> true / false")
    for name, flag in value.items():
        if name not in CAPABILITY_NAMES:
            raise reader.error(f"declare.{name}", f"unknown capability; allowed: {', '.join(CAPABILITY_NAMES)}")
        if not isinstance(flag, bool):
            raise reader.error(f"declare.{name}", "expected true or false")
    return dict(value)


def mapping_from_dict(spec: Any, path: Path, text: str = "") -> Mapping:
    """Validate a decoded mapping file; errors name the mapping file, the key's line and the key."""
    reader = _Reader(path, _Lines(text))
    if not isinstance(spec, dict):
        raise reader.error(None, "a mapping file must be a YAML/JSON object")
    unknown = sorted(set(spec) - _RECORD_KEYS)
    if unknown:
        raise reader.error(unknown[0], f"unknown key; allowed: {', '.join(sorted(_RECORD_KEYS))}")
    if "question_id" not in spec:
        raise reader.error("question_id", "required: the path of the question id (the pairing key)")
    tool_map = spec.get("tool_map") or {}
    if not isinstance(tool_map, dict):
        raise reader.error("tool_map", f"expected tool name -> one of {', '.join(CANONICAL_ACTIONS)}")
    for name, action in tool_map.items():
        if action not in CANONICAL_ACTIONS:
            raise reader.error(f"tool_map.{name}", f"{action!r} is not one of {', '.join(CANONICAL_ACTIONS)}")
    final_step = spec.get("final_step", True)
    if not isinstance(final_step, bool):
        raise reader.error("final_step", "expected true or false")
    if not isinstance(spec.get("step") or {}, dict):
        raise reader.error("step", "expected a mapping of step fields to dotted paths")
    step_spec = dict(spec.get("step") or {})
    candidate_spec = step_spec.pop("candidate", None) or {}
    corpus = spec.get("corpus")
    if corpus is not None and not (isinstance(corpus, str) and corpus):
        raise reader.error("corpus", "expected a dataset name (e.g. demo) or the path of a dataset")
    metadata = spec.get("metadata")
    if metadata is not None and not isinstance(metadata, (str, list)):
        raise reader.error("metadata", "expected a path or a list of paths")
    return Mapping(
        **{k: reader.source(spec[k], k) for k in _SINGLE_KEYS if spec.get(k) is not None},
        step=reader.table(step_spec, _STEP_KEYS - {"candidate"}, "step"),
        candidate=reader.table(candidate_spec, _CANDIDATE_KEYS, "step.candidate"),
        judgments=reader.table(spec.get("judgments") or {}, _JUDGES, "judgments"),
        totals=reader.table(spec.get("totals") or {}, _TOTALS, "totals"),
        run=reader.table(spec.get("run") or {}, _RUN_KEYS, "run"),
        metadata=(metadata,) if isinstance(metadata, str) else tuple(metadata or ()),
        end_reasons=_end_reasons(reader, spec["end_reasons"]) if spec.get("end_reasons") else {},
        final_step=final_step,
        tool_map={str(k): v for k, v in tool_map.items()},
        declare=_declare(reader, spec["declare"]) if spec.get("declare") else {},
        corpus=corpus, corpus_line=reader.lines.of("corpus"),
    )


def _parse(path: Path, text: str, what: str) -> Any:
    try:
        if path.suffix == ".json":
            return loads_bounded(text, path=path, line=1)
        return load_yaml(text, path, what)
    except json.JSONDecodeError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = getattr(exc, "lineno", None) or (mark.line + 1 if mark is not None else 1)
        raise RecordError(path, line, None, f"{what} is not valid YAML/JSON: {exc}") from None


def load_mapping(path: Path) -> Mapping:
    """Read a YAML or JSON mapping file."""
    text = read_side_text(path, "mapping file")
    return mapping_from_dict(_parse(path, text, "mapping file"), path, text)


def load_tool_map(path: Path) -> dict[str, str]:
    """A `--tool-map` file: YAML/JSON object of source tool name -> canonical action."""
    text = read_side_text(path, "tool map")
    spec = _parse(path, text, "tool map")
    lines = _Lines(text)
    if not isinstance(spec, dict):
        raise RecordError(path, 1, None, "a tool map must be an object of tool name -> action")
    for name, action in spec.items():
        if action not in CANONICAL_ACTIONS:
            raise RecordError(path, lines.of(str(name)), str(name),
                              f"{action!r} is not one of {', '.join(CANONICAL_ACTIONS)}")
    return {str(k): v for k, v in spec.items()}
