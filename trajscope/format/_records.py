"""Canonical records shared by engine, importers and warehouse: questions, chunks, runs, judgments."""
from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

SCHEMA_VERSION: Final = "1"

JudgeName = Literal["em", "f1", "contain", "llm"]
# loop_cap / context_budget: an answer forced at the loop (turn) cap or at the context budget;
# budget / forced_answer: forced for a reason the log does not say (older engine logs, importers).
EndReason = Literal["final", "budget", "forced_answer", "loop_cap", "context_budget", "error"]
GoldMatch = Literal["given", "title", "fingerprint", "unmatched"]
# Where the reasoning order of gold_chunk_ids comes from: MuSiQue's question_decomposition, 2Wiki's
# evidence triples, HotpotQA's supporting_facts, or a writer that lists its gold chain in order (the
# demo set). None: no order is stated, and the evidence funnel orders hops by first appearance.
GoldOrder = Literal["decomposition", "evidence", "supporting_facts", "chain"]


class Record(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, omit_defaults=False):
    """Base for canonical records: strict (unknown fields are errors), keyword-only."""


class GoldHop(Record, kw_only=True):
    """One gold passage as a hop of the question: the entity a query names it by, and what it yields."""

    chunk_id: str
    # The bridge entity: the name a query for this hop would use (2Wiki: the triple's subject; MuSiQue:
    # the answer of the hop before). None when the dataset names none (then only the title counts).
    entity: str | None = None
    # The entities this hop yields (2Wiki: the triples' objects; MuSiQue: the sub-question's answer).
    answers: list[str] = []


class Question(Record, kw_only=True):
    """One question with its golds; question_id is the pairing key across conditions."""

    question_id: str
    text: str
    dataset: str | None = None
    gold_answer: str | None = None
    aliases: list[str] = []
    question_type: str | None = None
    hop_count: int | None = None
    gold_chunk_ids: list[str] = []
    gold_match: GoldMatch | None = None
    # Supporting paragraphs the source names, matched to a chunk or not (ExecutionRAG App. E's recall
    # denominator); gold_chunk_ids holds the matched ones. None when the source counts none.
    gold_paragraphs: int | None = None
    gold_order: GoldOrder | None = None
    # One per gold chunk, in gold_chunk_ids' order, where the dataset names hop entities; [] otherwise.
    gold_hops: list[GoldHop] = []
    # Context paragraphs the dataset marks as not supporting (HotpotQA / 2Wiki context minus supporting facts,
    # MuSiQue is_supporting: false), as chunks: decoys by the source's own mark. [] when it marks none.
    distractor_chunk_ids: list[str] = []


class Chunk(Record, kw_only=True):
    """One corpus passage that search and read refer to by chunk_id."""

    chunk_id: str
    text: str
    dataset: str | None = None
    title: str | None = None


class ModelSettings(Record, kw_only=True):
    """Decoding settings of the agent model."""

    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    protocol: Literal["tools", "json"] | None = None
    base_url: str | None = None
    max_reply_mb: float | None = None  # the byte cap each model reply was read under
    deadline_s: float | None = None  # the deadline of each model request, headers to last byte


class RetrieverSettings(Record, kw_only=True):
    """Retriever configuration used by the run."""

    kind: str | None = None
    top_k: int | None = None
    rrf_k: int | None = None
    embedding_model: str | None = None
    bm25_k1: float | None = None
    bm25_b: float | None = None


class Capabilities(Record, kw_only=True):
    """What a run's log can be measured on; None means unknown (a measure needing it does not apply)."""

    search_candidates: bool | None = None  # search steps list candidate chunk ids
    snippets: bool | None = None  # candidates or search observations carry snippet text
    read_action: bool | None = None  # a read opens a full passage (not a look-up inside an opened page)
    gold_answers: bool | None = None
    gold_passages: bool | None = None
    judgments: bool | None = None  # the source log carries verdicts of its own
    declared: list[str] = []  # capabilities a user or mapping stated; the rest were inferred
    reasons: dict[str, str] = {}  # capability -> why it holds or not, shown beside any NULL measure


CAPABILITY_NAMES = ("search_candidates", "snippets", "read_action", "gold_answers", "gold_passages", "judgments")


class Run(Record, kw_only=True):
    """Settings of the run that produced a trajectory; identical for every trajectory of one run."""

    run_id: str
    source: str = "engine"
    dataset: str | None = None
    controller: str | None = None
    condition: str | None = None
    intervention: str | None = None
    model: str | None = None
    model_settings: ModelSettings = msgspec.field(default_factory=ModelSettings)
    retriever: RetrieverSettings = msgspec.field(default_factory=RetrieverSettings)
    seed: int | None = None
    code_version: str | None = None
    started_at: str | None = None
    config: dict[str, Any] = {}
    capabilities: Capabilities | None = None  # None: not recorded by the writer; inferred at load
    # A fork run (trajscope fork): the run its trajectories branched off; each child's Trajectory.fork
    # names its own parent trajectory, step and intervention.
    forked_from: str | None = None


class Judgment(Record, kw_only=True):
    """One verdict on the final answer: em / f1 / contain as scores in [0, 1], llm as a verdict."""

    judge: JudgeName
    score: float
    judge_model: str | None = None
    rationale: str | None = None


class RegisterEvent(Record, kw_only=True):
    """A requirement-register transition (ExecutionRAG): item status change, note, evidence."""

    item_id: str
    step_index: int | None = None
    sub_question: str | None = None
    from_status: str | None = None
    to_status: str | None = None
    note: str | None = None
    reason: str | None = None
    supporting_chunk_ids: list[str] = []


HumanLabelKind = Literal["error", "correct", "neutral"]


class HumanLabel(Record, kw_only=True):
    """A person's judgment of one step: `error` (a mistake there; the first is the first error), `correct`
    or `neutral` (a +1 / 0 of a per-step map). `source_ref` is where the annotator pointed in the source;
    `step_index` the canonical step it resolved to (None when it points at no step)."""

    label: HumanLabelKind = "error"
    source_ref: str | None = None
    step_index: int | None = None
    category: str | None = None  # a taxonomy label (normalised, e.g. TRAIL's 21), None when the source gives none
    category_raw: str | None = None  # the category as the source spelt it
    impact: str | None = None  # the source's severity (TRAIL: LOW / MEDIUM / HIGH)
    agent: str | None = None  # the agent the annotator held responsible (Who&When mistake_agent)
    annotator: str | None = None
    source: str | None = None  # which annotation set (who_and_when, trail, a label file's name)
    reason: str | None = None  # the annotator's explanation
    evidence: str | None = None  # the excerpt the annotator quoted


class LabelledTrajectory(Record, kw_only=True):
    """Human labels a label file gives for one trajectory, named by its trajectory id, question id or
    trace id (`key`), within `run_id` when given; `origin` is where the file gave them (file:line)."""

    key: str
    run_id: str | None = None
    labels: list[HumanLabel] = []
    origin: str | None = None
