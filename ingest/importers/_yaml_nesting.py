"""The nesting limit for YAML files the user writes (mappings, patterns): checked on the event stream.

PyYAML's composer and constructor recurse per level, so a deep file would end in a RecursionError; its
parser does not, so the depth is counted on the events before anything is composed.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from trajscope.format import NESTING_LIMIT, RecordError

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
    """Raise a RecordError (file, line, key path) when a YAML/JSON text nests deeper than NESTING_LIMIT."""
    stack: list[_Position] = []
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, _OPEN):
                if stack:
                    stack[-1].value_begins()
                stack.append(_Position(isinstance(event, yaml.MappingStartEvent)))
                if len(stack) > NESTING_LIMIT:
                    shown = "".join(str(p) for p in stack[:-1][:8]).lstrip(".") + ".…"
                    raise RecordError(path, event.start_mark.line + 1, shown,
                                      f"nested more than {NESTING_LIMIT} levels deep, past the nesting limit "
                                      f"of {NESTING_LIMIT} levels")
            elif isinstance(event, _CLOSE):
                stack.pop()
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)) and stack:
                stack[-1].value_begins(getattr(event, "value", ""))
    except yaml.YAMLError:
        return  # a syntax error: the loader that follows reports it with its line
