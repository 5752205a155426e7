"""A message in one commit (ADR 0020): events, message id, the vectors deciding made and the
read model's rows commit together; whatever the save cannot project is left to the catch-up."""

from __future__ import annotations

import sys
import threading
import time
import uuid
import zlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.sql import SQL, Identifier
from scripted import observe_unchecked

from factledger.application.calls import calls_for
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory, user_memory_id

pytestmark = pytest.mark.pg_only


def _count(pg_uri: str, schema: str, table: str, where: str = "", params: tuple[object, ...] = ()) -> int:
    with psycopg.connect(pg_uri) as conn:
        row = conn.execute(SQL("SELECT count(*) FROM {} " + where).format(Identifier(schema, table)), params).fetchone()
    assert row is not None
    return int(row[0])


def _catch_ups(service: LedgerService) -> list[int]:
    """Counts the catch-ups the service runs after its saves (each reads the event log)."""
    projector = service.projector
    assert projector is not None
    calls: list[int] = []
    inner = projector.catch_up

    def counted(progress: Callable[[int, int], None] | None = None) -> int:
        calls.append(1)
        return inner(progress)

    projector.catch_up = counted  # type: ignore[method-assign]
    return calls


def test_the_save_projects_its_own_events_and_no_catch_up_follows(service: LedgerService) -> None:
    calls = _catch_ups(service)
    for text in ("我住在杭州", "我在阿里巴巴工作", "我喜欢喝美式咖啡", "我搬到上海了"):
        service.ingest("u", text)
        status = service.read_model_status()
        assert status.lag == 0, text
    assert calls == [], "every save projected itself: no catch-up read the log"
    rows = service.read_model.all_rows()
    active = {r["content"] for r in rows if r["is_active"]}
    assert "用户住在上海" in active and "用户住在杭州" not in active
    # A save's rows go in by INSERT, a rebuild's by COPY: the same rows, value for value.
    service.rebuild_read_model()
    assert service.read_model.all_rows() == rows


def test_a_view_left_behind_is_caught_up_in_order_and_the_rows_equal_a_rebuild(
    open_service: Callable[..., LedgerService],
) -> None:
    deferred = open_service(inline_projection=False)
    deferred.ingest("a", "我住在杭州")
    deferred.ingest("b", "我养了一只猫")
    inline = open_service()
    calls = _catch_ups(inline)
    inline.ingest("a", "我搬到南京了")  # older events wait: the save must not project past them
    assert len(calls) == 1
    status = inline.read_model_status()
    assert status.lag == 0
    rows = inline.read_model.all_rows()
    memories = {r["content"] for r in rows if r["is_active"] and r["type"] != "message"}
    assert memories == {"用户住在南京", "用户养了一只猫"}
    inline.rebuild_read_model()
    assert inline.read_model.all_rows() == rows
    calls.clear()
    inline.ingest("b", "我的猫叫小黑")
    assert calls == [], "caught up again: the next save projects itself"


def test_a_projector_holding_the_lock_delays_the_rows_not_the_save(
    service: LedgerService, pg_uri: str, schema: str
) -> None:
    service.ingest("u", "我住在杭州")
    key = zlib.crc32(f"{schema}.memories".encode())
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (key,))
            held.set()
            release.wait(10)
            conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    saved = threading.Event()
    result: list[object] = []

    def ingest() -> None:
        result.append(service.ingest("u", "我搬到成都了"))
        saved.set()

    writer = threading.Thread(target=ingest)
    writer.start()
    # The save does not wait for the lock: the events are in before it is released ...
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _count(pg_uri, schema, "factledger_events") < 5:
        time.sleep(0.05)
    assert _count(pg_uri, schema, "factledger_events") >= 5
    assert not saved.is_set(), "the catch-up after the save waits for the projector"
    release.set()
    writer.join(10)
    holder.join(10)
    assert saved.is_set() and result
    assert service.read_model_status().lag == 0
    active = {r["content"] for r in service.read_model.all_rows() if r["is_active"] and r["type"] != "message"}
    assert active == {"用户住在成都"}


def test_a_row_the_view_refuses_does_not_fail_the_save(service: LedgerService) -> None:
    service.ingest("odd", "我住在北京")
    memory = service.ledger.find_memory("odd")
    assert memory is not None
    text = "用户住在上海"
    service.embedder.embed([text])  # held in memory, as after deciding: the save tries to project it
    memory.ingest_message("m2", "我住在上海", datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    observe_unchecked(memory, "not-a-uuid", text, message_id="m2")
    service.ledger.save(memory)
    assert service.ledger.find_memory("odd") is not None
    assert [e for e in service.ledger.user_events("odd") if isinstance(e, UserMemory.FactObserved)][-1].fact_id == (
        "not-a-uuid"
    )
    service.catch_up()
    [quarantined] = service.quarantined_events()
    assert "uuid" in quarantined["error"]
    assert service.read_model_status().lag == 0


def test_a_row_the_server_refuses_is_taken_back_and_the_save_stands(service: LedgerService) -> None:
    """A refusal inside the server (a row id taken) aborts the statement: the projection goes
    back to its savepoint, the events and the rest of the save commit, the catch-up quarantines."""
    service.ingest("taken", "我住在北京")
    memory = service.ledger.find_memory("taken")
    assert memory is not None
    [taken_id] = list(memory.facts)
    text = "用户住在上海"
    service.embedder.embed([text])
    memory.ingest_message("m2", "我住在上海", datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    observe_unchecked(memory, taken_id, text, message_id="m2")
    service.ledger.save(memory)
    observed = [e for e in service.ledger.user_events("taken") if isinstance(e, UserMemory.FactObserved)]
    assert [e.fact_id for e in observed] == [taken_id, taken_id]
    service.catch_up()
    [quarantined] = service.quarantined_events()
    assert "duplicate key" in quarantined["error"]
    assert service.read_model_status().lag == 0


def test_the_vectors_deciding_made_commit_with_the_message(service: LedgerService, pg_uri: str, schema: str) -> None:
    service.ingest("u", "我在杭州的一家医院当护士")
    owners = _count(pg_uri, schema, "embedding_cache_users", "WHERE user_id = %s", ("u",))
    vectors = _count(pg_uri, schema, "embedding_cache_v2")
    assert owners >= 1 and vectors >= owners
    # A decision that saved nothing leaves its rows pending; the next save, for another user,
    # drops them instead of writing them under its own commit.
    with calls_for("w", "m-w", "decide", schema):
        service.embedder.embed(["用户在苏州的一家银行上班"])
    service.ingest("x", "我在南京的一所大学读研究生")
    assert _count(pg_uri, schema, "embedding_cache_users", "WHERE user_id = %s", ("w",)) == 0
    assert _count(pg_uri, schema, "embedding_cache_users", "WHERE user_id = %s", ("x",)) >= 1
    # A duplicate delivery is refused before anything is decided or written.
    mid = str(uuid.uuid4())
    service.ingest("v", "我在南京的一所大学读研究生", message_id=mid)
    before = _count(pg_uri, schema, "embedding_cache_users", "WHERE user_id = %s", ("v",))
    assert service.ingest("v", "我在南京的一所大学读研究生", message_id=mid).status == "duplicate"
    assert _count(pg_uri, schema, "embedding_cache_users", "WHERE user_id = %s", ("v",)) == before
    assert _count(pg_uri, schema, "factledger_message_ids", "WHERE originator_id = %s", (user_memory_id("v"),)) == 1


def test_a_save_too_large_for_one_round_trip_projects_itself_too(service: LedgerService) -> None:
    """More events than a pipelined save takes (a user moved, a bulk import): statement by
    statement, and the projection makes its own check; the rows still equal a rebuild."""
    from factledger.infrastructure.event_store import PIPELINED_EVENTS

    calls = _catch_ups(service)
    memory = UserMemory.start("big")
    texts = [f"用户去过第{i}个城市" for i in range(PIPELINED_EVENTS + 5)]
    service.embedder.embed(texts)  # held in memory, as after deciding
    for text in texts:
        observe_unchecked(memory, str(uuid.uuid4()), text)
    service.ledger.save(memory)
    assert calls == [] and service.read_model_status().lag == 0
    rows = service.read_model.all_rows()
    assert len([r for r in rows if r["user_id"] == "big"]) == len(texts)
    service.rebuild_read_model()
    assert service.read_model.all_rows() == rows


def test_a_position_that_does_not_move_takes_the_saves_rows_back(
    service: LedgerService, pg_uri: str, schema: str
) -> None:
    """The save's rows and the view's position go in one statement: when the position cannot
    move forward (another projector is past it), the rows go back with it and the events stand."""
    service.ingest("first", "我住在北京")
    ahead = 10**12
    with psycopg.connect(pg_uri) as conn:
        tracking = Identifier(schema, "memories_tracking")
        conn.execute(SQL("UPDATE {} SET notification_id = %s").format(tracking), (ahead,))
    service.ingest("second", "我在杭州的一家医院当护士")
    assert service.ledger.user_events("second"), "the save itself committed"
    assert _count(pg_uri, schema, "memories", "WHERE user_id = %s", ("second",)) == 0
    tracked = _count(pg_uri, schema, "memories_tracking")
    assert tracked >= 1
    assert _count(pg_uri, schema, "memories_tracking", "WHERE notification_id = %s", (ahead,)) == tracked


def test_a_message_is_three_statements_and_its_rows_ride_in_the_save(service: LedgerService) -> None:
    """What a next message of a user asks of PostgreSQL (issue 29, ADR 0044): BEGIN, the lock, and
    one statement with the message id, the events, the cached vectors deciding made, the
    projection's check, its rows and position; then COMMIT, all in one round trip."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
    from sql_counts import counting

    service.ingest("counted", "我住在北京")
    texts = ["我在杭州的一家医院当护士", "我养了一只猫叫咪咪", "我每天早上喝美式咖啡"]
    with counting() as counts:
        for text in texts:
            service.ingest("counted", text)
    assert counts.commits == len(texts)
    assert not [kind for kind in counts.kinds if "pg_try_advisory_xact_lock" in kind or "SAVEPOINT" in kind]
    assert counts.statements == 3 * len(texts), counts.kinds
    # ... sent with the COMMIT in one pipeline: one round trip a message (ADR 0046)
    assert counts.round_trips == len(texts)
    assert service.read_model_status().lag == 0
    # written by the saves themselves: a catch-up would have added statements of its own
    assert len([r for r in service.read_model.all_rows() if r["user_id"] == "counted" and r["type"] == "message"]) == 4


def test_a_change_finds_its_row_by_the_primary_key_in_a_large_table(service: LedgerService, pg_uri: str) -> None:
    """The changed rows' count is estimated from the arrays sent (``unnest``), not as a function's
    fixed 100 rows: one or two changed rows do not make the planner read the whole table."""
    service.ingest("u", "我住在杭州")
    view: Any = service.read_model
    with psycopg.connect(pg_uri) as conn:
        conn.execute(
            SQL(
                "INSERT INTO {m} SELECT (jsonb_populate_record(m, jsonb_build_object('id', gen_random_uuid()))).* "
                "FROM {m} AS m, generate_series(1, 3000) LIMIT 3000"
            ).format(m=view.memories)
        )
        conn.execute(SQL("ANALYZE {}").format(view.memories))
        row = conn.execute(SQL("SELECT id FROM {} LIMIT 1").format(view.memories)).fetchone()
        assert row is not None
        arrays = [[str(row[0])], ["{}"], [None], [False], [datetime.now(UTC).isoformat()]]
        with conn.transaction(force_rollback=True):
            plan = conn.execute(SQL("EXPLAIN ") + view._update_statement(SQL("true")), arrays).fetchall()
    text = "\n".join(line[0] for line in plan)
    assert "Index Scan using memories_pkey" in text and "Seq Scan on memories" not in text, text
