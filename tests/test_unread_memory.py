"""A user's next message starts from the memory this process saved last, not read again (ADR 0043):
its save checks that the stream still ends at the position that save got; a writer elsewhere, or a
forget, fails that check and the retry reloads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4

import psycopg
import pytest
from eventsourcing.persistence import IntegrityError, StoredEvent
from psycopg.sql import SQL, Identifier

from factledger.application.errors import MessageAlreadyRecorded
from factledger.application.ledger import MemoryLedger
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory, user_memory_id
from factledger.infrastructure.bootstrap import database_uri
from factledger.infrastructure.config import Settings
from factledger.infrastructure.event_store import PIPELINED_EVENTS
from factledger.infrastructure.memory import PERSISTENCE

TOPIC = "tests.test_unread_memory:Nothing"  # never read back: these streams are the recorder's only


def reads_of(service: LedgerService) -> list[str]:
    """Every read of a stream's events or snapshots from now on, by what was read."""
    reads: list[str] = []
    ledger = service.ledger
    stores: list[tuple[str, Any]] = [("events", ledger.recorder)]
    if ledger.snapshots is not None:
        stores.append(("snapshots", ledger.snapshots.recorder))
    for name, recorder in stores:
        for method in ("select_events", "select_events_from"):
            original = getattr(recorder, method, None)
            if original is None:
                continue

            def counted(*args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
                reads.append(_name)
                return _original(*args, **kwargs)

            setattr(recorder, method, counted)
    return reads


def message_ids(service: LedgerService, user_id: str) -> list[str]:
    return [e.message_id for e in service.ledger.user_events(user_id) if isinstance(e, UserMemory.MessageIngested)]


def test_a_user_s_next_message_reads_nothing_of_the_stream(service: LedgerService) -> None:
    service.ingest("u-unread", "I live in Paris.", message_id="m1")
    reads = reads_of(service)
    service.ingest("u-unread", "I work at Acme.", message_id="m2")
    service.ingest("u-unread", "I have a dog named Rex.", message_id="m3")
    assert reads == []
    assert message_ids(service, "u-unread") == ["m1", "m2", "m3"]
    memory = service.ledger.find_memory("u-unread")
    assert memory is not None and memory.version == len(list(service.ledger.user_events("u-unread")))


def test_a_new_user_is_looked_up_once(service: LedgerService) -> None:
    reads = reads_of(service)
    service.ingest("u-new", "I live in Paris.")
    # The events and the snapshot looked up once each: by the ingest, not again by its write.
    expected = ["events", "snapshots"] if service.ledger.snapshots is not None else ["events"]
    assert sorted(reads) == expected


@pytest.mark.parametrize("size", [1, PIPELINED_EVENTS + 1], ids=["pipelined", "statement-by-statement"])
def test_a_save_continuing_elsewhere_than_saved_here_is_refused(service: LedgerService, size: int) -> None:
    recorder = service.ledger.recorder
    stream = uuid4()
    [first] = recorder.insert_events([StoredEvent(stream, 1, TOPIC, b"{}")]) or [0]
    more = [StoredEvent(stream, v, TOPIC, b"{}") for v in range(2, size + 2)]
    with pytest.raises(IntegrityError):
        recorder.insert_events(more, continues={stream: first + 1000})
    assert [e.originator_version for e in recorder.select_events(stream)] == [1]
    positions = recorder.insert_events(more, continues={stream: first})
    assert positions is not None and len(positions) == size
    assert [e.originator_version for e in recorder.select_events(stream)] == list(range(1, size + 2))


@pytest.mark.pg_only
def test_a_save_still_notifies_listeners(service: LedgerService, settings: Settings) -> None:
    channel = service.ledger.recorder.channel_name  # type: ignore[attr-defined]
    with psycopg.connect(database_uri(settings), autocommit=True) as listener:
        listener.execute(SQL("LISTEN {}").format(Identifier(channel)))
        service.ingest("u-listened", "I live in Paris.")
        assert [n.channel for n in listener.notifies(timeout=5, stop_after=1)] == [channel]


@pytest.mark.pg_only
def test_a_writer_elsewhere_wins_and_the_retry_reloads(open_service: Callable[..., LedgerService]) -> None:
    here, elsewhere = open_service(), open_service()
    here.ingest("u-two", "I live in Paris.", message_id="m1")
    elsewhere.ingest("u-two", "I work at Acme.", message_id="m2")
    reads = reads_of(here)
    here.ingest("u-two", "I have a dog named Rex.", message_id="m3")  # its copy is stale: conflict, reload
    assert reads, "the stale copy was reloaded"
    assert message_ids(here, "u-two") == ["m1", "m2", "m3"]
    for service in (here, elsewhere):
        memory = service.ledger.find_memory("u-two")
        assert memory is not None and {"m1", "m2", "m3"} <= set(memory.recent_message_ids)


@pytest.mark.pg_only
def test_a_user_forgotten_and_begun_again_elsewhere_is_reloaded(open_service: Callable[..., LedgerService]) -> None:
    here, elsewhere = open_service(), open_service()
    here.ingest("u-again", "I live in Paris.", message_id="m1")
    version = here.ledger.find_memory("u-again").version  # type: ignore[union-attr]
    elsewhere.forget("u-again")
    elsewhere.ingest("u-again", "I live in Paris.", message_id="m1-again")  # the same version again
    assert elsewhere.ledger.find_memory("u-again").version == version  # type: ignore[union-attr]
    here.ingest("u-again", "I work at Acme.", message_id="m2")
    assert message_ids(here, "u-again") == ["m1-again", "m2"]
    # What this process holds is what is stored, not the forgotten message.
    memory = here.ledger.find_memory("u-again")
    assert memory is not None and "m1-again" in memory.recent_message_ids and "m1" not in memory.recent_message_ids
    stored = list(here.ledger.recorder.select_events(user_memory_id("u-again")))
    assert [e.originator_version for e in stored] == list(range(1, len(stored) + 1))


@pytest.mark.parametrize("size", ["0", "1"])
def test_memories_saved_here_are_kept_as_the_cache_is(size: str) -> None:
    """As many saved heads as the cache holds memories: all of them when it is unbounded (0)."""
    ledger = MemoryLedger(env={"PERSISTENCE_MODULE": PERSISTENCE, "AGGREGATE_CACHE_MAXSIZE": size})
    for user in ("a", "b"):
        memory = UserMemory.start(user)
        memory.ingest_message(message_id="m1", text="I live in Paris.", at=datetime.now(UTC))
        ledger.save(memory)
    kept = [user for user in ("a", "b") if ledger.saved_here(ledger.memory_to_write(user))]  # type: ignore[arg-type]
    assert kept == (["a", "b"] if size == "0" else ["b"])


@pytest.mark.parametrize("size", [1, PIPELINED_EVENTS + 1], ids=["pipelined", "statement-by-statement"])
def test_a_save_with_one_of_its_message_ids_taken_keeps_none_of_them(service: LedgerService, size: int) -> None:
    recorder = service.ledger.recorder
    one, two = uuid4(), uuid4()
    recorder.insert_events([StoredEvent(two, 1, TOPIC, b"{}")], message_ids=[(two, "m2")])
    more = [StoredEvent(one, v, TOPIC, b"{}") for v in range(1, size + 1)]
    with pytest.raises(MessageAlreadyRecorded, match="m2"):
        recorder.insert_events([*more, StoredEvent(two, 2, TOPIC, b"{}")], message_ids=[(one, "m1"), (two, "m2")])
    assert not recorder.has_message(one, "m1")  # type: ignore[attr-defined]
    assert list(recorder.select_events(one)) == []
    assert [e.originator_version for e in recorder.select_events(two)] == [1]
