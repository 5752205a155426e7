"""Reading a user's events back: why an item is what it is, the profile at a time, the history.

Pure functions over domain events, so they need no read model and give the
same answer however the read model stands.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from factledger.application.results import (
    PROFILE_FACTS,
    PROFILE_PREFERENCES,
    Confirmation,
    Contest,
    Explanation,
    Invalidation,
    ItemRef,
    MessageRef,
    Observation,
    Profile,
    ProfileFact,
    ProfilePreference,
    Reinforcement,
)
from factledger.domain.kinds import Clock, HistoryKind
from factledger.domain.language import main_language
from factledger.domain.memory import UserMemory, project_memory
from factledger.domain.reasons import ABOUT_ITSELF, ReasonCode, render_reason


def page_limits(limit: int | None) -> tuple[int, int]:
    """How many facts and preferences a profile page shows: ``limit`` of each, or the default page."""
    return (PROFILE_FACTS, PROFILE_PREFERENCES) if limit is None else (limit, limit)


def profile_of(memory: UserMemory | None, user_id: str, limit: int | None = None, offset: int = 0) -> Profile:
    """A page of the profile computed from an aggregate (the read model's order: see ``Profile``)."""
    facts_limit, preferences_limit = page_limits(limit)
    if memory is None:
        return Profile(
            user_id, known=False, offset=offset, facts_limit=facts_limit, preferences_limit=preferences_limit
        )
    facts = sorted(memory.active_facts(), key=lambda f: (-f.importance, f.first_seen, f.id))
    prefs = sorted(memory.all_preferences(), key=lambda p: (-p.strength, p.first_seen, p.id))
    return Profile(
        user_id,
        tuple(
            ProfileFact(f.id, f.text, f.category, f.confidence, f.times_mentioned)
            for f in facts[offset : offset + facts_limit]
        ),
        tuple(
            ProfilePreference(p.id, p.text, p.category, p.strength) for p in prefs[offset : offset + preferences_limit]
        ),
        facts_total=len(facts),
        preferences_total=len(prefs),
        offset=offset,
        facts_limit=facts_limit,
        preferences_limit=preferences_limit,
    )


def said_times(events: Sequence[Any]) -> dict[int, datetime]:
    """When each event's message was said, by event version (ADR 0014).

    An event about a message carries its time (``at``); an extraction takes the
    time of its message; a confirmation its ``last_confirmed``; the memory's
    start the time of its first message; anything else the time it was recorded.
    """
    said_at_message = {e.message_id: e.at for e in events if isinstance(e, UserMemory.MessageIngested)}
    first = min(said_at_message.values(), default=None)
    times: dict[int, datetime] = {}
    for e in events:
        if isinstance(e, UserMemory.Started):
            at = first or e.timestamp
        elif isinstance(e, UserMemory.FactConfirmed):
            at = e.last_confirmed
        elif hasattr(e, "at"):
            at = e.at
        else:
            message_id = getattr(e, "message_id", None)
            at = said_at_message.get(message_id, e.timestamp) if isinstance(message_id, str) else e.timestamp
        times[e.originator_version] = at
    return times


def when(event: Any, clock: Clock, said: dict[int, datetime]) -> datetime:
    """The time of an event on one of the two clocks: when it was said, or when it was recorded."""
    return event.timestamp if clock == "recorded" else said[event.originator_version]


def memory_as_of(events: Sequence[Any], until: datetime, clock: Clock = "said") -> UserMemory | None:
    """The memory as it stood at ``until``: after every event said (or recorded) by then.

    By recording time the events are a prefix of the history and project as
    recorded. By the time things were said (an imported log is recorded after
    newer messages), the chosen events are applied in recorded order and one
    that refers to something not chosen (a fact said later) changes nothing.
    """
    if clock == "recorded":
        return project_memory([e for e in events if e.timestamp <= until])
    said = said_times(events)
    chosen = [e for e in events if said[e.originator_version] <= until]
    if not chosen or not isinstance(chosen[0], UserMemory.Started):
        return None
    memory = project_memory(chosen[:1])
    assert memory is not None
    for event in chosen[1:]:
        try:
            event.apply(memory)
        except (KeyError, LookupError):
            continue
    return memory


class _Life:
    """One item's life gathered from a user's events: a handler per kind of event (``_READERS``)."""

    def __init__(self, events: Sequence[Any], item_id: str) -> None:
        self.item_id = item_id
        self.messages = {e.message_id: e for e in events if isinstance(e, UserMemory.MessageIngested)}
        self.texts = {
            e.fact_id if isinstance(e, UserMemory.FactObserved) else e.preference_id: e.text
            for e in events
            if isinstance(e, (UserMemory.FactObserved, UserMemory.PreferenceObserved))
        }
        self.found: dict[str, Any] = {}
        self.confirmations: list[Confirmation] = []
        self.contests: list[Contest] = []
        self.reinforcements: list[Reinforcement] = []

    def message(self, message_id: str | None) -> MessageRef | None:
        m = self.messages.get(message_id) if message_id is not None else None
        return MessageRef(m.message_id, m.text, m.session_id, m.at) if m is not None else None

    @functools.cached_property
    def language(self) -> str:
        """The language the user's memories are in: reasons are shown in it, whatever they were stored
        as (read only for an item that ended: an export explains every item)."""
        return main_language("\n".join(self.texts.values()))

    def reason(self, code: ReasonCode, words: str | None, item_id: str, successor: str | None) -> str:
        """A recorded reason as the user reads it: the code's sentence naming the item it is about
        (the successor, or the item itself), or the words a person gave."""
        about = self.texts.get(item_id if code in ABOUT_ITSELF else successor or "")
        return render_reason(code, self.language, words, about)

    def ref(self, item_id: str | None, relation: str | None = None, rules: Sequence[str] = ()) -> ItemRef | None:
        return ItemRef(item_id, self.texts.get(item_id), relation, tuple(rules)) if item_id else None

    def fact_observed(self, e: Any) -> None:
        if e.fact_id == self.item_id:
            self.found.update(
                kind="fact",
                text=e.text,
                category=e.category,
                authority=e.authority,
                observed=Observation(
                    at=e.at,
                    recorded_at=e.timestamp,
                    extractor_id=e.extractor_id,
                    prompt_id=e.prompt_id,
                    session_id=e.session_id,
                    message=self.message(e.message_id),
                    confidence=e.confidence,
                    actor=e.actor,
                    rules=tuple(e.rules),
                ),
            )

    def fact_invalidated(self, e: Any) -> None:
        if e.superseded_by == self.item_id:
            self.found["supersedes"] = self.ref(e.fact_id, e.relation, e.rules)
        elif e.fact_id == self.item_id:
            self.found["invalidated"] = Invalidation(
                at=e.at,
                relation=e.relation,
                reason=self.reason(e.reason_code, e.reason, e.fact_id, e.superseded_by),
                reason_code=e.reason_code,
                actor=e.actor,
                superseded_by=self.ref(e.superseded_by),
                verdict=e.verdict,
                message=self.message(e.message_id),
                rules=tuple(e.rules),
            )

    def fact_confirmed(self, e: Any) -> None:
        if e.fact_id == self.item_id:
            self.confirmations.append(
                Confirmation(
                    e.last_confirmed,
                    e.times_mentioned,
                    e.importance,
                    e.verdict,
                    self.message(e.message_id),
                    tuple(e.rules),
                )
            )

    def fact_contested(self, e: Any) -> None:
        if e.fact_id == self.item_id:
            said = self.message(e.message_id)
            self.contests.append(Contest(e.at, e.challenger_text, e.relation, e.verdict, said, tuple(e.rules)))

    def preference_observed(self, e: Any) -> None:
        if e.preference_id == self.item_id:
            self.found.update(
                kind="preference",
                text=e.text,
                category=e.category,
                observed=Observation(
                    at=e.at,
                    recorded_at=e.timestamp,
                    extractor_id=e.extractor_id,
                    prompt_id=e.prompt_id,
                    session_id=e.session_id,
                    message=self.message(e.message_id),
                    strength=e.strength,
                    evidence=tuple(e.evidence),
                    rules=tuple(e.rules),
                ),
            )

    def preference_superseded(self, e: Any) -> None:
        if e.superseded_by == self.item_id:
            self.found["supersedes"] = self.ref(e.preference_id, "update", e.rules)
        elif e.preference_id == self.item_id:
            self.found["invalidated"] = Invalidation(
                at=e.at,
                relation="update",
                reason=self.reason(e.reason_code, e.reason, e.preference_id, e.superseded_by),
                reason_code=e.reason_code,
                actor=None,
                superseded_by=self.ref(e.superseded_by),
                verdict=e.verdict,
                message=self.message(e.message_id),
                rules=tuple(e.rules),
            )

    def preference_reinforced(self, e: Any) -> None:
        if e.preference_id == self.item_id:
            self.reinforcements.append(
                Reinforcement(
                    at=e.at,
                    observed_strength=e.observed_strength,
                    old_strength=e.old_strength,
                    new_strength=e.new_strength,
                    evidence=tuple(e.evidence),
                    times_observed=e.times_observed,
                    similarity=e.similarity,
                    message=self.message(e.message_id),
                )
            )


_READERS: dict[type, Callable[[_Life, Any], None]] = {
    UserMemory.FactObserved: _Life.fact_observed,
    UserMemory.FactInvalidated: _Life.fact_invalidated,
    UserMemory.FactConfirmed: _Life.fact_confirmed,
    UserMemory.FactContested: _Life.fact_contested,
    UserMemory.PreferenceObserved: _Life.preference_observed,
    UserMemory.PreferenceSuperseded: _Life.preference_superseded,
    UserMemory.PreferenceReinforced: _Life.preference_reinforced,
}


def explain(events: Sequence[Any], item_id: str) -> Explanation:
    """The whole life of one fact or preference, from its events."""
    life = _Life(events, item_id)
    for e in events:
        reader = _READERS.get(type(e))
        if reader is not None:
            reader(life, e)
    if "kind" not in life.found:
        raise LookupError(item_id)
    return Explanation(
        id=item_id,
        confirmations=tuple(life.confirmations),
        contested=tuple(life.contests),
        reinforcements=tuple(life.reinforcements),
        **life.found,
    )


HISTORY_EVENTS: dict[HistoryKind, tuple[type[Any], ...]] = {
    "message": (UserMemory.MessageIngested, UserMemory.ExtractionRecorded, UserMemory.ExtractionFailed),
    "fact": (
        UserMemory.FactObserved,
        UserMemory.FactConfirmed,
        UserMemory.FactInvalidated,
        UserMemory.FactContested,
        UserMemory.FactMentioned,
    ),
    "preference": (
        UserMemory.PreferenceObserved,
        UserMemory.PreferenceReinforced,
        UserMemory.PreferenceSuperseded,
        UserMemory.PreferenceMentioned,
    ),
}


def select_history(
    events: Sequence[Any],
    since: datetime | None = None,
    until: datetime | None = None,
    kind: HistoryKind | None = None,
    clock: Clock = "said",
) -> list[Any]:
    """Events said (or recorded) in [since, until], of one kind (message | fact | preference),
    in recorded order."""
    wanted = HISTORY_EVENTS[kind] if kind else None
    said = said_times(events)
    return [
        e
        for e in events
        if (since is None or when(e, clock, said) >= since)
        and (until is None or when(e, clock, said) <= until)
        and (wanted is None or isinstance(e, wanted))
    ]
