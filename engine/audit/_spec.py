"""AuditSpec: every setting of one audit cell, and the deterministic audit id derived from them."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from trajscope.format import F1_RULES

from ._interventions import PLACEBO_SEED
from ._pipelines import COMPILE_DECODING, READER_DECODING, VERIFY_BASELINES, Decoding

# Settings that change what an audit produces; concurrency, paths and display do not.
_IDENTITY_FIELDS = (
    "dataset", "compiler_a", "compiler_b", "reader", "n", "seed", "question_ids", "verify_modes",
    "sentinel_baselines", "retriever", "top_k", "compile_decoding", "reader_decoding", "placebo_seed",
)
B1_SOURCES = ("contexts", "retriever")


@dataclass
class AuditSpec:
    """One audit: compilers A and B, a reader, a dataset sample, the baselines and the sentinel panel's scope."""

    dataset: str
    compiler_a: str = "local"
    compiler_b: str = "local"
    reader: str = "local"
    n: int | None = None
    seed: int = 0
    question_ids: list[str] | None = None
    cell: str | None = None
    audit_id: str | None = None
    # B4 variants to run: hard rewrite (b4), soft annotation (b4s), label-only (b4lr).
    verify_modes: tuple[str, ...] = ("hard",)
    # Compiled baselines whose ans_in_compile = 1 contexts get the whole sentinel panel (the rest: [MASK] only).
    sentinel_baselines: tuple[str, ...] = ("b2",)
    # B1 for datasets without per-question paragraphs: the top_k passages of this retriever.
    retriever: str = "bm25"
    # "contexts": a question's own paragraphs when the dataset has them; "retriever": always the
    # retriever's top_k, so B1 can miss the gold as a real retrieval does (the demo's 0->0 bucket).
    b1_source: str = "contexts"
    top_k: int = 10
    # The reader F1's rule (trajscope.format.token_f1): SQuAD's, or HotpotQA's official one, where a yes / no
    # answer scores 0 unless both sides agree ("yes it is" against "yes": 0, not SQuAD's 0.5).
    f1_rule: str = "squad"
    # AP §14: also compile b2 and b3 with the question withheld (contexts b2_blind, b3_blind; not read),
    # so the question-blind containment table (Table 10) needs no imported records.
    question_blind: bool = False
    compile_decoding: Decoding = COMPILE_DECODING
    reader_decoding: Decoding = READER_DECODING
    placebo_seed: int = PLACEBO_SEED
    concurrency: int = 4
    out_dir: Path = Path("runs")
    db_path: Path | None = None
    cache: bool = True
    cache_path: Path | None = None
    base_url: str | None = None
    timeout_s: float | None = None
    progress: bool = True
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.db_path = Path(self.db_path) if self.db_path else None
        self.cache_path = Path(self.cache_path) if self.cache_path else None
        self.verify_modes = tuple(self.verify_modes)
        self.sentinel_baselines = tuple(self.sentinel_baselines)
        unknown = [m for m in self.verify_modes if m not in VERIFY_BASELINES]
        if unknown:
            raise ValueError(f"unknown verification mode(s) {', '.join(unknown)}; choose from "
                             f"{', '.join(VERIFY_BASELINES)}")
        if self.f1_rule not in F1_RULES:
            raise ValueError(f"unknown f1_rule {self.f1_rule!r}; choose from {', '.join(F1_RULES)}")
        if self.b1_source not in B1_SOURCES:
            raise ValueError(f"unknown b1_source {self.b1_source!r}; choose from {', '.join(B1_SOURCES)}")
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if self.n is not None and self.n < 1:
            raise ValueError("n must be at least 1")

    @property
    def compiled_baselines(self) -> tuple[str, ...]:
        """b2, b3 and one b4 variant per verification mode."""
        return ("b2", "b3", *(VERIFY_BASELINES[m] for m in self.verify_modes))

    def identity(self) -> dict[str, object]:
        """The settings that define the audit's results (what the audit id hashes)."""
        data = asdict(self)
        identity = {k: data[k] for k in _IDENTITY_FIELDS}
        if self.b1_source != "contexts":  # only when set, so existing audits keep their ids
            identity["b1_source"] = self.b1_source
        if self.f1_rule != "squad":
            identity["f1_rule"] = self.f1_rule
        if self.question_blind:
            identity["question_blind"] = True
        return identity

    def resolved_audit_id(self) -> str:
        """The explicit id, else `audit-<dataset>-<reader>-n<N>-s<seed>-<hash8>`."""
        if self.audit_id:
            return self.audit_id
        blob = json.dumps(self.identity(), sort_keys=True, default=str)
        digest = hashlib.sha256(blob.encode()).hexdigest()[:8]
        dataset = Path(self.dataset).stem if ("/" in self.dataset or "." in self.dataset) else self.dataset
        reader = self.reader.split(":", 1)[0] if self.reader.startswith("mock:") else self.reader
        n = self.n if self.n is not None else "all"
        return re.sub(r"[^A-Za-z0-9_.+-]+", "_", f"audit-{dataset}-{reader}-n{n}-s{self.seed}-{digest}")[:160]

    def resolved_cell(self) -> str:
        """The cell label the tables group by: the explicit one, else the audit id."""
        return self.cell or self.resolved_audit_id()

    def log_path(self) -> Path:
        """<out_dir>/<audit_id>.jsonl"""
        return self.out_dir / f"{self.resolved_audit_id()}.jsonl"


__all__ = ["AuditSpec"]
