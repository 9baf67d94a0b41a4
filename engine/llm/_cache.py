"""On-disk response cache (SQLite) keyed by a hash of the full request, never of the key."""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from trajscope.format import redact_value
from trajscope.runtime import cache_dir


def request_key(request: dict[str, Any]) -> str:
    """SHA-256 of the canonical JSON of a request (model, messages, tools, schema, decoding)."""
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def default_cache_path() -> Path:
    """llm_responses.sqlite in the machine's cache folder ($TRAJSCOPE_CACHE, else ~/.cache/trajscope)."""
    return cache_dir() / "llm_responses.sqlite"


class ResponseCache:
    """A small thread-safe SQLite map from request hash to the stored response body."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")
        self._con.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, body TEXT NOT NULL)")
        self._con.commit()

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for a key, or None."""
        with self._lock:
            row = self._con.execute("SELECT body FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, body: dict[str, Any]) -> None:
        """Store a response (last writer wins)."""
        blob = json.dumps(redact_value(body), ensure_ascii=False, default=str)
        with self._lock:
            self._con.execute("INSERT OR REPLACE INTO responses (key, body) VALUES (?, ?)", (key, blob))
            self._con.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._con.execute("SELECT count(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._con.close()
