"""A save's statements: a message's few events go in one round trip (pipeline mode), a large save
statement by statement; both refuse a message id taken before, a stream forgotten meanwhile and a
lock held too long, and leave nothing of the save behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from uuid import UUID, uuid4

import attrs
import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from psycopg.sql import SQL, Identifier

from factledger.application.errors import MessageAlreadyRecorded, StoreBusy
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import database_uri, open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.event_store import PIPELINED_EVENTS, LedgerRecorder

pytestmark = pytest.mark.pg_only

TOPIC = "tests.test_save_round_trip:Nothing"  # never read back: these streams are the recorder's only


@pytest.fixture
def service(settings: Settings) -> Iterator[LedgerService]:
    opened = open_ledger(attrs.evolve(settings, lock_timeout=0.5))
    yield opened
    opened.close()


def recorder_of(service: LedgerService) -> LedgerRecorder:
    recorder = service.ledger.recorder
    assert isinstance(recorder, LedgerRecorder)
    return recorder


def events(stream: UUID, first: int, count: int) -> list[StoredEvent]:
    return [StoredEvent(stream, v, TOPIC, b"{}") for v in range(first, first + count)]


def stored_count(recorder: LedgerRecorder, table: str, stream: UUID) -> int:
    with recorder.datastore.transaction(commit=False) as curs:
        curs.execute(
            SQL("SELECT count(*) AS n FROM {} WHERE originator_id = %s").format(
                Identifier(recorder.datastore.schema, table)
            ),
            (stream,),
        )
        row = curs.fetchone()
    return int(row["n"]) if row else 0


def counting_writes(recorder: LedgerRecorder) -> list[int]:
    """A write-only save hook that counts the events of each save it ran in."""
    seen: list[int] = []

    def write(stored: Any) -> None:
        seen.append(len(stored))

    # A test's own hook beside the wired ones (the wiring gives a recorder its hooks once).
    recorder.hooks = attrs.evolve(recorder.hooks, written_in_save=(*recorder.hooks.written_in_save, write))
    return seen


@pytest.mark.parametrize("size", [3, PIPELINED_EVENTS + 1], ids=["pipelined", "statement-by-statement"])
def test_a_save_goes_in_whole_with_its_positions_and_its_hooks(service: LedgerService, size: int) -> None:
    recorder = recorder_of(service)
    seen = counting_writes(recorder)
    stream = uuid4()
    positions = recorder.insert_events(events(stream, 1, size), message_ids=[(stream, "m1")])
    assert positions is not None and len(positions) == size
    assert list(positions) == sorted(positions)
    assert stored_count(recorder, recorder.events_table_name, stream) == size
    assert recorder.has_message(stream, "m1")
    assert seen == [size]
    # Continuing the stream checks the version before it, on both paths.
    assert recorder.insert_events(events(stream, size + 1, size))
    assert stored_count(recorder, recorder.events_table_name, stream) == 2 * size


@pytest.mark.parametrize("size", [3, PIPELINED_EVENTS + 1], ids=["pipelined", "statement-by-statement"])
def test_a_message_id_taken_before_refuses_the_save_and_leaves_nothing(service: LedgerService, size: int) -> None:
    recorder = recorder_of(service)
    taken, other = uuid4(), uuid4()
    recorder.insert_events(events(taken, 1, 1), message_ids=[(taken, "m1")])
    with pytest.raises(MessageAlreadyRecorded):
        recorder.insert_events(events(taken, 2, size), message_ids=[(taken, "m1")])
    assert stored_count(recorder, recorder.events_table_name, taken) == 1
    # The same id for another stream is another message.
    assert recorder.insert_events(events(other, 1, 1), message_ids=[(other, "m1")])
    assert recorder.has_message(other, "m1")


@pytest.mark.parametrize("size", [3, PIPELINED_EVENTS + 1], ids=["pipelined", "statement-by-statement"])
def test_a_stream_that_lost_the_version_it_continues_is_refused(service: LedgerService, size: int) -> None:
    recorder = recorder_of(service)
    stream = uuid4()
    with pytest.raises(IntegrityError, match="no version 4"):
        recorder.insert_events(events(stream, 5, size), message_ids=[(stream, "late")])
    assert stored_count(recorder, recorder.events_table_name, stream) == 0
    assert not recorder.has_message(stream, "late")


def holding_the_events_table(service: LedgerService, settings: Settings) -> Callable[[], None]:
    """Lock the events table from another connection until the returned function is called."""
    recorder = recorder_of(service)
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(database_uri(settings), autocommit=False) as conn:
            conn.execute(
                SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(
                    Identifier(recorder.datastore.schema, recorder.events_table_name)
                )
            )
            locked.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    assert locked.wait(30)

    def done() -> None:
        release.set()
        thread.join(30)

    return done


def test_a_lock_held_too_long_is_store_busy_and_keeps_no_message_id(service: LedgerService, settings: Settings) -> None:
    recorder = recorder_of(service)
    stream = uuid4()
    release = holding_the_events_table(service, settings)
    try:
        started = time.monotonic()
        with pytest.raises(StoreBusy):
            recorder.insert_events(events(stream, 1, 2), message_ids=[(stream, "m1")])
        assert time.monotonic() - started < 10
    finally:
        release()
    assert not recorder.has_message(stream, "m1")
    assert recorder.insert_events(events(stream, 1, 2), message_ids=[(stream, "m1")])


def test_a_save_sends_no_statement_its_connection_has_made_already(
    service: LedgerService, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = recorder_of(service)
    sent: list[str] = []
    execute = psycopg.Cursor.execute

    def recording(curs: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(query.as_string(curs.connection) if hasattr(query, "as_string") else str(query))
        return execute(curs, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    stream = uuid4()
    recorder.insert_events(events(stream, 1, 1), message_ids=[(stream, "m1")])
    recorder.insert_events(events(stream, 2, 1), message_ids=[(stream, "m2")])
    # Every connection's own lock_timeout bounds the wait (test_a_lock_held_too_long_...): not SET LOCAL again.
    assert not [q for q in sent if "lock_timeout" in q]
    assert sum("LOCK TABLE" in q for q in sent) == 2
