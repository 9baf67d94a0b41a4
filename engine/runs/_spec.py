"""RunSpec: every setting of one run, and the deterministic run id derived from them."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Settings that change what a run produces; concurrency, paths and display do not.
_IDENTITY_FIELDS = (
    "dataset", "controller", "condition", "model", "n", "seed", "question_ids", "params",
    "temperature", "max_tokens", "reasoning_effort", "protocol", "base_url", "retriever", "top_k",
)


@dataclass
class RunSpec:
    """One run: a controller under one condition, one model, on a seeded selection of questions."""

    dataset: str
    controller: str
    condition: str | None = None
    model: str = "local"
    n: int | None = None
    seed: int = 0
    concurrency: int = 4
    run_id: str | None = None
    out_dir: Path = Path("runs")
    db_path: Path | None = None
    params: dict[str, Any] = field(default_factory=dict)
    question_ids: list[str] | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    protocol: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; the key itself is never part of a spec
    timeout_s: float | None = None
    retriever: str = "hybrid"
    top_k: int = 5
    embedding_model: str | None = None  # any sentence-transformers name or path; default MiniLM
    cache: bool = True
    cache_path: Path | None = None
    ingest_batch: int = 8
    episode_timeout_s: float | None = None
    require_resume: bool = False
    progress: bool = True

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.db_path = Path(self.db_path) if self.db_path else None
        self.cache_path = Path(self.cache_path) if self.cache_path else None
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.n is not None and self.n < 1:
            raise ValueError("n must be at least 1")

    def identity(self) -> dict[str, Any]:
        """The settings that define the run's results (what the run id hashes)."""
        data = asdict(self)
        identity = {k: data[k] for k in _IDENTITY_FIELDS}
        if self.embedding_model:  # only when set, so default runs keep their ids
            identity["embedding_model"] = self.embedding_model
        return identity

    def resolved_run_id(self) -> str:
        """The explicit run id, else `<dataset>-<controller>-<condition>-<model>-n<N>-s<seed>-<hash8>`."""
        if self.run_id:
            return self.run_id
        blob = json.dumps(self.identity(), sort_keys=True, default=str)
        digest = hashlib.sha256(blob.encode()).hexdigest()[:8]
        dataset = Path(self.dataset).stem if ("/" in self.dataset or "." in self.dataset) else self.dataset
        model = self.model.split(":", 1)[0] if self.model.startswith("mock:") else self.model
        parts = [dataset, self.controller, self.condition or "default", model,
                 f"n{self.n if self.n is not None else 'all'}", f"s{self.seed}", digest]
        return _slug("-".join(parts))

    def log_path(self) -> Path:
        """<out_dir>/<run_id>.jsonl"""
        return self.out_dir / f"{self.resolved_run_id()}.jsonl"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_")[:160]
