"""Work for several users at once, on threads (ADR 0024): for calls that wait on an LLM."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def each_at_once(call: Callable[[T, threading.Event], R], items: Sequence[T], workers: int) -> list[R]:
    """``call(item, stop)`` for every item, on up to ``workers`` threads, each in a copy of the
    caller's context (so its calls are attributed as the caller's would be); the results in
    the order of ``items``.

    When a call raises, ``stop`` is set (the others end at their next step), the calls not
    started are never started, and once every call has ended the first error, in the order
    of ``items``, is raised. An interrupt of the caller does the same.
    """
    stop = threading.Event()
    if workers <= 1 or len(items) <= 1:
        return [call(item, stop) for item in items]

    def run(item: T) -> R:
        try:
            return call(item, stop)
        except BaseException:
            stop.set()
            raise

    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(items))), thread_name_prefix="factledger")
    try:
        futures = [pool.submit(contextvars.copy_context().run, run, item) for item in items]
        wait(futures, return_when=FIRST_EXCEPTION)
        if stop.is_set():
            for future in futures:
                future.cancel()
    except BaseException:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    for future in futures:
        failure = None if future.cancelled() else future.exception()
        if failure is not None:
            raise failure
    return [future.result() for future in futures]
