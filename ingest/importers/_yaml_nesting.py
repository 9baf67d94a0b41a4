"""The nesting and alias-expansion limits for YAML files the user writes (mappings, tool maps, patterns):
checked on the event stream.

PyYAML's composer and constructor recurse per level, so a deep file would end in a RecursionError; its
parser does not, so the depth is counted on the events before anything is composed. An alias (*name)
stands for its anchor's whole node: nested anchors (a "billion laughs") make 1 KB stand for billions of
nodes once walked, so every alias counts as the nodes it expands to, against EXPANDED_NODE_LIMIT.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trajscope.format import NESTING_LIMIT, RecordError

# Nodes a file may stand for once its aliases are expanded: a mapping file has tens to thousands.
EXPANDED_NODE_LIMIT = 100_000
_OPEN = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSE = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


class _Position:
    """Where the reader is inside one open container: the current key (mapping) or index (sequence)."""

    def __init__(self, is_mapping: bool):
        self.is_mapping, self.key, self.index, self.wants_key = is_mapping, "", -1, True

    def value_begins(self, scalar: str | None = None) -> None:
        if not self.is_mapping:
            self.index += 1
        elif self.wants_key and scalar is not None:
            self.key, self.wants_key = scalar, False
        else:
            self.wants_key = True  # a value read: the next scalar is a key

    def __str__(self) -> str:
        return f".{self.key}" if self.is_mapping else f"[{self.index}]"


def check_yaml_nesting(text: str, path: Path) -> None:
    """Raise a RecordError (file, line, key path) when a YAML/JSON text nests deeper than NESTING_LIMIT, or its
    aliases expand to more than EXPANDED_NODE_LIMIT nodes."""
    stack: list[_Position] = []
    inside: list[int] = []  # nodes (expanded) inside each open container
    anchors: list[str | None] = []
    sizes: dict[str, int] = {}  # expanded size of every anchored node seen so far
    total = 0

    def count(n: int, mark) -> None:  # noqa: ANN001 - a yaml Mark
        nonlocal total
        total += n
        if inside:
            inside[-1] += n
        if total > EXPANDED_NODE_LIMIT:
            shown = "".join(str(p) for p in stack[:8]).lstrip(".") or "(top)"
            raise RecordError(path, mark.line + 1, shown,
                              f"its aliases (*name) expand to more than {EXPANDED_NODE_LIMIT:,} nodes, past the "
                              f"expansion limit of {EXPANDED_NODE_LIMIT:,}; write the values out or use fewer "
                              "nested anchors")

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, _OPEN):
                if stack:
                    stack[-1].value_begins()
                count(1, event.start_mark)
                stack.append(_Position(isinstance(event, yaml.MappingStartEvent)))
                inside.append(1)
                anchors.append(event.anchor)
                if len(stack) > NESTING_LIMIT:
                    shown = "".join(str(p) for p in stack[:-1][:8]).lstrip(".") + ".…"
                    raise RecordError(path, event.start_mark.line + 1, shown,
                                      f"nested more than {NESTING_LIMIT} levels deep, past the nesting limit "
                                      f"of {NESTING_LIMIT} levels")
            elif isinstance(event, _CLOSE):
                stack.pop()
                size, anchor = inside.pop(), anchors.pop()
                if anchor:
                    sizes[anchor] = size
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                if stack:
                    stack[-1].value_begins(getattr(event, "value", ""))
                if isinstance(event, yaml.AliasEvent):
                    count(sizes.get(event.anchor, 1), event.start_mark)
                else:
                    count(1, event.start_mark)
                    if event.anchor:
                        sizes[event.anchor] = 1
    except yaml.YAMLError:
        return  # a syntax error: the loader that follows reports it with its line


def load_yaml(text: str, path: str | Path, what: str) -> Any:
    """The one YAML loader of every file and value the user writes: nesting and alias expansion checked on
    the event stream first (check_yaml_nesting), then safe_load; bad YAML is one RecordError line."""
    check_yaml_nesting(text, Path(path))
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RecordError(path, mark.line + 1 if mark else 1, None,
                          f"{what} is not valid YAML: {' '.join(str(exc).split())}") from None
