"""prefetched: order, exceptions handed over in place, and a worker that stops when the consumer does."""
from __future__ import annotations

import threading
import time

import pytest

from trajscope.runtime._prefetch import prefetched


def test_items_arrive_in_order_and_are_produced_ahead():
    produced: list[int] = []

    def numbers():
        for i in range(5):
            produced.append(i)
            yield i

    seen = []
    for item in prefetched(numbers()):
        time.sleep(0.02)  # the worker gets ahead while the consumer works
        seen.append((item, len(produced)))
    assert [i for i, _ in seen] == [0, 1, 2, 3, 4]
    assert seen[0][1] >= 2  # item 1 was produced before item 0 was done with


def test_an_exception_of_the_worker_surfaces_after_the_items_before_it():
    def failing():
        yield 1
        raise ValueError("bad line 2")

    got = []
    with pytest.raises(ValueError, match="bad line 2"):
        for item in prefetched(failing()):
            got.append(item)
    assert got == [1]


def test_a_consumer_that_stops_stops_the_worker_and_closes_its_generator():
    closed = threading.Event()

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.set()

    with pytest.raises(RuntimeError):
        for item in prefetched(endless()):
            if item == 3:
                raise RuntimeError("load failed")
    assert closed.wait(2.0)
    assert not [t for t in threading.enumerate() if t.name == "trajscope-prefetch"]
