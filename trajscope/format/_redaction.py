"""Secrets out of everything written: API keys, bearer tokens, and any fragment of a configured key.

One function for every writer (the model client's errors and responses, the response cache, the run
log, the warehouse's ingest, every export and every error message): `redact` for text, `redact_json_line`
for a JSON line (strings only, so a value never changes type), `redact_bytes` for other text bytes.
"""
from __future__ import annotations

import json
import os
import re
import threading
from functools import lru_cache
from typing import Any

REDACTED = "[REDACTED]"
# The shortest run of a configured key's characters that counts as a leak of the key.
MIN_FRAGMENT = 8
# Values that are no secret: the client's placeholder when no key is set.
_PLACEHOLDERS = frozenset({"not-needed", "none", "null", "changeme"})
# Environment variables whose values are keys: *_API_KEY, *_TOKEN, *SECRET*, *PASSWORD*.
_SECRET_ENV = re.compile(r"(API_?KEY|_TOKEN$|^TOKEN$|SECRET|PASSWORD|PASSWD)", re.I)
# Well-known key shapes, found even when no key is configured here.
_KEY_SHAPES = re.compile(
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\bsk-[A-Za-z0-9_-]{16,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bAIza[0-9A-Za-z_-]{35}"
    r"|\bhf_[A-Za-z0-9]{30,}"
)
# Cheap literal markers of those shapes: text without any of them skips the regular expression.
KEY_MARKERS = ("earer", "EARER", "sk-", "AKIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "xox", "AIza", "hf_")

# A run of key characters with JSON escapes in it (\u0073k-…, \/): decoded before it is checked, so an
# escaped key is found like a plain one. No quote or backslash of its own: replacing it keeps JSON valid.
_KEY_RUN = re.compile(r'(?:\\u[0-9a-fA-F]{4}|\\/|[A-Za-z0-9._~+/=-])+')
_ESCAPE = re.compile(r'\\u([0-9a-fA-F]{4})|\\/')
# A JSON string token: what redaction may change in a JSON line (numbers, literals and syntax never).
# Possessive, and an unclosed string runs to the end of the line: a search restarting at every escaped
# quote of an unclosed string was quadratic in the line's length.
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.S)

_registered: set[str] = set()
_lock = threading.Lock()


def register_secret(value: str | None) -> None:
    """Treat value (an API key the process uses) as a secret from now on."""
    if value and len(value) >= MIN_FRAGMENT and value.lower() not in _PLACEHOLDERS:
        with _lock:
            _registered.add(value)


def configured_secrets() -> frozenset[str]:
    """Registered keys plus the values of key-named environment variables (at least MIN_FRAGMENT long)."""
    from_env = {
        value for name, value in os.environ.items()
        if _SECRET_ENV.search(name) and len(value) >= MIN_FRAGMENT and value.lower() not in _PLACEHOLDERS
    }
    with _lock:
        return frozenset(_registered | from_env)


@lru_cache(maxsize=8)
def _fragment_pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    grams = {s[i:i + MIN_FRAGMENT] for s in secrets for i in range(len(s) - MIN_FRAGMENT + 1)}
    if not grams:
        return None
    return re.compile("|".join(re.escape(g) for g in sorted(grams, key=len, reverse=True)))


def _redact_fragments(text: str, secrets: frozenset[str]) -> str:
    pattern = _fragment_pattern(secrets)
    if pattern is None:
        return text
    spans: list[tuple[int, int]] = []
    for match in pattern.finditer(text):
        start, end = match.span()
        if spans and start < spans[-1][1]:
            continue
        # Grow the match to the longest run that is still a substring of one secret.
        while end < len(text) and any(text[start:end + 1] in s for s in secrets):
            end += 1
        while start > 0 and any(text[start - 1:end] in s for s in secrets):
            start -= 1
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], REDACTED]
        last = end
    out.append(text[last:])
    return "".join(out)


def _redact_plain(text: str, secrets: frozenset[str]) -> str:
    if any(marker in text for marker in KEY_MARKERS):
        text = _KEY_SHAPES.sub(lambda m: "Bearer " + REDACTED if m.group(0)[:6].lower() == "bearer" else REDACTED,
                               text)
    return _redact_fragments(text, secrets) if secrets else text


def _unescape(run: str) -> str:
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else "/", run)


def _redact_escaped(text: str, secrets: frozenset[str]) -> str:
    """Runs written with JSON escapes whose decoded text holds a key (or a fragment) become REDACTED."""
    def one(match: re.Match[str]) -> str:
        run = match.group(0)
        if "\\" not in run:
            return run
        decoded = _unescape(run)
        return REDACTED if _redact_plain(decoded, secrets) != decoded else run
    return _KEY_RUN.sub(one, text)


def redact(text: str, secrets: frozenset[str] | None = None) -> str:
    """text with key shapes, bearer tokens and any >= 8-character fragment of a configured key replaced,
    written plainly or with JSON escapes (secrets: configured_secrets(), unless the caller read it once)."""
    if not text:
        return text
    secrets = configured_secrets() if secrets is None else secrets
    if "\\u" in text or "\\/" in text:
        text = _redact_escaped(text, secrets)
    return _redact_plain(text, secrets)


def _redact_json_string(token: str, secrets: frozenset[str]) -> str:
    """A JSON string token (quotes included), redacted on its decoded text; still one valid JSON string."""
    try:
        value = json.loads(token) if "\\" in token else token[1:-1]
    except json.JSONDecodeError:  # a bad escape: the line is refused later; redact it as text meanwhile
        return redact(token, secrets)
    cleaned = redact(value, secrets)
    if cleaned == value:
        return token
    return json.dumps(cleaned, ensure_ascii=any("\ud800" <= c <= "\udfff" for c in cleaned))


def redact_json_line(data: bytes) -> bytes:
    """redact() for a JSON line: only string values and keys change, each decoded first (escaped keys
    are found) and re-encoded, so no number, literal or structure changes and the line stays valid JSON."""
    secrets = configured_secrets()
    if not secrets and not any(marker.encode() in data for marker in KEY_MARKERS) \
            and b"\\u" not in data and b"\\/" not in data:
        return data
    text = data.decode("utf-8", "surrogateescape")
    cleaned = _JSON_STRING.sub(lambda m: _redact_json_string(m.group(0), secrets), text)
    return data if cleaned == text else cleaned.encode("utf-8", "surrogateescape")


def redact_value(value: Any, secrets: frozenset[str] | None = None) -> Any:
    """A JSON-like value (dicts, lists, strings) with redact() applied to every string, keys included."""
    # The environment is read once per value, not once per string: a response body holds dozens.
    secrets = configured_secrets() if secrets is None else secrets
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, secrets) for v in value]
    return value


def redact_bytes(data: bytes) -> bytes:
    """redact() for UTF-8 text bytes (JSON lines: redact_json_line); bytes without anything to redact are
    returned as they are."""
    secrets = configured_secrets()
    if not secrets and not any(marker.encode() in data for marker in KEY_MARKERS) \
            and b"\\u" not in data and b"\\/" not in data:
        return data
    text = data.decode("utf-8", "surrogateescape")
    cleaned = redact(text)
    return data if cleaned == text else cleaned.encode("utf-8", "surrogateescape")


def redaction_prefilter(secrets: frozenset[str] | None = None) -> str | None:
    """An RE2 pattern that matches every text redact() could change (key markers, key fragments).

    Bulk readers run it over many lines at once and call redact only on the lines it matches;
    None when no such pattern can be written (a non-ASCII key), so every line goes through redact.
    JSON escapes that may spell a key character (\\u, \\/) match too: redact decodes them.
    """
    secrets = configured_secrets() if secrets is None else secrets
    if any(not s.isascii() for s in secrets):
        return None
    grams = {s[i:i + MIN_FRAGMENT] for s in secrets for i in range(len(s) - MIN_FRAGMENT + 1)}
    return "|".join(_re2_literal(literal) for literal in sorted(set(KEY_MARKERS) | grams | {"\\u", "\\/"}))


def _re2_literal(text: str) -> str:
    # \xHH for every character that is not a letter or digit: valid in RE2 and Python alike.
    return "".join(c if c.isalnum() else f"\\x{ord(c):02x}" for c in text)


__all__ = [
    "KEY_MARKERS", "MIN_FRAGMENT", "REDACTED", "configured_secrets", "redact", "redact_bytes", "redact_json_line",
    "redact_value", "redaction_prefilter", "register_secret",
]
