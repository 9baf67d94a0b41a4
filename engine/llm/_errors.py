"""The one exception the model client raises."""
from __future__ import annotations

from typing import Literal

ModelErrorKind = Literal["rate_limit", "server_error", "timeout", "connection", "bad_request", "auth", "too_large",
                         "other"]


class ModelError(RuntimeError):
    """A model call that failed after its retries; `kind` says why, `attempts` how often it was tried."""

    def __init__(self, kind: ModelErrorKind, message: str, *, status: int | None = None, attempts: int = 1):
        self.kind, self.status, self.attempts = kind, status, attempts
        super().__init__(f"{kind}{f' (HTTP {status})' if status else ''} after {attempts} attempt(s): {message}")

    @property
    def retryable(self) -> bool:
        """Whether this kind of failure is worth retrying."""
        return self.kind in ("rate_limit", "server_error", "timeout", "connection")
