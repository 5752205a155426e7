"""The memories read model: exactly-once, rebuild equals incremental, follower process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import attrs
import numpy as np
import psycopg
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from scripted import MESSAGES, observe_unchecked

from factledger.application.errors import EmbedderMismatch
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings


def test_catch_up_is_exactly_once(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    rows = service.read_model.all_rows()
    status = service.read_model_status()
    assert status.lag == 0 and status.position == status.head
    assert service.catch_up() == 0
    assert service.read_model.all_rows() == rows


def test_rebuild_reproduces_the_read_model_and_recomputes_no_embedding(
    settings: Settings, service: LedgerService
) -> None:
    for text in MESSAGES:
        service.ingest("a", text, session_id="s")
        service.ingest("b", text)
    before = service.read_model.all_rows()
    fresh = open_ledger(settings)
    try:
        count = fresh.rebuild_read_model()
        assert count == fresh.read_model_status().head
        assert fresh.embedder.computed == 0, "every vector must come from the embedding cache"  # type: ignore[attr-defined]
        assert fresh.read_model.all_rows() == before
    finally:
        fresh.close()


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["u1", "u2"]), st.sampled_from(MESSAGES), st.booleans()),
        min_size=1,
        max_size=10,
    )
)
def test_rebuilt_read_model_equals_the_incremental_one_row_by_row(
    settings: Settings, steps: list[tuple[str, str, bool]]
) -> None:
    # A fresh schema per example, so every example starts from an empty ledger.
    import uuid

    example = attrs.evolve(settings, schema=f"{settings.schema}_{uuid.uuid4().hex[:6]}", inline_projection=False)
    service = open_ledger(example)
    try:
        for user, text, project_now in steps:
            service.ingest(user, text)
            if project_now:
                service.catch_up()
        service.catch_up()
        incremental = service.read_model.all_rows()
        service.rebuild_read_model()
        assert service.read_model.all_rows() == incremental
    finally:
        service.close()
        if settings.backend == "postgres":
            import psycopg
            from psycopg.sql import SQL, Identifier

            with psycopg.connect(settings.database_url, autocommit=True) as conn:  # type: ignore[arg-type]
                conn.execute(SQL("DROP SCHEMA {} CASCADE").format(Identifier(example.schema)))


def test_switching_embedders_asks_for_a_rebuild(settings: Settings, service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    with pytest.raises(EmbedderMismatch, match="projection rebuild"):
        open_ledger(attrs.evolve(settings, offline_dimension=128))


def test_follow_runs_as_a_separate_process(
    open_service: Callable[..., LedgerService], cli_env: dict[str, str], settings: Settings
) -> None:
    writer = open_ledger(attrs.evolve(settings, inline_projection=False))
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "factledger.entrypoints.cli",
            "projection",
            "follow",
            "--json",
            "--poll-interval",
            "0.2",
        ],
        env=cli_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        writer.ingest("u", "我在杭州工作，老板姓张，平时喜欢简短的回复")
        writer.ingest("u", "我住在杭州")
        deadline = time.monotonic() + 60
        while writer.read_model_status().lag and time.monotonic() < deadline:
            assert follower.poll() is None, follower.stderr.read().decode()  # type: ignore[union-attr]
            time.sleep(0.2)
        assert writer.read_model_status().lag == 0
        assert writer.profile("u").to_dict()["facts_count"] == 3
    finally:
        follower.terminate()
        follower.wait(30)
        writer.close()


def test_rebuild_with_another_embedder_recreates_the_vectors(settings: Settings, service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    other = attrs.evolve(settings, offline_dimension=64)
    rebuilt = open_ledger(other, check_embedder=False)
    try:
        rebuilt.rebuild_read_model()
        assert rebuilt.read_model_status().embedder_id.endswith(":64")
        [hit] = rebuilt.recall("u", "用户住在杭州", top_k=1)
        assert hit.similarity == pytest.approx(1.0, abs=1e-4)
    finally:
        rebuilt.close()
    reopened = open_ledger(other)  # no mismatch any more
    reopened.close()


def test_a_reader_with_another_embedder_cannot_leave_the_table_unclaimed(settings: Settings) -> None:
    reader = open_ledger(attrs.evolve(settings, offline_dimension=128), check_embedder=False)
    reader.close()
    with pytest.raises(EmbedderMismatch, match="projection rebuild"):
        open_ledger(settings)


def test_two_projectors_racing_apply_every_event_once(settings: Settings) -> None:
    import threading

    lagging = attrs.evolve(settings, inline_projection=False)
    first, second = open_ledger(lagging), open_ledger(lagging)
    try:
        for i in range(40):
            first.ingest(f"u{i % 4}", MESSAGES[i % len(MESSAGES)])
        errors: list[BaseException] = []

        def project(service: LedgerService) -> None:
            try:
                service.catch_up()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=project, args=(s,)) for s in (first, second)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        assert first.read_model_status().lag == 0
        raced = first.read_model.all_rows()
        first.rebuild_read_model()
        assert first.read_model.all_rows() == raced
    finally:
        first.close()
        second.close()


@pytest.mark.pg_only
def test_stored_vectors_are_the_embedders_float32_exactly(service: LedgerService) -> None:
    service.ingest("u", "我在杭州工作，老板姓张，平时喜欢简短的回复")
    rows = service.read_model.all_rows()
    assert rows
    assert [r["embedding"] for r in rows if r["type"] == "message"] == [None], "a message is found by its words"
    for row in (r for r in rows if r["type"] != "message"):
        stored = np.asarray(json.loads(row["embedding"]), dtype=np.float32)
        assert np.array_equal(stored, service.embedder.embed([row["content"]])[0])
    service.rebuild_read_model()
    assert service.read_model.all_rows() == rows


@pytest.mark.pg_only
def test_row_ids_postgresql_reads_differently_take_the_entry_by_entry_path(
    service: LedgerService, pg_uri: str, schema: str
) -> None:
    upper = str(uuid.uuid4()).upper()
    memory = UserMemory.start("odd")
    memory.ingest_message("m1", "我住在北京", datetime(2026, 1, 5, 9, 0, tzinfo=UTC))
    observe_unchecked(memory, upper, "用户住在北京")  # PostgreSQL's uuid input takes it: a row
    service.ledger.save(memory)
    service.catch_up()  # a batch of its own: nothing else makes it take the entry-by-entry path
    observe_unchecked(memory, "not-a-uuid", "用户住在上海")  # refused: quarantined, as before
    service.ledger.save(memory)
    service.catch_up()
    assert [str(r["id"]) for r in service.read_model.all_rows() if r["type"] != "message"] == [upper.lower()]
    [quarantined] = service.quarantined_events()
    assert "uuid" in quarantined["error"]
    rows = service.read_model.all_rows()
    service.rebuild_read_model()
    assert service.read_model.all_rows() == rows
    assert service.read_model_status().quarantined == 1
    with psycopg.connect(pg_uri) as conn:
        indexes = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,)).fetchall()
    assert ("memories_user_type_active",) in indexes, "a rebuilt copy gets its index before the swap"


def test_projecting_decodes_only_the_events_that_change_rows() -> None:
    """An extraction changes no row: its topics are skipped undecoded, every event with a row
    (a message is one since ADR 0030) is still decoded (and so quarantined when it cannot be)."""
    from eventsourcing.utils import get_topic

    from factledger.projections.rows import rowless_topics

    skipped = rowless_topics()
    for rowless in (UserMemory.ExtractionRecorded, UserMemory.ExtractionFailed):
        assert get_topic(rowless) in skipped
    for with_rows in (
        UserMemory.Started,
        UserMemory.MessageIngested,
        UserMemory.FactObserved,
        UserMemory.FactInvalidated,
        UserMemory.PreferenceObserved,
        UserMemory.PreferenceSuperseded,
        UserMemory.PreferenceReinforced,
    ):
        assert get_topic(with_rows) not in skipped


def test_a_batch_is_checked_for_events_erased_meanwhile_exactly_and_within_its_range(
    service: LedgerService, pg_uri: str
) -> None:
    from factledger.projections.postgres_view import PostgresMemoryView
    from factledger.projections.view import Entry

    view = service.read_model
    if not isinstance(view, PostgresMemoryView) or view.events_table is None:
        pytest.skip("only the PostgreSQL view checks the events table")
    for i in range(6):
        service.ingest("eraser", f"message number {i}")
    recorded = service.ledger.recorder.select_notifications(start=1, limit=1000)
    assert len(recorded) >= 12
    erased = [recorded[2].id, recorded[-1].id]
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(
            psycopg.sql.SQL("DELETE FROM {} WHERE notification_id = ANY(%s)").format(view.events_table), (erased,)
        )
    # Every event, then every other one (the range holds events that are not in the batch).
    for batch in (recorded, recorded[::2], recorded[2:3]):
        entries = [Entry(n.id, n.originator_id, n.topic, []) for n in batch]
        with view.datastore.transaction(commit=False) as curs:
            kept, gone = view._still_recorded(curs, entries)
        assert [e.position for e in gone] == [n.id for n in batch if n.id in erased]
        assert [e.position for e in kept] == [n.id for n in batch if n.id not in erased]
