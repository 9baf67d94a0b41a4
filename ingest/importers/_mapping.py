"""The declarative mapping file: where each canonical field sits in a user's JSONL records (dotted paths)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trajscope.format import RecordError

from ._actions import CANONICAL_ACTIONS

Paths = tuple[str, ...]  # alternatives: the first path present in a record wins

_RECORD_KEYS = {"question_id", "question", "gold", "aliases", "prediction", "steps", "step", "judgments",
                "totals", "run", "metadata", "final_step", "tool_map", "end_reason", "records"}
_STEP_KEYS = {"action", "arguments", "observation", "thought", "tokens_in", "tokens_out", "cost_usd", "latency_ms"}
_JUDGES = {"em", "f1", "contain", "llm"}
_TOTALS = {"cost_usd", "tokens_in", "tokens_out", "latency_ms"}
_RUN_KEYS = {"model", "dataset", "controller", "condition", "intervention", "seed", "started_at"}


@dataclass(frozen=True)
class Mapping:
    """Dotted paths (each with alternatives) from a source record to canonical fields."""

    question_id: Paths
    question: Paths = ()
    gold: Paths = ()
    aliases: Paths = ()
    prediction: Paths = ()
    steps: Paths = ()
    records: Paths = ()
    step: dict[str, Paths] = field(default_factory=dict)
    judgments: dict[str, Paths] = field(default_factory=dict)
    totals: dict[str, Paths] = field(default_factory=dict)
    run: dict[str, Paths] = field(default_factory=dict)
    metadata: Paths = ()
    end_reason: Paths = ()
    final_step: bool = True
    tool_map: dict[str, str] = field(default_factory=dict)
    declare: dict[str, bool] = field(default_factory=dict)


def _paths(value: Any, where: str, path: Path) -> Paths:
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) and v for v in value):
        return tuple(value)
    raise RecordError(path, 1, where, "expected a dotted path or a list of alternative paths")


def _path_table(value: Any, allowed: set[str], where: str, path: Path) -> dict[str, Paths]:
    if not isinstance(value, dict):
        raise RecordError(path, 1, where, "expected a mapping of names to dotted paths")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise RecordError(path, 1, f"{where}.{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}")
    return {k: _paths(v, f"{where}.{k}", path) for k, v in value.items()}


def mapping_from_dict(spec: Any, path: Path) -> Mapping:
    """Validate a decoded mapping file; errors name the mapping file and the offending key."""
    if not isinstance(spec, dict):
        raise RecordError(path, 1, None, "a mapping file must be a YAML/JSON object")
    unknown = sorted(set(spec) - _RECORD_KEYS)
    if unknown:
        raise RecordError(path, 1, unknown[0], f"unknown key; allowed: {', '.join(sorted(_RECORD_KEYS))}")
    if "question_id" not in spec:
        raise RecordError(path, 1, "question_id", "required: the path of the question id (the pairing key)")
    tool_map = spec.get("tool_map") or {}
    if not isinstance(tool_map, dict) or not all(isinstance(v, str) and v in CANONICAL_ACTIONS for v in tool_map.values()):
        raise RecordError(path, 1, "tool_map", f"expected tool name -> one of {', '.join(CANONICAL_ACTIONS)}")
    final_step = spec.get("final_step", True)
    if not isinstance(final_step, bool):
        raise RecordError(path, 1, "final_step", "expected true or false")
    single = {k: _paths(spec[k], k, path) for k in
              ("question_id", "question", "gold", "aliases", "prediction", "steps", "records", "end_reason")
              if spec.get(k) is not None}
    return Mapping(
        **single,
        step=_path_table(spec.get("step") or {}, _STEP_KEYS, "step", path),
        judgments=_path_table(spec.get("judgments") or {}, _JUDGES, "judgments", path),
        totals=_path_table(spec.get("totals") or {}, _TOTALS, "totals", path),
        run=_path_table(spec.get("run") or {}, _RUN_KEYS, "run", path),
        metadata=_paths(spec["metadata"], "metadata", path) if spec.get("metadata") else (),
        final_step=final_step,
        tool_map={str(k): v for k, v in tool_map.items()},
    )


def load_mapping(path: Path) -> Mapping:
    """Read a YAML or JSON mapping file."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        spec = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = getattr(exc, "lineno", None) or (mark.line + 1 if mark is not None else 1)
        raise RecordError(path, line, None, f"mapping file is not valid YAML/JSON: {exc}") from None
    return mapping_from_dict(spec, path)


def load_tool_map(path: Path) -> dict[str, str]:
    """A `--tool-map` file: YAML/JSON object of source tool name -> canonical action."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        spec = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise RecordError(path, 1, None, f"tool map is not valid YAML/JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise RecordError(path, 1, None, "a tool map must be an object of tool name -> action")
    for name, action in spec.items():
        if action not in CANONICAL_ACTIONS:
            raise RecordError(path, 1, str(name), f"{action!r} is not one of {', '.join(CANONICAL_ACTIONS)}")
    return {str(k): v for k, v in spec.items()}
