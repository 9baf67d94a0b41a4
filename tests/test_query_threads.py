"""The query encoder's threads follow the machine's free cores and the engine's concurrency."""
from __future__ import annotations

import pytest

import trajscope.engine.runs._inputs as inputs_module
from trajscope.engine.retrieval import DEFAULT_QUERY_THREADS, query_threads_for_load
from trajscope.engine.runs import RunSpec


@pytest.fixture(autouse=True)
def _no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRAJSCOPE_QUERY_THREADS", raising=False)


def test_idle_machine_one_episode_keeps_the_idle_default():
    assert query_threads_for_load(1, load=0.0, cores=2) == DEFAULT_QUERY_THREADS == 2


def test_two_busy_processes_on_two_cores_get_one_thread():
    # The measured case: 13.3 ms on 2 threads against 6.8 ms on 1 with two processes busy.
    assert query_threads_for_load(1, load=2.0, cores=2) == 1
    assert query_threads_for_load(1, load=1.2, cores=2) == 1


def test_many_episodes_share_the_free_cores():
    assert query_threads_for_load(32, load=0.0, cores=2) == 1
    assert query_threads_for_load(8, load=0.0, cores=16) == 2
    assert query_threads_for_load(8, load=4.0, cores=16) == 1


def test_never_more_than_the_default_and_never_zero():
    assert query_threads_for_load(1, load=0.0, cores=64) == DEFAULT_QUERY_THREADS
    assert query_threads_for_load(1, load=30.0, cores=2) == 1


def test_an_explicit_setting_wins_over_the_load(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TRAJSCOPE_QUERY_THREADS", "3")
    assert query_threads_for_load(32, load=10.0, cores=2) == 3


def test_concurrency_below_one_is_refused():
    with pytest.raises(ValueError, match="concurrency"):
        query_threads_for_load(0, load=0.0, cores=2)


def test_the_engine_passes_the_chosen_threads_to_its_retriever_once(monkeypatch: pytest.MonkeyPatch):
    asked: list[int] = []
    built: list[int | None] = []

    def choose(concurrency: int) -> int:
        asked.append(concurrency)
        return 7

    def build(chunks, **options):
        built.append(options.get("query_threads"))
        return object()

    monkeypatch.setattr(inputs_module, "query_threads_for_load", choose)
    monkeypatch.setattr(inputs_module, "build_retriever", build)
    inputs_module._query_threads.cache_clear()
    inputs_module._dataset_and_retriever.cache_clear()
    try:
        for seed in (0, 1):  # two runs of one matrix: one choice, one retriever
            inputs_module.prepare_inputs(RunSpec(dataset="demo", controller="read_gate", condition="read_gate",
                                                     concurrency=32, seed=seed))
    finally:
        inputs_module._query_threads.cache_clear()
        inputs_module._dataset_and_retriever.cache_clear()
    assert asked == [32] and built == [7]
