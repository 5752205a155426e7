"""The tables the server processes share (ADR 0039), on the real PostgreSQL: one bucket charged
from many threads at once (each its own connection) grants exactly its capacity; a replay job
is claimed once, and again only after it ended or its process stopped beating."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from factledger.infrastructure.bootstrap import prepare_database, startup_lock
from factledger.infrastructure.server_state import ServerState, SharedRateLimiter, SharedReplayJobs

pytestmark = [pytest.mark.postgres, pytest.mark.pg_only]


@pytest.fixture
def state(pg_uri: str, schema: str) -> Iterator[ServerState]:
    with startup_lock(pg_uri) as conn:  # as open_server_state does: the schema first
        prepare_database(conn, schema)
    shared = ServerState(pg_uri, schema)
    try:
        yield shared
    finally:
        shared.close()


def test_concurrent_charges_of_one_bucket_grant_its_capacity_once(state: ServerState) -> None:
    limiter = SharedRateLimiter(state, per_minute=6, kind="key")  # refills one every 10 s: none during the test
    with ThreadPoolExecutor(8) as pool:
        waits = list(pool.map(lambda _: limiter.charge("k1"), range(40)))
    assert sum(w == 0 for w in waits) == 6
    assert all(0 < w <= 10 for w in waits if w)
    assert limiter.wait("k1") > 0 and limiter.wait("k2") == 0  # another key has its own bucket
    assert limiter.charge("k1", cost=7) > 0  # more than a full bucket is refused, nothing taken


def test_a_replay_job_is_claimed_once_until_it_ends_or_its_process_stops_beating(state: ServerState) -> None:
    jobs = SharedReplayJobs(state, stale_s=1.0)
    first = jobs.claim("acme", "v2")
    assert first is not None and first["state"] == "running"
    assert jobs.claim("acme", "v2") is None  # one running replay per ledger
    assert jobs.claim("other", "v2") is not None  # another tenant's ledger is another job
    jobs.record("acme", "v2", processed=3, total=9)
    assert jobs.get("acme", "v2") == {**first, "processed": 3, "total": 9}
    time.sleep(1.5)  # no beat: its process died
    assert jobs.get("acme", "v2")["state"] == "interrupted"  # type: ignore[index]
    again = jobs.claim("acme", "v2")
    assert again is not None and again["processed"] == 0
    jobs.record("acme", "v2", state="finished", report={"finished": True}, error=None)
    assert jobs.get("acme", "v2")["report"] == {"finished": True}  # type: ignore[index]
    assert jobs.claim("acme", "v2") is not None  # ended: may be started again (it resumes)
