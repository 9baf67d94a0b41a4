"""Producing the next item of an iterator on a worker thread while the caller works on this one."""
from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

_DONE = object()


class _Failure:
    def __init__(self, exc: BaseException):
        self.exc = exc


def prefetched(items: Iterator[T]) -> Iterator[T]:
    """Yield items, computing the next one on a thread meanwhile; its exceptions surface here, in order.

    Closing the generator early (an exception in the caller) stops the worker after its current item.
    """
    slot: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def work() -> None:
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        slot.put(item, timeout=0.05)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    break
            else:
                slot.put(_DONE)
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread as is
            slot.put(_Failure(exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:  # a generator left half-way runs its finally blocks now
                close()

    worker = threading.Thread(target=work, name="trajscope-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = slot.get()
            if item is _DONE:
                return
            if isinstance(item, _Failure):
                raise item.exc
            yield item
    finally:
        stop.set()
        while worker.is_alive():
            try:
                slot.get_nowait()
            except queue.Empty:
                pass
            worker.join(timeout=0.05)
