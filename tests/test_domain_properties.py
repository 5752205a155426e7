"""Hypothesis: any command sequence keeps the invariants; replaying events rebuilds the aggregate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.domain import DomainError, UserMemory
from factledger.domain.memory import project_memory
from factledger.domain.values import Verdict

T0 = datetime(2026, 1, 1, tzinfo=UTC)

unit = st.floats(min_value=-0.5, max_value=1.5, allow_nan=False)
texts = st.sampled_from(["用户住在杭州", "用户住在上海", "用户的老板姓张", "用户有车", ""])
command = st.one_of(
    st.tuples(st.just("message"), st.integers(0, 3)),
    st.tuples(st.just("observe_fact"), texts, unit),
    st.tuples(st.just("confirm"), st.integers(0, 6)),
    st.tuples(
        st.just("invalidate"),
        st.integers(0, 6),
        st.sampled_from(["update", "conflict", "retracted", "manual", "bogus"]),
    ),
    st.tuples(st.just("observe_pref"), texts, unit),
    st.tuples(st.just("reinforce"), st.integers(0, 6), unit),
)


def run(commands: list[tuple[Any, ...]]) -> UserMemory:
    memory = UserMemory.start("u")
    counter = 0
    for step, cmd in enumerate(commands):
        at = T0 + timedelta(minutes=step)
        facts = [*memory.facts, *memory.retired_facts]  # retired ones too: commands on them are refused
        prefs = list(memory.preferences)
        before = (len(memory.pending_events), repr(memory.facts), repr(memory.preferences))
        try:
            if cmd[0] == "message":
                counter += 1
                memory.ingest_message(f"m{counter}", "text", at)
            elif cmd[0] == "observe_fact":
                memory.observe_fact(f"f{step}", cmd[1], "location", cmd[2], memory.last_message_id or "-", at, "x")
            elif cmd[0] == "confirm" and facts:
                memory.confirm_fact(facts[cmd[1] % len(facts)], memory.last_message_id or "-", at, Verdict("j", 0.9))
            elif cmd[0] == "invalidate" and facts:
                memory.invalidate_fact(facts[cmd[1] % len(facts)], cmd[2], "manual", at, note="r")
            elif cmd[0] == "observe_pref":
                memory.observe_preference(f"p{step}", cmd[1], "tool", cmd[2], memory.last_message_id or "-", at, "x")
            elif cmd[0] == "reinforce" and prefs:
                memory.reinforce_preference(prefs[cmd[1] % len(prefs)], cmd[2], memory.last_message_id or "-", at, 0.9)
        except (DomainError, ValueError):
            after = (len(memory.pending_events), repr(memory.facts), repr(memory.preferences))
            assert after == before, "a refused command changed the aggregate"
    return memory


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(command, max_size=40))
def test_any_command_sequence_keeps_the_invariants(commands: list[tuple[Any, ...]]) -> None:
    memory = run(commands)
    mentions: dict[str, int] = {}
    observed: dict[str, int] = {}
    invalidated: set[str] = set()
    for event in memory.pending_events:
        if isinstance(event, UserMemory.FactConfirmed):
            assert event.fact_id not in invalidated, "an invalidated fact was confirmed"
            assert event.times_mentioned == mentions.get(event.fact_id, 1) + 1
            mentions[event.fact_id] = event.times_mentioned
        if isinstance(event, UserMemory.FactInvalidated):
            assert event.fact_id not in invalidated, "a fact was invalidated twice"
            invalidated.add(event.fact_id)
        if isinstance(event, UserMemory.PreferenceReinforced):
            assert event.times_observed == observed.get(event.preference_id, 1) + 1
            observed[event.preference_id] = event.times_observed
    assert not set(memory.facts) & set(memory.retired_facts), "a fact is either active or retired"
    assert set(memory.retired_facts) == invalidated
    for fact in memory.facts.values():
        assert 0.0 <= fact.confidence <= 1.0
        assert 0.0 <= fact.importance <= 1.0
        assert fact.times_mentioned >= 1
    for pref in memory.preferences.values():
        assert 0.0 <= pref.strength <= 1.0
        assert pref.times_observed >= 1
        assert len(pref.evidence) <= 5


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(command, max_size=40))
def test_aggregate_rebuilt_from_its_events_equals_the_live_one(commands: list[tuple[Any, ...]]) -> None:
    live = run(commands)
    rebuilt = project_memory(live.pending_events)
    assert rebuilt is not None
    assert vars(rebuilt) | {"_pending_events": []} == vars(live) | {"_pending_events": []}
