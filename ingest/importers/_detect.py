"""Sniff the format of a log from its first bytes (canonical trajscope logs are one format among the others), and
tell a directory's logs from the documentation and code beside them."""
from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from trajscope.format import RecordError, looks_canonical, open_input

from ._detect_frameworks import detect_cassette, detect_framework

_HEAD_BYTES = 65536
_REACT_TEXT = re.compile(r"^\s*(?:\d+[ \t]+)?(Thought|Action|Question|Claim)(\s*\d+)?\s*:", re.M)
_REACT_ACTION = re.compile(r"Action(?:\s*\d+)?\s*:\s*[A-Za-z_][\w-]*\s*\[")
_TRANSCRIPT_KEY = re.compile(r'"(?:transcript|prompt)"\s*:\s*"')
_MESSAGES_KEY = re.compile(r'"messages"\s*:\s*\[')
_TOOL_CALLS = re.compile(r'"tool_calls"\s*:\s*\[|"function_call"\s*:\s*\{|"role"\s*:\s*"tool(?:-call)?"')
_MISTAKE_KEY = re.compile(r'"mistake_(?:step|agent)"\s*:')
_TEXT_CALLS = re.compile(r'<search>|<tool_call>(?:\\n|\s)*\{')
_HARNESS_CHAT = re.compile(r'"(?:traj|conversation)"\s*:\s*\[')


def _zip_is_inspect(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(n == "header.json" or n.startswith(("samples/", "_journal/")) for n in archive.namelist())
    except zipfile.BadZipFile:
        return False


def _tail(path: Path) -> str:
    """The last bytes of a file as text (where a JSON document's closing keys are)."""
    with open(path, "rb") as fh:
        fh.seek(max(0, fh.seek(0, 2) - _HEAD_BYTES))
        return fh.read(_HEAD_BYTES).decode("utf-8", errors="replace")


def _natural(name: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


# Documentation and code that log folders carry beside the logs. Text, JSON, YAML, .ipynb and extensionless
# files stay logs: ReAct text logs are .txt/.log, Weave exports .yaml, ReAct's FEVER/HotpotQA runs notebooks.
NOT_LOG_NAMES = frozenset({"README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "CHANGELOG", "AUTHORS", "CITATION"})
NOT_LOG_SUFFIXES = frozenset({".md", ".rst", ".py", ".sh", ".toml", ".cfg", ".ini", ".lock", ".pdf", ".png",
                              ".jpg", ".jpeg"})


def is_not_log(path: Path) -> bool:
    """True for a directory's documentation or code (README*, LICENSE*, *.md, *.py, ...): never read as a log."""
    name = Path(path).name
    # LICENSE, LICENSE.txt, LICENSE-MIT, but not a log that merely begins so (readme_agent.json)
    stem = re.split(r"[.-]", name, maxsplit=1)[0].upper()
    return stem in NOT_LOG_NAMES or Path(name).suffix.lower() in NOT_LOG_SUFFIXES


def skipped_note(names: list[str], kind: str = "log") -> str:
    """The line naming a directory's skipped documentation and code: `skipped 2 files that are not logs: ...`."""
    noun = "log" if kind == "log" else f"{kind} file"
    counted = f"1 file that is not a {noun}" if len(names) == 1 else f"{len(names)} files that are not {noun}s"
    return f"skipped {counted}: {', '.join(names)}"


@dataclass(frozen=True)
class DirectoryListing:
    """A directory read as one run: its log files, the documentation and code it skips, the subdirectories
    it does not read (each in natural order)."""

    logs: list[Path]
    not_logs: list[Path]
    subdirectories: list[Path]

    def nothing_to_read(self, kind: str = "log") -> str:
        """Why the directory yields no `kind` file (log, label, prediction), naming what it skipped and did not
        read."""
        if not self.not_logs and not self.subdirectories:
            return f"empty directory: it holds no {kind} files"
        noun = "log" if kind == "log" else f"{kind} file"
        what = f"(not a {noun})" if len(self.not_logs) == 1 else f"(not {noun}s)"
        parts = [f"skipped {', '.join(p.name for p in self.not_logs)} {what}"] if self.not_logs else []
        if self.subdirectories:
            parts.append(f"subdirectories are not read: {', '.join(p.name for p in self.subdirectories)} "
                         "— pass the subdirectory")
        return f"no {kind} files: " + "; ".join(parts)


def list_directory(path: Path) -> DirectoryListing:
    """A directory's regular, non-hidden entries in natural order (2.json before 10.json): logs, skipped
    documentation and code (`is_not_log`), unread subdirectories."""
    entries = sorted((p for p in Path(path).iterdir() if not p.name.startswith(".")), key=lambda p: _natural(p.name))
    files = [p for p in entries if p.is_file()]
    return DirectoryListing(logs=[p for p in files if not is_not_log(p)], not_logs=[p for p in files if is_not_log(p)],
                            subdirectories=[p for p in entries if p.is_dir()])


def directory_inputs(path: Path, kind: str, notes: list[str]) -> list[Path]:
    """A directory's `kind` files (label, prediction), the skipped documentation and code named in `notes`;
    RecordError when none is left."""
    listing = list_directory(path)
    if not listing.logs:
        raise RecordError(path, 0, None, listing.nothing_to_read(kind))
    if listing.not_logs:
        notes.append(skipped_note([p.name for p in listing.not_logs], kind))
    return listing.logs


def is_empty(path: Path) -> bool:
    """True when the file holds nothing but whitespace."""
    with open(path, "rb") as fh:
        while chunk := fh.read(_HEAD_BYTES):
            if chunk.strip():
                return False
    return True


def detect_format(path: Path) -> str | None:
    """The importer name for `path` (`canonical` for trajscope's own logs), or None (unknown or binary)."""
    path = Path(path)
    with open_input(path) as fh:
        head = fh.read(_HEAD_BYTES)
    if head.startswith(b"PK\x03\x04"):
        return "inspect" if _zip_is_inspect(path) else None
    if b"\x00" in head:
        return None
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")) and (cassette := detect_cassette(text)):
        return cassette
    if not stripped.startswith(("{", "[")):
        return "react" if _REACT_TEXT.search(text) and _REACT_ACTION.search(text) else None
    if path.suffix == ".ipynb" or (re.match(r'\s*\{\s*"cells"\s*:', text) and '"cell_type"' in text):
        return "notebook"
    if '"trajectory_id"' in text and re.search(r'"schema_version"\s*:\s*"1"', text) and looks_canonical(path):
        return "canonical"
    if re.search(r'"schema_version"\s*:\s*"ATIF', text):
        return "atif"
    if (framework := detect_framework(text)) is not None:
        return framework
    if '"child_spans"' in text and '"span_attributes"' in text:  # TRAIL-style nested span export
        return "trail"
    # Who&When writes question_ID and ground_truth before a long history and the mistake fields after it.
    if '"history"' in text and ('"mistake_step"' in text or '"mistake_agent"' in text
                                or ('"question_ID"' in text and '"ground_truth"' in text)):
        return "who_and_when"
    # Hand-crafted Who&When files may open with a history longer than the head: the mistake keys close the file.
    if '"history"' in text and _MISTAKE_KEY.search(_tail(path)):
        return "who_and_when"
    if "openinference.span.kind" in text or '"span_kind"' in text:
        return "openinference"
    if '"resourceSpans"' in text or "gen_ai.operation.name" in text:
        return "otel_genai"
    if '"eval"' in text and ('"samples"' in text or '"plan"' in text or '"results"' in text):
        return "inspect"
    if '"prompt"' in text and '"halted"' in text and '"correct"' in text and _REACT_ACTION.search(text):
        return "autoact"
    if '"trajectory"' in text and '"environment"' in text and '"action"' in text and '"observation"' in text:
        return "swe_agent"
    # Eval-harness results (tau-bench) keep the chat list under `traj`: its tool calls make it a chat log.
    if _HARNESS_CHAT.search(text) and _TOOL_CALLS.search(text) and not _REACT_ACTION.search(text):
        return "openai_chat"
    if '"traj"' in text or (_TRANSCRIPT_KEY.search(text) and _REACT_ACTION.search(text)):
        return "react"
    # Chat lists (`messages`) whose assistant turns write ReAct actions; without them a chat log is
    # not a trajectory any importer understands (a fine-tuning set, say), so it stays unknown.
    if _MESSAGES_KEY.search(text) and _REACT_ACTION.search(text):
        return "react"
    # OpenAI chat-completions records whose assistant turns call tools (`tool_calls`, `tool` turns).
    if _MESSAGES_KEY.search(text) and _TOOL_CALLS.search(text):
        return "openai_chat"
    # Chat lists whose assistant turns write their calls as text tags (Search-R1 `<search>`, Hermes `<tool_call>{`).
    if _MESSAGES_KEY.search(text) and _TEXT_CALLS.search(text):
        return "openai_chat"
    if '"trajectory"' in text and '"tool_name"' in text:
        return "arag"
    return None
