"""Sniff the format of an external log from its first bytes."""
from __future__ import annotations

import re
import zipfile
from pathlib import Path

_HEAD_BYTES = 65536
_REACT_TEXT = re.compile(r"^\s*(Thought|Action)(\s*\d+)?\s*:", re.M)


def _zip_is_inspect(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(n == "header.json" or n.startswith(("samples/", "_journal/")) for n in archive.namelist())
    except zipfile.BadZipFile:
        return False


def detect_format(path: Path) -> str | None:
    """The importer name for `path`, or None (canonical trajscope logs, unknown or binary files)."""
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(_HEAD_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return "inspect" if _zip_is_inspect(path) else None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return "react" if _REACT_TEXT.search(text) else None
    if '"trajectory_id"' in text and re.search(r'"schema_version"\s*:\s*"1"', text):
        return None  # the canonical format: ingest reads it directly
    if re.search(r'"schema_version"\s*:\s*"ATIF', text):
        return "atif"
    if "openinference.span.kind" in text or '"span_kind"' in text:
        return "openinference"
    if '"resourceSpans"' in text or "gen_ai.operation.name" in text:
        return "otel_genai"
    if '"eval"' in text and ('"samples"' in text or '"plan"' in text or '"results"' in text):
        return "inspect"
    if '"traj"' in text:
        return "react"
    if '"trajectory"' in text and '"tool_name"' in text:
        return "arag"
    return None
