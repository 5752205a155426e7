"""Why, history filters, time travel and manual corrections (authority)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from scripted import ScriptedExtractor

from factledger.application.errors import NotFound
from factledger.application.service import InvalidInput, LedgerService
from factledger.application.validation import resolve_prefix
from factledger.domain import DomainError


def _invalidations(service: LedgerService, user: str) -> list[dict]:
    return [e for e in [e.to_dict() for e in service.history(user)] if e["event"] == "FactInvalidated"]


def test_why_explains_an_update_with_the_triggering_message(service: LedgerService) -> None:
    old = service.ingest("u", "我住在杭州", session_id="s1")
    service.ingest("u", "我住在杭州", session_id="s2")
    moved = service.ingest("u", "我搬到上海了", session_id="s3")
    life = service.why("u", old.items[0].id[:8]).to_dict()
    assert life["kind"] == "fact" and life["text"] == "用户住在杭州" and life["is_active"] is False
    assert life["observed"]["message"]["text"] == "我住在杭州"
    assert life["observed"]["extractor_id"] == service.extractor.extractor_id
    assert [c["message"]["session_id"] for c in life["confirmations"]] == ["s2"]
    inv = life["invalidated"]
    assert inv["relation"] == "update"
    assert inv["superseded_by"] == {"id": moved.items[0].id, "text": "用户住在上海"}
    assert inv["message"]["text"] == "我搬到上海了" and inv["message"]["message_id"] == moved.message_id
    assert inv["judge_id"] == service.judge.judge_id and inv["raw_answer"] and inv["similarity"] >= 0.75
    newer = service.why("u", moved.items[0].id).to_dict()
    assert newer["supersedes"]["text"] == "用户住在杭州" and newer["is_active"] is True


def test_why_explains_a_conflict(service: LedgerService) -> None:
    has = service.ingest("u", "我有车").items[0]
    service.ingest("u", "我没有车")
    inv = service.why("u", has.id).to_dict()["invalidated"]
    assert inv["relation"] == "conflict"
    assert inv["message"]["text"] == "我没有车"
    assert inv["superseded_by"]["text"] == "用户没有车"


def test_why_shows_every_strength_change_of_a_preference(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(
        extractor=ScriptedExtractor(
            {
                "a": ([], [("偏好简短的回复风格", "communication_style", 0.8, "e1")]),
                "b": ([], [("偏好简短的回复风格", "communication_style", 1.0, "e2")]),
            }
        )
    )
    pref = service.ingest("u", "a").items[0]
    service.ingest("u", "b")
    life = service.why("u", pref.id).to_dict()
    assert life["kind"] == "preference" and life["observed"]["strength"] == 0.8
    [r] = life["reinforcements"]
    assert (r["old_strength"], r["new_strength"]) == (0.8, pytest.approx(0.92))
    assert r["evidence"] == ["e1", "e2"] and r["message"]["text"] == "b"


def test_ids_resolve_by_unique_prefix_only(service: LedgerService) -> None:
    service.ingest("u", "我在杭州工作，老板姓张，平时喜欢简短的回复")
    with pytest.raises(NotFound, match="no fact or preference id starts with"):
        service.why("u", "zzzz")
    with pytest.raises(InvalidInput, match="ambiguous"):
        resolve_prefix("ab", ["abc1", "abd2", "xyz"], "fact")
    assert resolve_prefix("abd", ["abc1", "abd2", "xyz"], "fact") == "abd2"
    with pytest.raises(NotFound, match="nothing is recorded"):
        service.why("nobody", "abc")


def test_history_filters_by_time_and_kind(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    middle = datetime.now(UTC)
    time.sleep(0.01)
    service.ingest("u", "平时喜欢简短的回复")
    assert {e["event"] for e in [e.to_dict() for e in service.history("u", kind="message")]} == {
        "MessageIngested",
        "ExtractionRecorded",
    }
    assert {e["event"] for e in [e.to_dict() for e in service.history("u", kind="preference")]} == {
        "PreferenceObserved"
    }
    late = [e.to_dict() for e in service.history("u", since=middle)]
    assert [e["text"] for e in late if e["event"] == "MessageIngested"] == ["平时喜欢简短的回复"]
    early = [e.to_dict() for e in service.history("u", until=middle)]
    assert [e["text"] for e in early if e["event"] == "MessageIngested"] == ["我住在杭州"]
    with pytest.raises(InvalidInput, match="kind must be one of"):
        [e.to_dict() for e in service.history("u", kind="facts")]


def test_profile_as_of_matches_what_profile_said_then(service: LedgerService) -> None:
    snapshots = []
    for text in [
        "我住在杭州",
        "我在杭州工作，老板姓张，平时喜欢简短的回复",
        "我住在杭州",
        "我搬到上海了",
        "我有车",
        "我没有车",
    ]:
        service.ingest("u", text)
        snapshots.append((datetime.now(UTC), service.profile("u").to_dict()))
        time.sleep(0.005)
    for at, seen in snapshots:
        assert service.profile("u", as_of=at).to_dict() == seen
    assert service.profile("u", as_of=datetime(2000, 1, 1, tzinfo=UTC)).to_dict()["facts_count"] == 0


def test_manual_invalidation_is_recorded_with_reason_and_actor(service: LedgerService) -> None:
    fact = service.ingest("u", "我住在杭州").items[0]
    full = service.invalidate("u", fact.id[:10], "用户说这是错的", actor="operator-7")
    assert full == fact.id
    inv = service.why("u", fact.id).to_dict()["invalidated"]
    assert (inv["relation"], inv["reason"], inv["actor"]) == ("manual", "用户说这是错的", "operator-7")
    assert service.profile("u").to_dict()["facts_count"] == 0
    with pytest.raises(DomainError, match="no longer active"):
        service.invalidate("u", fact.id, "again")


def test_restated_fact_replaces_a_stated_one_and_is_only_contested_later(service: LedgerService) -> None:
    stated = service.ingest("u", "我住在杭州").items[0]
    manual = service.restate("u", "用户住在北京", category="location", actor="ops")
    assert manual.action == "superseded" and manual.superseded_id == stated.id
    assert service.why("u", stated.id).to_dict()["invalidated"]["relation"] == "manual"
    later = service.ingest("u", "我搬到上海了").items[0]
    assert later.action == "contested" and later.id == manual.id
    life = service.why("u", manual.id).to_dict()
    assert life["authority"] == "manual" and life["is_active"] is True
    assert life["observed"]["actor"] == "ops" and life["observed"]["message"] is None
    [contest] = life["contested"]
    assert contest["challenger"] == "用户住在上海" and contest["message"]["text"] == "我搬到上海了"
    assert [f["fact"] for f in service.profile("u").to_dict()["facts"]["location"]] == ["用户住在北京"]


def test_an_inferred_fact_never_invalidates_a_stated_one(open_service: Callable[..., LedgerService]) -> None:
    from factledger.domain.values import ExtractedFact, Extraction

    class Inferring(ScriptedExtractor):
        def extract(self, message, context=(), known_facts=()):  # type: ignore[no-untyped-def]
            found = super().extract(message, context, known_facts)
            if message == "夜猫子":
                return Extraction(self.extractor_id, [ExtractedFact("用户住在上海", "location", 0.6, inferred=True)])
            return found

    service = open_service(extractor=Inferring({"住": ([("用户住在杭州", "location", 0.9)], [])}))
    stated = service.ingest("u", "住").items[0]
    challenge = service.ingest("u", "夜猫子").items[0]
    assert challenge.action == "contested" and challenge.id == stated.id
    assert service.why("u", stated.id).to_dict()["is_active"] is True


def test_filters_and_as_of_use_the_time_things_were_said(service: LedgerService) -> None:
    from datetime import datetime

    def at(month: int) -> datetime:
        return datetime(2024, month, 1, tzinfo=UTC)

    # An imported log: said in 2024, recorded today.
    service.ingest("u", "我住在杭州", timestamp=at(1))
    service.ingest("u", "我搬到上海了", timestamp=at(6))

    def residence(**kw: object) -> list[str]:
        profile = service.profile("u", **kw).to_dict()  # type: ignore[arg-type]
        return [f["fact"] for f in profile["facts"].get("location", [])]

    assert residence(as_of=at(3)) == ["用户住在杭州"]
    assert residence(as_of=at(7)) == ["用户住在上海"]
    assert residence(as_of=at(3), clock="recorded") == [], "nothing was recorded in March 2024"
    early = service.history("u", until=at(3))
    assert {e.event for e in early} >= {"Started", "MessageIngested", "FactObserved"}
    assert all(e.said_at is not None and e.said_at <= at(3) for e in early)
    assert "FactInvalidated" not in {e.event for e in early}
    assert len(service.history("u", until=at(3), clock="recorded")) == 0
    later = service.history("u", since=at(5)).to_dict()["entries"]
    assert [e["event"] for e in later if e["event"] == "FactInvalidated"] == ["FactInvalidated"]
    assert {"said_at", "recorded_at"} <= set(later[0])
    with pytest.raises(InvalidInput, match="clock must be one of"):
        service.history("u", clock="wall")


def test_as_of_a_time_between_an_old_import_and_newer_messages_ignores_what_was_said_later(
    service: LedgerService,
) -> None:
    from datetime import datetime

    service.ingest("u", "我住在北京", timestamp=datetime(2026, 1, 5, tzinfo=UTC))
    # Recorded after, said before: it replaces a fact that was said later.
    service.ingest("u", "我搬到上海了", timestamp=datetime(2025, 1, 5, tzinfo=UTC))
    profile = service.profile("u", as_of=datetime(2025, 6, 1, tzinfo=UTC)).to_dict()
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户住在上海"]
