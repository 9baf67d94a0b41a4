"""Text safe to print and to open in a spreadsheet: control characters shown, never sent raw; CSV cells
that a spreadsheet would run as a formula kept as text."""
from __future__ import annotations

# C0 controls but newline and tab, DEL, C1 controls (CSI 0x9b among them) and the bidirectional
# overrides and isolates (text that reads one way and runs another): each is shown as its escape.
_HIDDEN = [c for c in range(0x20) if c not in (0x0A, 0x09)] + list(range(0x7F, 0xA0)) \
    + list(range(0x202A, 0x202F)) + list(range(0x2066, 0x206A))
_VISIBLE = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _HIDDEN}
# A spreadsheet runs a cell that starts with one of these (OWASP's list): such a cell gets a quote first.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def terminal_text(text: str) -> str:
    """text with every control character (newline and tab kept) written as its escape, e.g. \\x1b."""
    return text.translate(_VISIBLE)


def csv_cell_text(text: str) -> str:
    """A CSV text cell a spreadsheet shows as text: one starting like a formula gets a leading quote."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
