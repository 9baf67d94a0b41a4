"""The sentinel panel: the five replacement strings of the sentinel-fragility audit."""
from __future__ import annotations

MASK = "[MASK]"

# label -> replacement text, in the paper's order; MASK is the reference the others are tested against.
SENTINEL_PANEL: dict[str, str] = {
    "MASK": MASK,
    "REMOVED": "[REMOVED]",
    "NATURAL": "the answer was removed",
    "WORD": "thing",
    "SYMBOL": "###",
}


def sentinel_label(text: str) -> str:
    """The panel label of a replacement text, or the text itself for a sentinel outside the panel."""
    for label, value in SENTINEL_PANEL.items():
        if value == text:
            return label
    return text


__all__ = ["MASK", "SENTINEL_PANEL", "sentinel_label"]
