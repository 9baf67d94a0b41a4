"""Writing model verdicts, clusterings and labels: validated first, then one transaction (bad input writes nothing)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import pyarrow as pa

from .._connection import open_warehouse
from .._transaction import transaction

RUBRIC_VERDICTS = ("match", "no_match", "unsure", "error")
ATTRIBUTION_VERDICTS = ("attributed", "error")
SCANNERS = {"rubric": RUBRIC_VERDICTS, "attribution": ATTRIBUTION_VERDICTS}
LABELS = ("agree", "disagree", "unsure")


def rubric_hash(text: str) -> str:
    """First 16 hex digits of the SHA-256 of the rubric text (whitespace at the ends ignored)."""
    return hashlib.sha256(text.strip().encode()).hexdigest()[:16]


def verdict_id(scanner: str, trajectory_id: str, subject: str, model: str, prompt_version: str) -> str:
    """Stable id of one verdict: a re-run of the same question to the same model replaces it."""
    blob = json.dumps([scanner, trajectory_id, subject, model, prompt_version])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class VerdictRow:
    """One verdict as stored in scan_verdicts (see the column comments of migration 0010)."""

    scanner: str
    trajectory_id: str
    record_hash: str
    model: str
    prompt_version: str
    verdict: str
    rubric_hash: str | None = None
    protocol: str | None = None
    explanation: str | None = None
    cited_steps: list[int] = field(default_factory=list)
    rejected_citations: list[str] = field(default_factory=list)
    step_index: int | None = None
    agent: str | None = None
    error: str | None = None
    token_budget: int | None = None
    truncated: bool | None = None
    n_calls: int = 1
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    cached: bool | None = None

    @property
    def verdict_id(self) -> str:
        """The row's key (verdict_id of scanner, trajectory, rubric or protocol, model, prompt version)."""
        subject = self.rubric_hash if self.scanner == "rubric" else self.protocol
        return verdict_id(self.scanner, self.trajectory_id, subject or "", self.model, self.prompt_version)


@dataclass(frozen=True)
class ClusterRow:
    """One cluster of a clustering."""

    cluster_index: int
    name: str
    description: str | None = None
    examples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MemberRow:
    """One trajectory's assignment."""

    trajectory_id: str
    record_hash: str
    cluster_index: int
    explanation: str | None = None


@dataclass
class StoreReport:
    """What a store call wrote."""

    stored: int = 0
    stale_skipped: int = 0  # re-ingested since the model read them: their verdicts would describe another record


_VERDICT_TYPES = {
    "cited_steps": pa.list_(pa.int32()), "rejected_citations": pa.list_(pa.string()), "step_index": pa.int32(),
    "token_budget": pa.int32(), "truncated": pa.bool_(), "n_calls": pa.int32(), "tokens_in": pa.int64(),
    "tokens_out": pa.int64(), "cost_usd": pa.float64(), "cached": pa.bool_(),
}


def _check(row: VerdictRow, index: int) -> None:
    where = f"verdict {index} (trajectory {row.trajectory_id!r})"
    if row.scanner not in SCANNERS:
        raise ValueError(f"{where}: field scanner: {row.scanner!r} is not one of {', '.join(SCANNERS)}")
    if row.verdict not in SCANNERS[row.scanner]:
        raise ValueError(f"{where}: field verdict: {row.verdict!r} is not one of {', '.join(SCANNERS[row.scanner])}")
    if row.scanner == "rubric" and not row.rubric_hash:
        raise ValueError(f"{where}: field rubric_hash: a rubric verdict needs its rubric")
    if row.scanner == "attribution" and not row.protocol:
        raise ValueError(f"{where}: field protocol: an attribution needs its protocol")
    if row.verdict == "error" and not row.error:
        raise ValueError(f"{where}: field error: an error verdict says why")
    if row.verdict == "attributed" and row.step_index is None:
        raise ValueError(f"{where}: field step_index: an attribution names a step")


def _fresh(con, ids_hashes: dict[str, str]) -> set[str]:
    current = dict(con.execute(
        "SELECT trajectory_id, record_hash FROM trajectories WHERE trajectory_id IN (SELECT unnest($ids))",
        {"ids": sorted(ids_hashes)}).fetchall())
    return {t for t, h in ids_hashes.items() if current.get(t) == h}


def store_verdicts(
    db_path: str | Path | None, rows: Sequence[VerdictRow], *, rubric_text: str | None = None
) -> StoreReport:
    """Replace the verdicts with these ids and store the rubric text; verdicts of re-ingested trajectories are skipped.

    Every row is checked before anything is written; a bad row raises ValueError naming it and field.
    """
    for k, row in enumerate(rows):
        _check(row, k)
    hashes = {r.rubric_hash for r in rows if r.rubric_hash}
    if rubric_text is not None and hashes - {rubric_hash(rubric_text)}:
        raise ValueError(f"rubric_hash: the verdicts' rubric {sorted(hashes)} is not the hash of the rubric text given")
    if hashes and rubric_text is None:
        raise ValueError("rubric_text: rubric verdicts are stored with their rubric's text")
    report = StoreReport()
    with open_warehouse(db_path) as con:
        fresh = _fresh(con, {r.trajectory_id: r.record_hash for r in rows})
        keep = [r for r in rows if r.trajectory_id in fresh]
        report.stale_skipped = len(rows) - len(keep)
        names = [f.name for f in fields(VerdictRow)]
        table = pa.table({
            "verdict_id": pa.array([r.verdict_id for r in keep], pa.string()),
            **{n: pa.array([getattr(r, n) for r in keep], _VERDICT_TYPES.get(n, pa.string())) for n in names},
        })
        con.register("incoming_verdicts", table)
        try:
            with transaction(con):
                if rubric_text is not None:
                    con.execute("INSERT INTO rubrics BY NAME SELECT $h AS rubric_hash, $t AS rubric_text "
                                "WHERE NOT EXISTS (SELECT 1 FROM rubrics WHERE rubric_hash = $h)",
                                {"h": rubric_hash(rubric_text), "t": rubric_text.strip()})
                con.execute("DELETE FROM scan_verdicts WHERE verdict_id IN (SELECT verdict_id FROM incoming_verdicts)")
                con.execute("INSERT INTO scan_verdicts BY NAME SELECT * FROM incoming_verdicts")
        finally:
            con.unregister("incoming_verdicts")
    report.stored = len(keep)
    return report


def store_clustering(
    db_path: str | Path | None, *, clustering_id: str, method: str, model: str | None, slice_sql: str | None,
    k: int, clusters: Sequence[ClusterRow], members: Sequence[MemberRow],
) -> StoreReport:
    """Replace one clustering (its clusters and members) in one transaction; members must name a listed cluster."""
    known = {c.cluster_index for c in clusters}
    if len(known) != len(clusters):
        raise ValueError(f"clustering {clustering_id}: field cluster_index: two clusters share an index")
    for m in members:
        if m.cluster_index not in known:
            raise ValueError(f"clustering {clustering_id}: member {m.trajectory_id!r}: field cluster_index: "
                             f"{m.cluster_index} is not a cluster of this clustering")
    report = StoreReport()
    with open_warehouse(db_path) as con:
        fresh = _fresh(con, {m.trajectory_id: m.record_hash for m in members})
        keep = [m for m in members if m.trajectory_id in fresh]
        report.stale_skipped = len(members) - len(keep)
        cluster_table = pa.table({
            "clustering_id": pa.array([clustering_id] * len(clusters), pa.string()),
            **{n: pa.array([asdict(c)[n] for c in clusters],
                           pa.int32() if n == "cluster_index" else pa.list_(pa.string()) if n == "examples"
                           else pa.string()) for n in ("cluster_index", "name", "description", "examples")},
        })
        member_table = pa.table({
            "clustering_id": pa.array([clustering_id] * len(keep), pa.string()),
            **{n: pa.array([asdict(m)[n] for m in keep], pa.int32() if n == "cluster_index" else pa.string())
               for n in ("trajectory_id", "record_hash", "cluster_index", "explanation")},
        })
        con.register("incoming_clusters", cluster_table)
        con.register("incoming_members", member_table)
        try:
            with transaction(con):
                for table in ("clusterings", "clusters", "cluster_members"):
                    con.execute(f"DELETE FROM {table} WHERE clustering_id = $id", {"id": clustering_id})
                con.execute("INSERT INTO clusterings BY NAME SELECT $id AS clustering_id, $method AS method, "
                            "$model AS model, $slice AS slice_sql, $k AS k, $n AS n_trajectories",
                            {"id": clustering_id, "method": method, "model": model, "slice": slice_sql, "k": k,
                             "n": len(keep)})
                con.execute("INSERT INTO clusters BY NAME SELECT * FROM incoming_clusters")
                con.execute("INSERT INTO cluster_members BY NAME SELECT * FROM incoming_members")
        finally:
            con.unregister("incoming_clusters")
            con.unregister("incoming_members")
    report.stored = len(keep)
    return report


def label_verdict(db_path: str | Path | None, verdict_id: str, label: str, note: str | None = None) -> None:
    """Record a person's label of one stored verdict (agree / disagree / unsure); the latest label counts."""
    if label not in LABELS:
        raise ValueError(f"field label: {label!r} is not one of {', '.join(LABELS)}")
    with open_warehouse(db_path) as con:
        exists = con.execute("SELECT count(*) FROM scan_verdicts WHERE verdict_id = ?", [verdict_id]).fetchall()[0][0]
        if not exists:
            raise LookupError(f"no verdict {verdict_id!r} in the warehouse")
        with transaction(con):
            con.execute("INSERT INTO verdict_labels BY NAME SELECT $v AS verdict_id, $l AS label, $n AS note",
                        {"v": verdict_id, "l": label, "n": note})


__all__ = ["ATTRIBUTION_VERDICTS", "LABELS", "RUBRIC_VERDICTS", "ClusterRow", "MemberRow", "StoreReport",
           "VerdictRow", "label_verdict", "rubric_hash", "store_clustering", "store_verdicts", "verdict_id"]
