"""``each_at_once``: several users' work on threads, results in order, the first error once all have ended."""

from __future__ import annotations

import threading
import time

import pytest

from factledger.application.at_once import each_at_once


def test_results_come_back_in_the_order_of_the_items_while_calls_overlap() -> None:
    running, most = [0], [0]
    lock = threading.Lock()

    def call(item: int, stop: threading.Event) -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05 * (5 - item))  # the first items end last
        with lock:
            running[0] -= 1
        return item * 10

    assert each_at_once(call, [1, 2, 3, 4], 4) == [10, 20, 30, 40]
    assert most[0] >= 2


def test_a_failure_stops_the_others_and_is_raised_once_every_call_has_ended() -> None:
    started, ended = [], []

    def call(item: int, stop: threading.Event) -> int:
        started.append(item)
        if item == 0:
            raise ValueError("item 0 is bad")
        for _ in range(100):  # a call with several steps looks at ``stop`` between them
            if stop.is_set():
                break
            time.sleep(0.01)
        ended.append(item)
        return item

    with pytest.raises(ValueError, match="item 0"):
        each_at_once(call, list(range(20)), 2)
    assert sorted(ended) == sorted(i for i in started if i != 0), "every call that started has ended"
    assert len(started) < 20, "calls not started when the failure came are never started"


def test_one_worker_runs_here() -> None:
    here = threading.get_ident()
    assert each_at_once(lambda item, stop: threading.get_ident() == here, [1, 2], 1) == [True, True]
