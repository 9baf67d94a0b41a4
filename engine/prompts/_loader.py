"""Loading and filling prompt templates; `$name` placeholders, so JSON braces need no escaping."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).parent


def available_prompts() -> list[str]:
    """Names of every prompt file shipped in this package."""
    return sorted(p.stem for p in PROMPT_DIR.glob("*.txt"))


@cache
def load_prompt(name: str) -> str:
    """The text of prompt `name` (without the `.txt`), trailing whitespace stripped."""
    path = PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        raise KeyError(f"unknown prompt {name!r}; available: {', '.join(available_prompts())}")
    return path.read_text(encoding="utf-8").rstrip()


def render_prompt(name: str, **fields: object) -> str:
    """Prompt `name` with its `$field` placeholders filled; a missing field is an error."""
    return Template(load_prompt(name)).substitute({k: str(v) for k, v in fields.items()})
