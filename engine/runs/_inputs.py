"""Resolving a RunSpec into the objects an episode needs: questions, corpus, controller, retriever."""
from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from trajscope.engine.controllers import get_controller
from trajscope.engine.environment import ToolEnvironment
from trajscope.engine.retrieval import build_retriever, query_threads_for_load
from trajscope.format import Chunk, Question
from trajscope.ingest.datasets import load_dataset

from ._context import Controller
from ._spec import RunSpec


@dataclass
class RunInputs:
    """Everything a run consumes besides the model; tests and benchmarks build one directly."""

    dataset_name: str
    questions: Sequence[Question]
    corpus: Mapping[str, Chunk]
    controller: Controller
    retriever: Any = None
    make_environment: Callable[..., Any] = field(default=lambda **_: None)
    retriever_settings: dict[str, Any] = field(default_factory=dict)
    # Fields of the run record set by the caller (a fork run's intervention and parent); `config` merges.
    run_fields: dict[str, Any] = field(default_factory=dict)


@functools.cache
def _query_threads(concurrency: int) -> int:
    # Once per engine start (process) and concurrency: the load average read when the first run starts
    # decides, so the runs of one matrix share one retriever instead of rebuilding it as the load moves.
    return query_threads_for_load(concurrency)


@functools.lru_cache(maxsize=4)
def _dataset_and_retriever(dataset: str, kind: str, top_k: int, embedding_model: str | None = None,
                           query_threads: int | None = None) -> tuple[Any, dict[str, Chunk], Any]:
    # Shared across the runs of one matrix: loading the corpus and the encoder once is what matters.
    loaded = load_dataset(dataset)  # a path, or a known name such as "demo"
    corpus = {c.chunk_id: c for c in loaded.chunks}
    return loaded, corpus, build_retriever(loaded.chunks, kind=kind, top_k=top_k,  # type: ignore[arg-type]
                                           embedding_model=embedding_model, query_threads=query_threads)


def _retriever_settings(spec: RunSpec, retriever: Any) -> dict[str, Any]:
    # The retriever reports what it really is (fusion k, embedding model); the spec fills the rest.
    reported = msgspec.structs.asdict(retriever.settings()) if hasattr(retriever, "settings") else {}
    return {"kind": spec.retriever, "top_k": spec.top_k,
            **{k: v for k, v in reported.items() if v is not None}}


def prepare_inputs(spec: RunSpec) -> RunInputs:
    """Load the dataset, build the retriever and the environment factory, and get the controller."""
    dataset, corpus, retriever = _dataset_and_retriever(spec.dataset, spec.retriever, spec.top_k,
                                                        spec.embedding_model, _query_threads(spec.concurrency))
    env_defaults = {"top_k": spec.top_k}

    def make_environment(**overrides: Any) -> Any:
        return ToolEnvironment(corpus, retriever, **{**env_defaults, **overrides})

    return RunInputs(
        dataset_name=dataset.name,
        questions=dataset.questions,
        corpus=corpus,
        controller=get_controller(spec.controller, spec.condition, **spec.params),
        retriever=retriever,
        make_environment=make_environment,
        retriever_settings=_retriever_settings(spec, retriever),
    )
