"""Unit tests of the UserMemory aggregate: commands, events, invariants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factledger.domain import (
    DomainError,
    ExtractedFact,
    ExtractedPreference,
    FactNotActive,
    UnknownItem,
    UserMemory,
    fact_category,
    preference_category,
    user_memory_id,
)
from factledger.domain.memory import reinforced_strength
from factledger.domain.values import Verdict

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def started(message_id: str = "m1") -> UserMemory:
    memory = UserMemory.start("user_123")
    memory.ingest_message(message_id, "我在杭州工作", T0, session_id="s1")
    return memory


def test_id_is_derived_from_the_user_id() -> None:
    assert UserMemory.start("user_123").id == user_memory_id("user_123")
    assert user_memory_id("user_123") != user_memory_id("user_124")


def test_observe_then_confirm_counts_mentions_and_boosts_importance() -> None:
    memory = started()
    memory.observe_fact("f1", "用户在杭州工作", "location", 0.9, "m1", T0, "x", session_id="s1")
    memory.ingest_message("m2", "我在杭州工作", T0 + timedelta(days=1))
    memory.confirm_fact("f1", "m2", T0 + timedelta(days=1), Verdict("judge", 0.99))
    fact = memory.fact("f1")
    assert fact.times_mentioned == 2
    assert fact.importance == pytest.approx(0.95)
    assert fact.last_confirmed == T0 + timedelta(days=1)
    assert fact.first_seen == T0


def test_importance_is_capped_at_one() -> None:
    memory = started()
    memory.observe_fact("f1", "用户在杭州工作", "location", 0.98, "m1", T0, "x")
    for i in range(2, 5):
        memory.ingest_message(f"m{i}", "again", T0)
        memory.confirm_fact("f1", f"m{i}", T0, Verdict("judge", 1.0))
    assert memory.fact("f1").importance == 1.0
    assert memory.fact("f1").times_mentioned == 4


def test_invalidated_fact_cannot_be_confirmed_or_invalidated_again() -> None:
    memory = started()
    memory.observe_fact("f1", "用户住在杭州", "location", 0.9, "m1", T0, "x")
    memory.observe_fact("f2", "用户住在上海", "location", 0.9, "m1", T0, "x")
    memory.invalidate_fact("f1", "update", "replaced-by-new-fact", T0, superseded_by="f2", message_id="m1")
    pending = len(memory.pending_events)
    with pytest.raises(FactNotActive):
        memory.confirm_fact("f1", "m1", T0, Verdict("judge", 1.0))
    with pytest.raises(FactNotActive):
        memory.invalidate_fact("f1", "manual", "manual", T0, note="again")
    assert len(memory.pending_events) == pending, "a refused command must not trigger an event"
    assert [f.id for f in memory.active_facts()] == ["f2"]
    assert memory.retired_facts == {"f1": "f2"}, "a retired fact keeps only its id and its successor"
    with pytest.raises(FactNotActive):
        memory.fact("f1")
    assert memory.item_ids() == ["f2", "f1"]


def test_unknown_relation_and_unknown_superseding_fact_are_refused() -> None:
    memory = started()
    memory.observe_fact("f1", "用户住在杭州", "location", 0.9, "m1", T0, "x")
    with pytest.raises(ValueError):
        memory.invalidate_fact("f1", "because", "x", T0)
    with pytest.raises(UnknownItem):
        memory.invalidate_fact("f1", "update", "replaced-by-new-fact", T0, superseded_by="nope")
    assert memory.fact("f1").is_active


def test_a_preference_gives_way_to_a_newer_preference_or_an_active_fact_only() -> None:
    memory = started()
    memory.observe_preference("p1", "最爱玩王者荣耀", "content", 0.9, "m1", T0, "x")
    memory.observe_preference("p2", "偏好简短的回复", "communication_style", 0.8, "m1", T0, "x")
    memory.observe_fact("f1", "用户玩腻了，现在天天玩原神", "other", 0.9, "m1", T0, "x")
    memory.observe_fact("f2", "用户住在杭州", "location", 0.9, "m1", T0, "x")
    memory.invalidate_fact("f2", "manual", "manual", T0, note="wrong")
    pending = len(memory.pending_events)
    for missing in ("nope", "f2", "p1"):  # unknown, a retired fact, itself
        with pytest.raises(UnknownItem):
            memory.supersede_preference("p1", missing, "replaced-by-new-fact", "m1", T0, Verdict("judge", 0.0))
    assert len(memory.pending_events) == pending
    memory.supersede_preference("p1", "f1", "replaced-by-new-fact", "m1", T0, Verdict("judge", 0.0))
    assert memory.retired_preferences == {"p1": "f1"}
    assert [p.id for p in memory.all_preferences()] == ["p2"]


def test_out_of_range_confidence_and_strength_are_refused() -> None:
    memory = started()
    with pytest.raises(DomainError, match="confidence"):
        memory.observe_fact("f1", "用户住在杭州", "location", 1.2, "m1", T0, "x")
    with pytest.raises(DomainError, match="strength"):
        memory.observe_preference("p1", "偏好简短", "communication_style", -0.1, "m1", T0, "x")
    assert memory.facts == {} and memory.preferences == {}


def test_decisions_must_refer_to_the_latest_message() -> None:
    memory = started("m1")
    with pytest.raises(UnknownItem):
        memory.observe_fact("f1", "用户住在杭州", "location", 0.9, "other", T0, "x")


def test_unknown_categories_become_other() -> None:
    memory = started()
    memory.observe_fact("f1", "用户会弹钢琴", "hobby", 0.9, "m1", T0, "x")
    memory.observe_preference("p1", "偏好古典音乐", "music", 0.8, "m1", T0, "x")
    assert memory.fact("f1").category == "other"
    assert memory.preference("p1").category == "other"
    assert fact_category("Location") == "location"
    assert preference_category("communication-style") == "communication_style"
    assert fact_category(None) == "other"


def test_reinforcement_follows_the_spec_formula_and_keeps_five_evidence() -> None:
    memory = started()
    memory.observe_preference("p1", "偏好简短的回复风格", "communication_style", 0.8, "m1", T0, "x", evidence="e0")
    expected = 0.8
    for i in range(1, 8):
        memory.ingest_message(f"m{i + 1}", "简短点", T0)
        memory.reinforce_preference("p1", 1.0, f"m{i + 1}", T0, 0.9, evidence=f"e{i}")
        expected = min(1.0, (expected * i + 1.0 * 1.5) / (i + 1.5))
        assert memory.preference("p1").strength == pytest.approx(expected, abs=1e-6)
        assert memory.preference("p1").times_observed == i + 1
    assert memory.preference("p1").evidence == ("e3", "e4", "e5", "e6", "e7")
    events = [e for e in memory.collect_events() if isinstance(e, UserMemory.PreferenceReinforced)]
    assert events[0].old_strength == 0.8
    assert events[0].new_strength == pytest.approx((0.8 * 1 + 1.5) / 2.5, abs=1e-6)


def test_reinforced_strength_formula() -> None:
    assert reinforced_strength(0.5, 1, 1.0) == pytest.approx(0.8)
    assert reinforced_strength(1.0, 3, 1.0) == 1.0


def test_value_objects_clamp_and_normalise() -> None:
    fact = ExtractedFact("  用户 在杭州工作 ", "nonsense", "1.7")
    assert fact.confidence == 1.0 and fact.category == "other" and fact.text == "用户 在杭州工作"
    pref = ExtractedPreference("偏好简短", "format", -3)
    assert pref.strength == 0.0
    with pytest.raises(ValueError):
        ExtractedFact("   ")
    with pytest.raises(AttributeError):
        fact.text = "x"  # type: ignore[misc]


def test_empty_message_and_user_are_refused() -> None:
    with pytest.raises(DomainError):
        UserMemory.start("  ")
    memory = UserMemory.start("u")
    with pytest.raises(DomainError):
        memory.ingest_message("m1", " ", T0)
