"""Inputs nested past the nesting limit, one per importer family and side file, built from the fixtures.

Each case writes its files into a folder and says where the deep value sits (line and field path), so a
test can check that the error names exactly that place.
"""
from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "importers"
MARK = "__DEEP_VALUE__"


def deep_json(depth: int) -> str:
    """A JSON object nested `depth` levels: {"a": {"a": ... 1 ...}}."""
    return '{"a": ' * (depth - 1) + '{"a": 1' + "}" * depth


def deep_yaml_flow(depth: int) -> str:
    """A YAML flow sequence nested `depth` levels."""
    return "[" * depth + "]" * depth


@dataclass
class DeepCase:
    """The main file, the side files, the format, and where the deep value is (line, field prefix)."""

    name: str
    main: Path
    format: str | None
    line: int
    field: str
    mapping: Path | None = None
    patterns: Path | None = None
    questions: Path | None = None
    tool_map: Path | None = None
    deep_file: Path | None = None  # the file holding the deep value, when it is a side file

    @property
    def error_file(self) -> Path:
        return self.deep_file or self.main

    @property
    def side_files(self) -> dict[str, Path]:
        return {k: v for k, v in (("mapping", self.mapping), ("patterns", self.patterns),
                                  ("questions", self.questions), ("tool_map", self.tool_map)) if v}

    def cli_args(self) -> list[str]:
        args = [str(self.main)] + (["--format", self.format] if self.format else [])
        for name, path in self.side_files.items():
            args += [f"--{name.replace('_', '-')}", str(path)]
        return args


def _put(text: str, value: str, out: Path) -> int:
    """Write `text` with the mark replaced by `value`; the line the value starts on."""
    line = text[:text.index(MARK) - 1].count("\n") + 1
    out.write_text(text.replace(f'"{MARK}"', value, 1), encoding="utf-8")
    return line


def _jsonl_with(fixture: str, edit: Callable[[list[dict[str, Any]]], None], folder: Path, name: str,
                value: str) -> tuple[Path, int]:
    records = [json.loads(raw) for raw in (FIXTURES / fixture).read_text().splitlines() if raw.strip()]
    edit(records)
    out = folder / name
    return out, _put("\n".join(json.dumps(r) for r in records) + "\n", value, out)


def _document_with(fixture: str, edit: Callable[[Any], None], folder: Path, name: str,
                   value: str) -> tuple[Path, int]:
    data = json.loads((FIXTURES / fixture).read_text())
    edit(data)
    out = folder / name
    return out, _put(json.dumps(data, indent=1), value, out)


def _set(path: str, value: Any = MARK) -> Callable[[Any], None]:
    """An edit that sets a dotted path (integers index lists)."""
    def edit(data: Any) -> None:
        *parents, last = path.split(".")
        for p in parents:
            data = data[int(p) if isinstance(data, list) else p]
        data[int(last) if isinstance(data, list) else last] = value
    return edit


_OTEL_INPUT_MESSAGES = "resourceSpans.0.scopeSpans.0.spans.0.attributes.4.value.stringValue"


def build_cases(folder: Path, depth: int) -> list[DeepCase]:
    """Every family: a deep record, and a deep JSON text inside a string where the importer decodes one."""
    deep, as_string = deep_json(depth), json.dumps(deep_json(depth))
    cases: list[DeepCase] = []

    def add(name: str, fmt: str | None, made: tuple[Path, int], field_: str, **side: Any) -> None:
        cases.append(DeepCase(name, made[0], fmt, made[1], field_, **side))

    add("canonical record", "canonical", _canonical(folder, deep), "steps[1].args.nested.a.a")
    add("openinference record", "openinference",
        _jsonl_with("openinference_spans.jsonl", lambda r: _set("attributes.deep")(r[1]), folder, "oi.jsonl", deep),
        "attributes.deep.a.a")
    add("openinference JSON-string attribute", "openinference",
        _jsonl_with("openinference_spans.jsonl", lambda r: _set("attributes.metadata")(r[1]), folder, "oi_str.jsonl",
                    as_string), "attributes.metadata.a.a")
    add("otel_genai record", "otel_genai",
        _document_with("otel_genai_otlp.json", _set("resourceSpans.0.resource.deep"), folder, "otel.json", deep),
        "resourceSpans[0].resource.deep.a.a")
    add("otel_genai JSON-string attribute", "otel_genai",
        _at_line(3, _document_with("otel_genai_otlp.json", _set(_OTEL_INPUT_MESSAGES), folder, "otel_str.json",
                                   as_string)),
        "resourceSpans[0].scopeSpans[0].spans[0].attributes.gen_ai.input.messages.a.a")
    add("atif record", "atif", _document_with("atif_trajectory.json", _set("agent.deep"), folder, "atif.json", deep),
        "agent.deep.a.a")
    add("atif JSON-string arguments", "atif",
        _at_line(1, _document_with("atif_trajectory.json", _set("steps.2.tool_calls.0.arguments"), folder,
                                   "atif_str.json", as_string)), "steps[2].tool_calls[0].arguments.a.a")
    add("inspect .json sample", "inspect",
        _document_with("inspect_log.json", _set("samples.0.deep"), folder, "inspect.json", deep),
        "samples[0].deep.a.a")
    add("inspect .eval archive", "inspect", _eval_archive(folder, deep), "deep.a.a")
    add("react (FireAct JSON)", "react",
        _document_with("react_fireact.json", _set("1.deep"), folder, "fireact.json", deep), "1.deep.a.a")
    add("autoact record", "autoact",
        _jsonl_with("autoact.jsonl", lambda r: _set("deep")(r[0]), folder, "autoact.jsonl", deep), "deep.a.a")
    add("swe_agent .traj", "swe_agent",
        _document_with("bridge-1.traj", _set("info.deep"), folder, "deep.traj", deep), "info.deep.a.a")
    add("arag record", "arag",
        _jsonl_with("arag_predictions.jsonl", lambda r: _set("deep")(r[0]), folder, "arag.jsonl", deep), "deep.a.a")
    mapping = folder / "mapped.yaml"
    mapping.write_text((FIXTURES / "mapped.yaml").read_text())
    add("mapped record", "mapped",
        _jsonl_with("mapped.jsonl", lambda r: _set("meta.deep")(r[0]), folder, "mapped.jsonl", deep),
        "meta.deep.a.a", mapping=mapping)
    add("mapped JSON-string arguments", "mapped",
        _jsonl_with("mapped.jsonl", lambda r: _set("events.0.payload")(r[0]), folder, "mapped_str.jsonl", as_string),
        "events[0].payload.a.a", mapping=mapping)
    plain = folder / "plain.jsonl"
    plain.write_text((FIXTURES / "mapped.jsonl").read_text())
    text_log = folder / "transcript.txt"
    text_log.write_text((FIXTURES / "react_transcript.txt").read_text())

    def side(name: str, fmt: str, main: Path, kind: str, file: Path, line: int, field_: str, **more: Any) -> None:
        cases.append(DeepCase(name, main, fmt, line, field_, deep_file=file, **{kind: file}, **more))

    deep_yaml = folder / "deep_mapping.yaml"
    deep_yaml.write_text((FIXTURES / "mapped.yaml").read_text() + f"metadata: {deep_yaml_flow(depth)}\n")
    side("mapping file (YAML)", "mapped", plain, "mapping", deep_yaml, _last_line(deep_yaml), "metadata[0][0][0]")
    deep_map_json = folder / "deep_mapping.json"
    deep_map_json.write_text('{"question_id": "meta.uid", "steps": "events", "run": ' + deep + "}")
    side("mapping file (JSON)", "mapped", plain, "mapping", deep_map_json, 1, "run.a.a")
    tool_map = folder / "tools.json"
    tool_map.write_text('{"web": ' + deep + "}")
    side("tool-map file (JSON)", "mapped", plain, "tool_map", tool_map, 1, "web.a.a", mapping=mapping)
    patterns = folder / "patterns.yaml"
    patterns.write_text(f"episode: '^Question:'\nextra: {deep_yaml_flow(depth)}\n")
    side("patterns file (YAML)", "react", text_log, "patterns", patterns, 2, "extra[0][0][0]")
    questions = folder / "questions.json"
    questions.write_text('[\n {"question": "Is water wet?", "answer": "yes", "meta": ' + deep + "}\n]\n")
    side("questions file (JSON)", "react", text_log, "questions", questions, 2, "[0].meta.a.a")
    return cases


def _at_line(line: int, made: tuple[Path, int]) -> tuple[Path, int]:
    """A JSON string decoded after its document: the error names the line its record starts on."""
    return made[0], line


def _last_line(path: Path) -> int:
    return path.read_text().rstrip("\n").count("\n") + 1


def _canonical(folder: Path, deep: str) -> tuple[Path, int]:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from foundation_records import fixture_trajectories

    from trajscope.format import encode

    line = json.loads(encode(fixture_trajectories()[0]))
    line["steps"][1]["args"] = {"nested": MARK}
    out = folder / "canonical.jsonl"
    return out, _put(json.dumps(line) + "\n", deep, out)


def _eval_archive(folder: Path, deep: str) -> tuple[Path, int]:
    data = json.loads((FIXTURES / "inspect_log.json").read_text())
    sample = dict(data.pop("samples")[0], deep=MARK)
    out = folder / "deep.eval"
    text = json.dumps(sample, indent=1)
    line = text[:text.index(MARK)].count("\n") + 1
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("header.json", json.dumps(data))
        archive.writestr("samples/1_epoch_1.json", text.replace(f'"{MARK}"', deep))
    return out, line
