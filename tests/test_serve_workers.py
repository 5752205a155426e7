"""``factledger serve --workers 2``: real server processes on one port, sharing what a request
changes through the database (ADR 0039): rate limits, replays, console sessions; a worker
killed with -9 is replaced while the other keeps answering.

A request is sent to a chosen worker over a kept-alive connection that ``/healthz`` says that
worker accepted (its ``worker`` is the answering process's id); the same connection is asked
again afterwards, so each check knows which process answered.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest
from processes import run_cli, spawn_cli, wait_until
from test_examples import clean_env, embedded_server_pid, free_port, start, stop

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

RATE_LIMIT = 20  # requests a minute per key: the budget both workers must share


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], str, Any]]:
    """``serve --workers 2`` with its own embedded PostgreSQL: (environment, URL, the process)."""
    home = tmp_path_factory.mktemp("workers") / "home"
    port = free_port()
    env = clean_env(home, FACTLEDGER_PORT=str(port), FACTLEDGER_RATE_LIMIT=str(RATE_LIMIT))
    proc = spawn_cli(env, "serve", "--workers", "2")
    url = f"http://127.0.0.1:{port}"
    try:
        start(proc, url, timeout=240)
        wait_until(lambda: len(workers_of(proc)) == 2, timeout=120, what="two worker processes")
        yield env, url, proc
    finally:
        stop(proc)
        wait_until(lambda: embedded_server_pid(home) is None, timeout=60, what="the embedded server to stop")


def workers_of(proc: Any) -> set[int]:
    """The ids of the server's worker processes (uvicorn's children that are not its helpers)."""
    workers = set()
    for child in psutil.Process(proc.pid).children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(child.cmdline()):
                workers.add(child.pid)
        except psutil.Error:  # ended meanwhile
            continue
    return workers


def worker_of(client: httpx.Client) -> int:
    answer = client.get("/healthz")
    assert answer.status_code == 200, answer.text
    return int(answer.json()["worker"])


@contextmanager
def on_worker(url: str, pid: int, timeout: float = 60) -> Iterator[httpx.Client]:
    """A client whose one kept-alive connection the worker ``pid`` accepted; checked again at the end."""
    deadline = time.monotonic() + timeout
    while True:
        client = httpx.Client(base_url=url, timeout=60, limits=httpx.Limits(max_connections=1))
        if worker_of(client) == pid:
            break
        client.close()
        assert time.monotonic() < deadline, f"no connection reached worker {pid}"
    try:
        yield client
        assert worker_of(client) == pid, "the connection moved to another worker: the check proves nothing"
    finally:
        client.close()


def two_workers(url: str, proc: Any) -> tuple[int, int]:
    """Two workers that answer (seen through /healthz, on new connections)."""
    seen: set[int] = set()
    wait_until(lambda: seen.add(worker_of(httpx.Client(base_url=url))) or len(seen) >= 2, 60, "two answering pids")
    assert seen <= workers_of(proc), (seen, workers_of(proc))
    first, second = sorted(seen)[:2]
    return first, second


def key(env: dict[str, str], scope: str = "write") -> dict[str, str]:
    token = run_cli(env, "keys", "create", "--tenant", "acme", "--scope", scope, "--json").stdout
    return {"Authorization": f"Bearer {re.search(r'flk_[A-Za-z0-9_-]+', token).group(0)}"}  # type: ignore[union-attr]


def test_two_worker_processes_answer_on_one_port(served: tuple[dict[str, str], str, Any]) -> None:
    _, url, proc = served
    first, second = two_workers(url, proc)
    assert first != second and {first, second} == workers_of(proc)
    assert proc.pid not in (first, second)  # the supervisor answers nothing itself


def test_the_rate_limit_is_one_budget_across_workers(served: tuple[dict[str, str], str, Any]) -> None:
    env, url, proc = served
    first, second = two_workers(url, proc)
    headers = key(env)
    statuses: list[int] = []
    started = time.monotonic()
    with on_worker(url, first) as a, on_worker(url, second) as b:
        for turn in range(2 * RATE_LIMIT + 10):  # alternately: each worker alone would allow RATE_LIMIT
            statuses.append((a if turn % 2 else b).get("/v1/users/nobody/profile", headers=headers).status_code)
    refilled = (time.monotonic() - started) * RATE_LIMIT / 60
    allowed = sum(s != 429 for s in statuses)
    assert set(statuses) <= {200, 429}, statuses
    assert RATE_LIMIT <= allowed <= RATE_LIMIT + refilled + 1, (allowed, refilled, statuses)
    assert statuses[:RATE_LIMIT] == [200] * RATE_LIMIT  # the first went through (unknown user: 200)


def test_a_replay_started_through_one_worker_is_followed_through_the_other(
    served: tuple[dict[str, str], str, Any],
) -> None:
    env, url, proc = served
    first, second = two_workers(url, proc)
    writer, admin = key(env), key(env, "admin")
    with on_worker(url, first) as a:
        for n in range(3):
            said = a.post("/v1/users/ann/messages", json={"message": f"I live in Lyon {n}"}, headers=writer)
            assert said.status_code == 201, said.text
        started = a.post("/v1/ledgers/again/replay", json={"extractor": "offline"}, headers=admin)
        assert started.status_code == 202, started.text
    seen: dict[str, Any] = {}

    def finished_there() -> bool:
        with on_worker(url, second) as b:
            seen.update(b.get("/v1/ledgers/again/replay", headers=admin).json())
        return seen.get("state") == "finished"

    wait_until(finished_there, timeout=120, what="the replay to finish, seen through the other worker")
    assert seen["started_at"] == started.json()["started_at"]
    assert seen["processed"] == seen["total"] >= 1 and seen["report"]["finished"] is True
    with on_worker(url, second) as b:  # one running replay per ledger, whichever worker is asked
        again = b.post("/v1/ledgers/again/replay", json={"extractor": "offline"}, headers=admin)
        assert again.status_code == 202, again.text


def test_a_console_session_signed_in_on_one_worker_works_on_the_other(
    served: tuple[dict[str, str], str, Any],
) -> None:
    env, url, proc = served
    first, second = two_workers(url, proc)
    token = key(env)["Authorization"].removeprefix("Bearer ")
    with on_worker(url, first) as a:
        form = a.get("/console/sign-in")
        csrf = re.search(r'name="csrf" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
        done = a.post("/console/sign-in", data={"csrf": csrf, "key": token, "next": "/console/users"})
        assert done.status_code == 303, done.text
        cookies = dict(a.cookies)
    with on_worker(url, second) as b:
        b.cookies.update(cookies)
        page = b.get("/console/users")
        assert page.status_code == 200 and 'name="csrf"' in page.text, page.text[:500]
        b.cookies.clear()
        signed_out = b.get("/console/users")  # without the cookie: sent to sign in
        assert signed_out.status_code == 303


def test_a_worker_killed_with_9_is_replaced_and_the_other_keeps_answering(
    served: tuple[dict[str, str], str, Any],
) -> None:
    _, url, proc = served
    victim, survivor = two_workers(url, proc)
    with on_worker(url, survivor) as b:
        os.kill(victim, signal.SIGKILL)
        wait_until(lambda: not psutil.pid_exists(victim) or psutil.Process(victim).status() == "zombie", 30, "death")
        for _ in range(5):  # the other answers all along
            assert worker_of(b) == survivor
    for _ in range(5):  # and every new connection is answered
        assert httpx.get(f"{url}/healthz", timeout=30).status_code == 200
    wait_until(lambda: len(workers_of(proc) - {victim}) == 2, timeout=120, what="a new worker in the dead one's place")
    assert proc.poll() is None


def test_workers_need_postgresql(tmp_path: Path) -> None:
    env = clean_env(tmp_path / "home", FACTLEDGER_BACKEND="memory")
    refused = run_cli(env, "serve", "--workers", "2", expect=None, timeout=60)
    assert refused.returncode != 0 and "--workers needs PostgreSQL" in refused.stderr
