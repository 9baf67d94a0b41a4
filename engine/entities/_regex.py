"""The regex named-entity extractor (used by the +lowev gate and the regex label):
it finds quoted titles, capitalised name runs and years."""
from __future__ import annotations

import re

from ._names import strip_name, unique_outermost

# Capitalised runs, allowing short lowercase joiners inside a name ("Museum of Modern Art");
# "and" and "in" are not, so "Ed Wood and Scott Derrickson" stays two names.
_NAME_RE = re.compile(
    r"[A-Z][\w'’.&-]*(?:\s+(?:(?:of|the|de|del|da|di|du|la|le|van|von|for)\s+)*[A-Z0-9][\w'’.&-]*)*"
)
_QUOTED_RE = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_YEAR_RE = re.compile(r"\b\d{3,4}\b")


def extract_regex_entities(text: str) -> list[str]:
    """Entities of a question in order of appearance, each once, nested names folded into the outer one."""
    found = [m.group(1).strip() for m in _QUOTED_RE.finditer(text)]
    found += [strip_name(m.group(0)) for m in _NAME_RE.finditer(text)]
    found += [m.group(0) for m in _YEAR_RE.finditer(text)]
    return unique_outermost(found)


__all__ = ["extract_regex_entities"]
