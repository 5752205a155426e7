"""The call log holds a message's readings for its save: they commit with its events, and
nothing is lost when no save takes them (a failed or rolled-back save, a call made for no message)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from eventsourcing.persistence import IntegrityError
from fake_openai import EXAMPLE, FakeOpenAI
from psycopg.sql import SQL, Identifier

from factledger.application.calls import calls_for
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.event_store import LedgerRecorder
from factledger.infrastructure.llm import UsageLog
from factledger.infrastructure.llm.usage import CallRecord

pytestmark = pytest.mark.pg_only


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def service(settings: Settings, fake: FakeOpenAI) -> Iterator[LedgerService]:
    llm = attrs.evolve(
        settings,
        openai_api_key="test",
        openai_base_url=fake.url + "/v1",
        embedding_dimension=64,
        prompts="combined",
        llm_max_retries=0,
    )
    opened = open_ledger(llm)
    yield opened
    opened.close()


def query(service: LedgerService, sql: str, table: str, *params: Any) -> list[dict[str, Any]]:
    datastore = service.ledger.factory.datastore
    with datastore.transaction(commit=False) as curs:
        curs.execute(SQL(sql).format(Identifier(datastore.schema, table)), params)
        return list(curs.fetchall())


def rows(service: LedgerService, message_id: str) -> list[dict[str, Any]]:
    # Requests sent only: a reading of the response cache is no request.
    sql = "SELECT kind, xmin::text AS txn FROM {} WHERE message_id = %s AND NOT cached ORDER BY id"
    return query(service, sql, "llm_calls", message_id)


def sent(fake: FakeOpenAI) -> int:
    return len(fake.chat_requests()) + len(fake.embedding_requests())


def fail_once(service: LedgerService, error: Exception) -> None:
    """Add a save hook (after the call log's) that makes the first save it sees fail."""
    failures = [error]

    def hook(*_: Any) -> None:
        if failures:
            raise failures.pop()

    recorder = service.ledger.recorder
    assert isinstance(recorder, LedgerRecorder)
    # Beside the wired hooks (the wiring gives a recorder its hooks once).
    recorder.hooks = attrs.evolve(recorder.hooks, written_in_save=(*recorder.hooks.written_in_save, hook))


def test_a_messages_readings_commit_in_the_transaction_of_its_events(service: LedgerService, fake: FakeOpenAI) -> None:
    result = service.ingest("u", EXAMPLE, message_id="m1")
    assert result.status == "recorded"
    [row] = query(
        service,
        "SELECT xmin::text AS txn FROM {} WHERE notification_id = %s",
        service.ledger.recorder.events_table_name,
        result.notification_id,
    )
    readings = rows(service, "m1")
    assert len(readings) == sent(fake) >= 2  # the extraction and the embedding of its items
    assert {r["txn"] for r in readings} == {row["txn"]}


def test_a_save_that_rolls_back_keeps_its_readings_for_the_next_attempt(
    service: LedgerService, fake: FakeOpenAI
) -> None:
    # A stale version: the writer decides again and saves again; every call is metered once.
    fail_once(service, IntegrityError("stale"))
    result = service.ingest("u", EXAMPLE, message_id="m1")
    assert result.status == "recorded"
    readings = rows(service, "m1")
    assert len(readings) == sent(fake)
    assert len({r["txn"] for r in readings}) == 1


def test_readings_no_save_took_are_written_when_the_message_is_done(service: LedgerService, fake: FakeOpenAI) -> None:
    fail_once(service, RuntimeError("the disk is full"))
    with pytest.raises(RuntimeError, match="disk is full"):
        service.ingest("u", EXAMPLE, message_id="m1")
    assert not service.knows("u")  # nothing of the message was recorded
    assert len(rows(service, "m1")) == sent(fake) >= 1
    # The next message saves normally and does not carry the earlier readings again.
    service.ingest("u", EXAMPLE, message_id="m2")
    assert len(rows(service, "m1")) + len(rows(service, "m2")) == sent(fake)


def test_a_reading_outside_a_message_is_written_at_once(service: LedgerService) -> None:
    log = UsageLog(service.ledger.factory.datastore, hold=True)
    log.record(CallRecord("embedding", "m"))  # no message: a recall, a projection
    with calls_for("u", "m9", "extract"):
        log.record(CallRecord("chat", "m"))  # held for the message's save
    assert [r["kind"] for r in rows(service, "m9")] == []
    assert log.totals()["embedding_calls"] == 1
    log.settle()
    assert [r["kind"] for r in rows(service, "m9")] == ["chat"]
