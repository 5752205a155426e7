"""Forgetting a user (issue 11, item 1): every trace gone from every ledger, others untouched."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from eventsourcing.persistence import IntegrityError

from factledger.application.errors import InvalidInput, NotFound
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory


def profile_texts(service: LedgerService, user_id: str) -> list[str]:
    profile = service.profile(user_id).to_dict()
    facts = [f["fact"] for group in profile["facts"].values() for f in group]
    preferences = [p["preference"] for group in profile["preferences"].values() for p in group]
    return facts + preferences


def test_a_forgotten_user_is_gone_and_the_others_stay(service: LedgerService) -> None:
    service.ingest("gone", "我住在杭州，我喜欢喝咖啡。", context=[{"role": "assistant", "content": "你住在哪里？"}])
    service.ingest("gone", "I work at Initech.")
    service.ingest("stays", "我住在北京，我喜欢喝茶。")
    before = service.profile("stays").to_dict()

    tombstone = service.forget("gone", actor="dpo@example.org")

    assert tombstone.counts["events"] > 0 and tombstone.counts["read_model_rows"] > 0
    assert tombstone.actor == "dpo@example.org" and "gone" not in tombstone.user_key
    assert not service.profile("gone").known
    assert service.history("gone").total == 0
    assert service.recall("gone", "住在哪里") == []
    assert all(r["user_id"] != "gone" for r in service.read_model.all_rows())
    assert service.profile("stays").to_dict() == before
    with pytest.raises(NotFound):
        service.export("gone")


def test_the_tombstone_says_when_and_who_and_holds_no_personal_data(service: LedgerService) -> None:
    service.ingest("t-user", "我住在杭州。")
    tombstone = service.forget("t-user", actor="ops")
    [found] = service.tombstones("t-user")
    assert found.user_key == tombstone.user_key and found.actor == "ops"
    assert found.forgotten_at == tombstone.forgotten_at
    assert service.tombstones("someone-else") == []
    assert service.tombstones()[0].user_key == tombstone.user_key
    assert "t-user" not in str(found.to_dict())


def test_the_id_starts_an_empty_memory_afterwards(service: LedgerService) -> None:
    service.ingest("again", "我住在杭州。", message_id="m1")
    service.forget("again")
    result = service.ingest("again", "我住在上海。", message_id="m1")  # the old message id is forgotten too
    assert result.status == "recorded"
    assert profile_texts(service, "again") == ["用户住在上海"]
    events = list(service.ledger.user_events("again"))
    assert events[0].originator_version == 1 and isinstance(events[0], UserMemory.Started)


def test_forgetting_someone_never_recorded_leaves_a_tombstone_with_zero_counts(service: LedgerService) -> None:
    tombstone = service.forget("nobody")
    assert tombstone.counts.get("events", 0) == 0
    assert len(service.tombstones("nobody")) == 1


@pytest.mark.parametrize("bad", ["", "   ", None, 7])
def test_a_bad_user_id_is_refused_and_nothing_is_deleted(service: LedgerService, bad: object) -> None:
    service.ingest("kept", "我住在杭州。")
    with pytest.raises(InvalidInput, match="user_id"):
        service.forget(bad)  # type: ignore[arg-type]
    assert service.profile("kept").known and service.tombstones() == []


def test_the_read_model_rebuilds_without_the_forgotten_user(service: LedgerService) -> None:
    for n in range(3):
        service.ingest(f"u{n}", f"我住在城市{n}。我喜欢喝茶。")
    service.forget("u1")
    rows_before = sorted((r["user_id"], r["content"]) for r in service.read_model.all_rows())
    service.rebuild_read_model()
    rows_after = sorted((r["user_id"], r["content"]) for r in service.read_model.all_rows())
    assert rows_after == rows_before and {u for u, _ in rows_after} == {"u0", "u2"}


def test_every_ledger_forgets_replayed_and_previous_ones_too(service: LedgerService) -> None:
    service.ingest("r-gone", "我住在杭州。我喜欢喝咖啡。")
    service.ingest("r-stays", "我住在北京。")
    service.replay("copy", "offline")
    service.replay("next", "offline")
    kept = service.promote("next")
    service.forget("r-gone")
    directory = service.directory
    assert directory is not None
    for name in ("live", "copy", kept):
        with directory.open(name) as ledger:
            assert ledger.ledger.find_memory("r-gone") is None, name
            assert ledger.profile("r-stays").known, name
            assert all(r["user_id"] != "r-gone" for r in ledger.read_model.all_rows()), name


def test_a_replay_filtered_to_the_user_no_longer_names_them(service: LedgerService) -> None:
    service.ingest("f-gone", "我住在杭州。")
    service.ingest("f-stays", "我住在北京。")
    service.replay("some", "offline", users=["f-gone", "f-stays"])
    service.forget("f-gone")
    [entry] = [e for e in service.directory.entries() if e.name == "some"]  # type: ignore[union-attr]
    assert entry.replay_users == ("f-stays",)


def test_a_memory_cached_by_another_service_is_not_written_on(
    open_service: Callable[..., LedgerService],
) -> None:
    """Two services (two processes' caches): one forgets, the other's next write starts afresh."""
    writer, forgetter = open_service(), open_service()
    writer.ingest("cached", "我住在杭州。我喜欢喝咖啡。")
    assert writer.ledger.find_memory("cached") is not None  # now in the writer's cache
    forgetter.forget("cached")
    writer.ingest("cached", "我在上海工作。")
    assert profile_texts(writer, "cached") == ["用户在上海工作"]
    assert profile_texts(forgetter, "cached") == ["用户在上海工作"]
    versions = [e.originator_version for e in writer.ledger.user_events("cached")]
    assert versions == list(range(1, len(versions) + 1))


def test_a_save_on_a_memory_forgotten_since_it_was_loaded_is_refused(
    open_service: Callable[..., LedgerService],
) -> None:
    """The save's own check, under the table lock: the version it continues must still be there."""
    writer, forgetter = open_service(), open_service()
    writer.ingest("loaded", "我住在杭州。")
    memory = writer.ledger.find_memory("loaded")
    assert memory is not None
    forgetter.forget("loaded")
    memory.ingest_message("late", "我搬到上海了。", datetime.now(UTC))
    with pytest.raises(IntegrityError):
        writer.ledger.save(memory)
    assert list(forgetter.ledger.user_events("loaded")) == []


def test_a_writer_racing_a_forget_leaves_either_nothing_or_a_fresh_whole_stream(
    open_service: Callable[..., LedgerService],
) -> None:
    writer, forgetter = open_service(), open_service()
    writer.ingest("race", "我住在杭州。")
    stop = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                writer.ingest("race", f"我喜欢第{n}种茶。", message_id=f"w{n}-{uuid.uuid4().hex[:6]}")
            except BaseException as exc:  # reported below
                errors.append(exc)
                return

    thread = threading.Thread(target=write)
    thread.start()
    try:
        for _ in range(3):
            forgetter.forget("race")
    finally:
        stop.set()
        thread.join(timeout=120)
    assert errors == []
    versions = [e.originator_version for e in forgetter.ledger.user_events("race")]
    assert versions == list(range(1, len(versions) + 1))
    if versions:
        assert isinstance(next(iter(forgetter.ledger.user_events("race"))), UserMemory.Started)
    rows = [r for r in forgetter.read_model.all_rows() if r["user_id"] == "race" and r["type"] != "message"]
    memory = forgetter.ledger.find_memory("race")
    active = 0 if memory is None else len(memory.facts) + len(memory.preferences)
    assert len([r for r in rows if r["is_active"]]) == active


def test_export_gives_every_message_fact_and_preference_with_its_history(service: LedgerService) -> None:
    service.ingest(
        "x", "我住在杭州。我喜欢喝咖啡。", context=[{"role": "assistant", "content": "你好"}], message_id="a"
    )
    service.ingest("x", "我搬到上海了。", message_id="b")
    service.ingest("other", "我住在北京。")
    export = service.export("x")
    assert export["user_id"] == "x" and export["format"] == "factledger-export/1"
    assert [m["message_id"] for m in export["messages"]] == ["a", "b"]
    assert export["messages"][0]["context"] == [{"role": "assistant", "content": "你好"}]
    facts = {f["text"]: f for f in export["facts"]}
    assert facts["用户住在杭州"]["is_active"] is False and "invalidated" in facts["用户住在杭州"]
    assert facts["用户住在上海"]["is_active"] is True
    events = list(service.ledger.user_events("x"))
    preference_ids = [e.preference_id for e in events if isinstance(e, UserMemory.PreferenceObserved)]
    assert [p["id"] for p in export["preferences"]] == preference_ids
    exported = {f["text"] for f in export["facts"]} | {p["text"] for p in export["preferences"]}
    assert set(profile_texts(service, "x")) <= exported
    assert "北京" not in str(export)
