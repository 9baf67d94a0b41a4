"""Clustering a slice into failure modes, two ways: propose-then-assign with a chat model (k mutually
exclusive themes, then each trajectory assigned, with "other"), and k-means over the retriever's sentence
embeddings (all-MiniLM-L6-v2, offline) of what the agent did."""
from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from trajscope.engine.llm import ModelConfig, ResponseCache
from trajscope.warehouse import DEFAULT_LIMITS, ReadLimits
from trajscope.warehouse.verdicts import ClusterRow, MemberRow, StoreReport, store_clustering

from ._inputs import read_views, select_slice
from ._render import TrajectoryView, render_trajectory
from ._session import CallTally, ask_json, model_session, run_all

METHODS = ("propose-assign", "embedding")
OTHER = "other"
PROMPT_VERSION = "cluster-v1"
SEED = 0
_WORD = re.compile(r"[a-z][a-z_]{2,}")
_STOP = frozenset("the and for with was were that this from into are not but has have had its".split())


def action_text(view: TrajectoryView) -> str:
    """What the agent did, as one line per step (kind, tool, query, answer or message): the embedded text."""
    parts = []
    for s in view.steps:
        what = s.query or s.answer or s.message or (json.dumps(s.args, default=str)[:80] if s.args else "")
        parts.append(" ".join(x for x in (s.kind.replace("_", " "), s.tool_name or "", what or "") if x))
    return "; ".join(parts) or "no steps"


@dataclass
class ClusterReport:
    """A stored clustering: its clusters and members."""

    clustering_id: str
    method: str
    model: str | None
    sql: str
    clusters: list[ClusterRow] = field(default_factory=list)
    members: list[MemberRow] = field(default_factory=list)
    stored: StoreReport | None = None
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        sizes = Counter(m.cluster_index for m in self.members)
        lines = [f"clustering {self.clustering_id} ({self.method}, {self.model}): {len(self.members)} trajectories"]
        for c in self.clusters:
            lines.append(f"  [{c.cluster_index}] {c.name} ({sizes.get(c.cluster_index, 0)}): {c.description or ''}")
        return "\n".join(lines)


def _clustering_id(method: str, model: str | None, sql: str, k: int, ids: Sequence[str]) -> str:
    blob = json.dumps([method, model, sql, k, sorted(ids)])
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


# -- embedding ------------------------------------------------------------------------------------------
def embedding_clusters(texts: Sequence[str], k: int, *, encoder: Any = None, seed: int = SEED
                       ) -> tuple[np.ndarray, np.ndarray]:
    """(labels, unit-normalised embeddings): k-means (scikit-learn, 10 starts, fixed seed) over the texts'
    sentence embeddings; the encoder defaults to the retriever's all-MiniLM-L6-v2."""
    from sklearn.cluster import KMeans

    if k < 1 or k > len(texts):
        raise ValueError(f"--k {k}: need 1 <= k <= the {len(texts)} trajectories of the slice")
    if encoder is None:
        from trajscope.engine.retrieval import load_encoder

        encoder = load_encoder()
    vectors = np.asarray(encoder.encode(list(texts), batch_size=64, show_progress_bar=False), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    labels = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(vectors)
    return labels, vectors


def _name_of(texts: Sequence[str], others: Sequence[str]) -> str:
    # The words most over-represented in the cluster against the rest of the slice.
    inside = Counter(w for t in texts for w in set(_WORD.findall(t.lower())) if w not in _STOP)
    outside = Counter(w for t in others for w in set(_WORD.findall(t.lower())) if w not in _STOP)
    score = {w: n / len(texts) - outside.get(w, 0) / max(1, len(others)) for w, n in inside.items()}
    top = sorted(score, key=lambda w: (-score[w], w))[:3]
    return " / ".join(top) or "cluster"


def _embedding(views: Sequence[TrajectoryView], k: int, encoder: Any) -> tuple[list[ClusterRow], list[MemberRow]]:
    texts = [action_text(v) for v in views]
    labels, vectors = embedding_clusters(texts, k, encoder=encoder)
    clusters = []
    for c in range(k):
        idx = np.flatnonzero(labels == c)
        centroid = vectors[idx].mean(axis=0)
        closest = idx[np.argsort(-(vectors[idx] @ centroid))][:3]
        rest = [texts[j] for j in range(len(texts)) if labels[j] != c]
        clusters.append(ClusterRow(c, _name_of([texts[j] for j in idx], rest),
                                   f"{len(idx)} trajectories; closest to the centroid: {texts[closest[0]][:160]}",
                                   [views[j].trajectory_id for j in closest]))
    members = [MemberRow(v.trajectory_id, v.record_hash, int(labels[j])) for j, v in enumerate(views)]
    return clusters, members


# -- propose, then assign -------------------------------------------------------------------------------
def _themes_schema(k: int) -> dict[str, Any]:
    theme = {"type": "object", "properties": {"name": {"type": "string"}, "description": {"type": "string"}},
             "required": ["name", "description"]}
    return {"type": "object", "properties": {"themes": {"type": "array", "items": theme, "minItems": 1,
                                                        "maxItems": k}}, "required": ["themes"]}


ASSIGN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"theme": {"type": "string"}, "explanation": {"type": "string"}},
    "required": ["theme", "explanation"],
}
SYSTEM = ("You sort failed trajectories of a question-answering agent into failure modes. Reply with one JSON "
          "object and nothing else.")


def propose_messages(summaries: Sequence[str], k: int) -> list[dict[str, str]]:
    """One call: the slice's summaries, and k mutually exclusive failure themes asked for."""
    listing = "\n".join(f"({n}) {s}" for n, s in enumerate(summaries, 1))
    user = (f"Trajectories:\n{listing}\n\nPropose at most {k} mutually exclusive failure themes that cover them. "
            'Answer with JSON: {"themes": [{"name": "short name", "description": "one sentence"}]}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def assign_messages(themes: Sequence[ClusterRow], rendered: str) -> list[dict[str, str]]:
    """One call per trajectory: the themes (and other) and the trajectory."""
    listing = "\n".join(f"- {t.name}: {t.description}" for t in themes)
    user = (f"Failure themes:\n{listing}\n- {OTHER}: fits none of the above\n\nTrajectory:\n{rendered}\n\n"
            'Which theme does it belong to? Answer with JSON: {"theme": "one name from the list", '
            '"explanation": "one sentence"}')
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def parse_themes(reply: dict[str, Any] | None, k: int) -> list[ClusterRow]:
    """The proposed themes, distinct by name and not named other, at most k; ValueError when none is usable."""
    raw = reply.get("themes") if isinstance(reply, dict) else None
    themes: list[ClusterRow] = []
    for item in raw if isinstance(raw, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"].strip()
        if name and name.lower() != OTHER and name.lower() not in {t.name.lower() for t in themes}:
            description = item.get("description") if isinstance(item.get("description"), str) else None
            themes.append(ClusterRow(len(themes), name, description))
    if not themes:
        raise ValueError(f"the model proposed no usable theme: {json.dumps(reply)[:300]}")
    return themes[:k]


async def _propose_assign(model: Any, views: Sequence[TrajectoryView], k: int, budget: int, concurrency: int,
                          summaries: Sequence[str], progress: bool) -> tuple[list[ClusterRow], list[MemberRow],
                                                                            list[str]]:
    tally = CallTally()
    reply, error = await ask_json(model, propose_messages(summaries, k), _themes_schema(k), tally)
    if reply is None:
        raise ValueError(f"proposing themes: {error}")
    themes = parse_themes(reply, k)
    other = ClusterRow(len(themes), OTHER, "fits none of the proposed themes (or the reply named none of them)")
    by_name = {t.name.lower(): t.cluster_index for t in themes}
    errors: list[str] = []

    async def one(view: TrajectoryView) -> MemberRow:
        answer, problem = await ask_json(model, assign_messages(themes, render_trajectory(view, budget).text),
                                         ASSIGN_SCHEMA, CallTally())
        if answer is None:
            errors.append(f"{view.trajectory_id}: {problem}")
            return MemberRow(view.trajectory_id, view.record_hash, other.cluster_index, f"error: {problem}"[:300])
        name = str(answer.get("theme", "")).strip().lower()
        why = answer.get("explanation") if isinstance(answer.get("explanation"), str) else None
        if name not in by_name and name != OTHER:
            why = f"named {answer.get('theme')!r}, not a proposed theme; {why or ''}".strip("; ")
        return MemberRow(view.trajectory_id, view.record_hash, by_name.get(name, other.cluster_index), why)

    members = await run_all(views, one, concurrency=concurrency, desc="assign themes", progress=progress)
    clusters = []
    for c in [*themes, other]:
        examples = [m.trajectory_id for m in members if m.cluster_index == c.cluster_index][:3]
        clusters.append(ClusterRow(c.cluster_index, c.name, c.description, examples))
    return clusters, members, errors


def _summaries(views: Sequence[TrajectoryView], db_path: str | Path | None, limits: ReadLimits) -> list[str]:
    # The rubric explanations when the trajectories have some (what the model already said of each), else
    # the question, final answer and actions.
    from trajscope.warehouse import open_read

    with open_read(db_path, limits=limits) as con:
        found = dict(con.execute(
            "SELECT trajectory_id, arg_max(explanation, created_at) FROM rubric_verdicts "
            "WHERE trajectory_id IN (SELECT unnest($ids)) AND explanation IS NOT NULL GROUP BY ALL",
            {"ids": [v.trajectory_id for v in views]}).fetchall())
    return [found.get(v.trajectory_id) or
            f"Q: {v.question[:150]} | gold: {v.gold} | final: {v.final_answer} | did: {action_text(v)[:300]}"
            for v in views]


def cluster(db_path: str | Path | None, runs: Sequence[str], method: str, k: int, *, config: ModelConfig | None = None,
            where: str | None = None, limit: int | None = None, cache: ResponseCache | None = None,
            concurrency: int = 8, token_budget: int = 1000, encoder: Any = None, progress: bool = False,
            limits: ReadLimits = DEFAULT_LIMITS) -> ClusterReport:
    """`trajscope cluster`: cluster the slice by `method`, store the clustering (named, described, examples)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    if k < 1:
        raise ValueError("--k must be at least 1")
    sql, ids = select_slice(db_path, runs, where, limit, limits=limits)
    views = read_views(db_path, ids, limits=limits)
    if not views:
        raise ValueError(f"no trajectory of {', '.join(runs)} matches the slice; nothing to cluster")
    if method == "embedding":
        model_name = "all-MiniLM-L6-v2"
        clusters, members = _embedding(views, k, encoder)
        errors: list[str] = []
    else:
        if config is None:
            raise ValueError("propose-assign needs a chat model (--model)")
        model_name = config.name
        summaries = _summaries(views, db_path, limits)

        async def go():
            async with model_session(config, cache) as model:
                return await _propose_assign(model, views, k, token_budget, concurrency, summaries, progress)

        clusters, members, errors = asyncio.run(go())
    clustering_id = _clustering_id(method, model_name, sql, k, ids)
    report = ClusterReport(clustering_id, method, model_name, sql, clusters, members, errors=errors)
    report.stored = store_clustering(db_path, clustering_id=clustering_id, method=method, model=model_name,
                                     slice_sql=sql, k=k, clusters=clusters, members=members)
    return report


__all__ = ["ASSIGN_SCHEMA", "METHODS", "OTHER", "PROMPT_VERSION", "ClusterReport", "action_text", "assign_messages",
           "cluster", "embedding_clusters", "parse_themes", "propose_messages"]
