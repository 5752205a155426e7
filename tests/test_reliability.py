"""What one user sends, or one stuck writer does, never stops the service for the others."""

from __future__ import annotations

import json
import signal
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest
from eventsourcing.persistence import StoredEvent
from processes import run_cli, run_cli_json, spawn_python
from psycopg.sql import SQL, Identifier

from factledger.application.service import InvalidInput, LedgerService
from factledger.domain.memory import UserMemory
from factledger.infrastructure.config import Settings

AT = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def events_of(service: LedgerService, user: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in [e.to_dict() for e in service.history(user)] if e["event"] == kind]


def record_unchecked(service: LedgerService, user: str, build: Callable[[UserMemory], None]) -> None:
    """Record events the way an older version or a bug might have: past every check."""
    memory = service.ledger.find_memory(user) or UserMemory.start(user)
    build(memory)
    service.ledger.save(memory)


def test_a_nul_byte_no_longer_poisons_the_read_model(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "nul.jsonl"
    path.write_text('{"user_id":"m","message":"我住在北京\\u0000"}\n', encoding="utf-8")
    summary = run_cli_json(cli_env, "ingest-file", str(path))
    assert (summary["ingested"], summary["failed"]) == (1, 0)
    run_cli(cli_env, "ingest", "--user", "other", "我住在上海")
    status = run_cli_json(cli_env, "projection", "status")
    assert (status["lag"], status["quarantined"]) == (0, 0)
    assert [f["fact"] for f in run_cli_json(cli_env, "profile", "m")["facts"]["location"]] == ["用户住在北京"]
    assert [f["fact"] for f in run_cli_json(cli_env, "profile", "other")["facts"]["location"]] == ["用户住在上海"]
    rebuilt = run_cli_json(cli_env, "projection", "rebuild")
    assert rebuilt["lag"] == 0 and rebuilt["quarantined"] == 0
    assert run_cli_json(cli_env, "profile", "other")["facts_count"] == 1


@pytest.mark.pg_only  # a NUL byte is a PostgreSQL limit; the in-memory view stores it
def test_a_poisoned_event_is_quarantined_and_the_rest_projected(service: LedgerService) -> None:
    def poison(memory: UserMemory) -> None:
        memory.ingest_message("m1", "我住在北京", AT)
        memory.trigger_event(
            UserMemory.FactObserved,
            fact_id=str(uuid.uuid4()),
            text="用户住在\x00北京",
            category="location",
            confidence=0.9,
            message_id="m1",
            session_id=None,
            extractor_id="old/1",
            at=AT,
            conflicts_with=None,
            authority="stated",
            prompt_id=None,
            actor=None,
            rules=[],
        )

    record_unchecked(service, "poisoned", poison)
    # An event no version of factledger can read (an unknown topic), after it.
    stranger = uuid.uuid4()
    service.ledger.recorder.insert_events(
        [StoredEvent(stranger, 1, "factledger.domain.memory:UserMemory.Vanished", b"{}")]
    )
    result = service.ingest("healthy", "我住在杭州")  # projects inline, past both
    status = service.read_model_status()
    assert (status.lag, status.quarantined) == (0, 2)
    quarantined = service.quarantined_events()
    assert [q["topic"].rpartition(".")[2] for q in quarantined] == ["FactObserved", "Vanished"]
    assert "0x00" in quarantined[0]["error"] and quarantined[1]["originator_id"] == str(stranger)
    assert [f["fact"] for f in service.profile("healthy").to_dict()["facts"]["location"]] == [result.facts[0]]
    assert service.profile("poisoned").to_dict()["facts_count"] == 0
    # Later events of the poisoned user still project.
    service.ingest("poisoned", "我老婆姓王")
    assert service.profile("poisoned").to_dict()["facts_count"] == 1
    rows = service.read_model.all_rows()
    assert service.rebuild_read_model() > 0
    assert service.read_model.all_rows() == rows
    assert service.read_model_status().quarantined == 2


class BrokenEmbedder:
    """An embedding endpoint that is down: any rebuild with it fails half-way."""

    embedder_id = "broken/1"
    dimension = 256

    def embed(self, texts: Any) -> list[list[float]]:
        raise RuntimeError("embedding endpoint down")


def test_a_failed_rebuild_leaves_the_old_read_model_serving(
    service: LedgerService, open_service: Callable[..., LedgerService], pg_uri: str, schema: str
) -> None:
    for text in ("我住在杭州", "我叫李雷", "平时喜欢简短的回复"):
        service.ingest("u", text)
    rows = service.read_model.all_rows()
    broken = open_service(embedder=BrokenEmbedder(), check_embedder=False)
    with pytest.raises(RuntimeError, match="embedding endpoint down"):
        broken.rebuild_read_model()
    assert service.read_model.all_rows() == rows
    assert service.profile("u").to_dict()["facts_count"] == 2
    assert service.read_model_status().embedder_id == service.embedder.embedder_id
    with psycopg.connect(pg_uri) as conn:
        leftovers = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE 'rebuild\\_%'").fetchall()
    assert leftovers == [], "the half-built copy is removed"
    service.ingest("u", "我老婆姓王")
    assert service.rebuild_read_model() == service.read_model_status().head
    # the new fact, and the message it came from (ADR 0030)
    assert len(service.read_model.all_rows()) == len(rows) + 2


def test_a_megabyte_message_is_stored_without_hanging(cli_env: dict[str, str]) -> None:
    # The library's pipelined insert hung at about 600 KB, holding the events table lock.
    code = (
        "from factledger import open_ledger\n"
        "with open_ledger(max_message_chars=2_000_000) as ledger:\n"
        "    print(ledger.ingest('big', '我住在武汉。' + 'a' * 1_000_000).status)\n"
    )
    proc = spawn_python(cli_env, code)
    try:
        out, errors = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0, errors
    assert out.strip() == "recorded"


def test_oversized_input_is_refused_before_the_database_sees_it(service: LedgerService) -> None:
    started = time.monotonic()
    for call in (
        lambda: service.ingest("big", "我住在武汉。" + "a" * 1_000_000),
        lambda: service.ingest("u" * 1_000_000, "我住在武汉"),
        lambda: service.ingest("big", "hi", context=[{"role": "user", "content": "a" * 30}] * 10_000),
        lambda: service.recall("big", "x" * 5_000_000),
    ):
        with pytest.raises(InvalidInput):
            call()
    assert time.monotonic() - started < 5
    assert service.ledger.recorder.max_notification_id() in (None, 0)


STUCK_WRITER = """
import os, signal, sys
from factledger import open_ledger
ledger = open_ledger(inline_projection=False)
store = ledger.ledger.factory.datastore
table = ledger.ledger.recorder.events_table_name
with store.transaction(commit=True) as curs:
    curs.execute(f'LOCK TABLE "{store.schema}"."{table}" IN EXCLUSIVE MODE')
    print("locked", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)  # a writer paused while it holds the lock
"""


@pytest.mark.slow
def test_a_stuck_writer_does_not_block_another_user(service: LedgerService, cli_env: dict[str, str]) -> None:
    service.ingest("other", "我住在北京")
    stuck = spawn_python(cli_env, STUCK_WRITER)
    try:
        assert stuck.stdout is not None and stuck.stdout.readline().strip() == "locked"
        started = time.monotonic()
        result = service.ingest("other", "我在杭州工作")
        waited = time.monotonic() - started
        assert result.status == "recorded"
        # The server ends the stuck transaction (idle_in_transaction_session_timeout = 5 s).
        assert waited < 30, f"another user's ingest waited {waited:.1f}s behind a stuck writer"
    finally:
        stuck.send_signal(signal.SIGKILL)
        stuck.wait()


def test_a_message_id_is_remembered_for_the_whole_history(service: LedgerService) -> None:
    first = service.ingest("u", "我住在杭州", message_id="m-0")
    for n in range(1, 121):
        service.ingest("u", f"第{n}条消息", message_id=f"m-{n}")
    again = service.ingest("u", "我住在杭州", message_id="m-0")
    assert (first.status, again.status) == ("recorded", "duplicate")
    assert len(events_of(service, "u", "MessageIngested")) == 121
    assert service.ingest("someone-else", "我住在杭州", message_id="m-0").status == "recorded"


def test_message_ids_recorded_before_the_index_existed_are_indexed(
    service: LedgerService, open_service: Callable[..., LedgerService], pg_uri: str, schema: str
) -> None:
    for n in range(105):
        service.ingest("u", f"第{n}条消息", message_id=f"old-{n}")
    with psycopg.connect(pg_uri, autocommit=True) as conn:  # a database from before the index
        conn.execute(SQL("DROP TABLE {}").format(Identifier(schema, "factledger_message_ids")))
    reopened = open_service()
    assert reopened.ingest("u", "第0条消息", message_id="old-0").status == "duplicate"
    assert len(events_of(reopened, "u", "MessageIngested")) == 105


def test_an_import_with_repeated_message_ids_records_each_once(cli_env: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "dup.jsonl"
    lines = [
        {"user_id": "u", "message": "我住在杭州", "message_id": "a"},
        {"user_id": "u", "message": "我住在杭州", "message_id": "a"},
        {"user_id": "u", "message": "我叫李雷", "message_id": "b"},
    ]
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    summary = run_cli_json(cli_env, "ingest-file", str(path))
    assert (summary["ingested"], summary["already_recorded"], summary["failed"]) == (2, 1, 0)
    again = run_cli_json(cli_env, "ingest-file", str(path))
    assert (again["ingested"], again["already_recorded"]) == (0, 3)


def test_history_survives_a_non_string_message_id_of_an_earlier_version(
    service: LedgerService, settings: Settings, cli_env: dict[str, str]
) -> None:
    record_unchecked(service, "old", lambda m: m.ingest_message(123, "我住在杭州", AT))  # type: ignore[arg-type]
    proc = run_cli(cli_env, "history", "old")
    assert "message 123" in proc.stdout
    assert run_cli_json(cli_env, "history", "old")[1]["message_id"] == 123
    with pytest.raises(InvalidInput, match="message_id must be a string, got int"):
        service.ingest("old", "我住在杭州", message_id=123)  # type: ignore[arg-type]
