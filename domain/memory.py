"""The ``UserMemory`` aggregate: everything one user told the assistant, as events.

Each event class declares its fields once and applies itself; commands
validate first and only then trigger an event, so a refused command leaves
neither an event nor a changed state behind.

The state stays as small as the user's *current* memory, whatever the
length of the history: active facts and preferences as immutable records,
the ids of retired (invalidated) facts, and a window of recent message ids.
What a retired fact said lives in its events (``why``, ``history``). Fact and
preference records are replaced, never changed in place, so a copy of the
aggregate shares them: copying costs a few dict copies, not a deep copy of
every fact (ADR 0012).
"""

from __future__ import annotations

import copy
import functools
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import attrs
from eventsourcing.domain import Aggregate, event

from factledger.domain.categories import fact_category, preference_category
from factledger.domain.errors import DomainError, DuplicateMessage, FactNotActive, UnknownItem
from factledger.domain.reasons import ReasonCode, reason_code, reason_of_literal
from factledger.domain.values import Authority, Extraction, InvalidationRelation, Verdict, has_unstorable

__all__ = [
    "DomainError",
    "DuplicateMessage",
    "Fact",
    "FactNotActive",
    "Mention",
    "Preference",
    "Span",
    "UnknownItem",
    "UserMemory",
    "project_memory",
    "reinforced_strength",
    "user_memory_id",
]

NAMESPACE = uuid.UUID("6f1c1d1e-6a0e-4d2b-9a55-2f3f6e7d9b10")
EVIDENCE_KEPT = 5
CONFIRMATION_BOOST = 0.05
NEW_OBSERVATION_WEIGHT = 1.5
RECENT_MESSAGES = 100
#: retired facts (and preferences) whose text and time span are kept for deciding a message said before
#: their end (ADR 0025); the oldest retired beyond this are known by id only, so the state stays bounded
PAST_KEPT = 256
#: the latest times a fact was said again that it keeps (ADR 0025)
MENTIONS_KEPT = 4


@functools.lru_cache(maxsize=4096)
def user_memory_id(user_id: str) -> uuid.UUID:
    """The aggregate id of a user: the same user id always gives the same id (remembered:
    a message asks for it a dozen times, and a uuid5 is a SHA-1)."""
    return uuid.uuid5(NAMESPACE, user_id)


def _check_text(name: str, text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise DomainError(f"{name} must be a non-empty string")
    if has_unstorable(text):
        raise DomainError(f"{name} holds control characters or unpaired surrogates; clean it first")
    return text


def _check_unit(name: str, value: float) -> float:
    if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise DomainError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def reinforced_strength(old_strength: float, times_observed: int, observed: float) -> float:
    """The spec's weighted mean: the new observation weighs 1.5 against each old one."""
    new = (old_strength * times_observed + observed * NEW_OBSERVATION_WEIGHT) / (
        times_observed + NEW_OBSERVATION_WEIGHT
    )
    return round(min(1.0, max(0.0, new)), 6)


def _strings(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(items)


@attrs.frozen
class Mention:
    """A time a fact was said again, and the message that said it."""

    at: datetime
    message_id: str
    text: str | None = None  # what was said, where known


def _mentions(items: Iterable[Mention]) -> tuple[Mention, ...]:
    return tuple(items)


def _mentioned(mentions: tuple[Mention, ...], mention: Mention) -> tuple[Mention, ...]:
    """The latest ``MENTIONS_KEPT`` mentions, by when they were said."""
    return tuple(sorted([*mentions, mention], key=lambda m: m.at)[-MENTIONS_KEPT:])


@attrs.frozen
class Fact:
    """An active fact, as the aggregate holds it."""

    id: str
    text: str
    category: str
    confidence: float
    importance: float
    times_mentioned: int
    first_seen: datetime
    last_confirmed: datetime
    session_id: str | None
    message_id: str | None
    authority: str = Authority.STATED.value
    contested: int = 0
    is_active: bool = True  # only active facts are held; kept for readers of the record
    # the latest times it was said again (ADR 0025); a snapshot of class version 2 has none
    mentions: tuple[Mention, ...] = attrs.field(default=(), converter=_mentions)


@attrs.frozen
class Preference:
    """A preference, as the aggregate holds it."""

    id: str
    text: str
    category: str
    strength: float
    evidence: tuple[str, ...] = attrs.field(converter=_strings)
    times_observed: int
    first_seen: datetime
    last_confirmed: datetime
    session_id: str | None
    message_id: str | None
    # the latest times it was said again (ADR 0025); a snapshot of class version 2 has none
    mentions: tuple[Mention, ...] = attrs.field(default=(), converter=_mentions)


@attrs.frozen
class Span:
    """A retired fact or preference: what it said and when it held, [``valid_from``, ``valid_until``).

    Kept (the latest ``PAST_KEPT``) so that a message said before a later statement
    is decided against what was true when it was said (ADR 0025).
    """

    id: str
    text: str
    category: str
    valid_from: datetime
    valid_until: datetime | None  # None: still active
    successor: str | None
    authority: str = Authority.STATED.value
    confidence: float = 1.0  # a preference's strength
    mentions: tuple[Mention, ...] = attrs.field(default=(), converter=_mentions)
    message_id: str | None = None  # the message it was first said in

    def sayings(self) -> list[Mention]:
        """Every kept time it was said while it held: its first, then its mentions."""
        first = [Mention(self.valid_from, self.message_id, self.text)] if self.message_id is not None else []
        return first + [m for m in self.mentions if self.holds_at(m.at)]

    def said_again_after(self, at: datetime) -> Mention | None:
        """The first time it was said again after ``at`` while it held."""
        return next(
            (m for m in self.mentions if at < m.at and (self.valid_until is None or m.at < self.valid_until)), None
        )

    def holds_at(self, at: datetime) -> bool:
        return self.valid_from <= at and (self.valid_until is None or at < self.valid_until)


def _keep_past(past: dict[str, Span], span: Span) -> None:
    past[span.id] = span
    while len(past) > PAST_KEPT:
        del past[next(iter(past))]


def _span(item: Fact | Preference) -> Span:
    if isinstance(item, Fact):
        said = (item.authority, item.confidence, item.mentions, item.message_id)
        return Span(item.id, item.text, item.category, item.first_seen, None, None, *said)
    said_pref = (Authority.STATED.value, item.strength, item.mentions, item.message_id)
    return Span(item.id, item.text, item.category, item.first_seen, None, None, *said_pref)


def _around(active: list[Span], past: dict[str, Span], at: datetime) -> tuple[list[Span], list[Span]]:
    # an item absorbed by one said before it (it ended where it began) never held
    spans = sorted([s for s in [*past.values(), *active] if s.valid_until != s.valid_from], key=lambda s: s.valid_from)
    return [s for s in spans if s.holds_at(at)], [s for s in spans if s.valid_from > at]


def _later(current: datetime | None, at: datetime) -> datetime:
    return at if current is None or at > current else current


class UserMemory(Aggregate):
    """One user's memory. Its id is derived from the user id (``user_memory_id``)."""

    # 2: active facts and preferences as records, retired facts as ids (snapshots of 1 are upcast).
    # 3: the spans of recently retired items and the latest said time decided on (ADR 0025).
    class_version = 3

    @staticmethod
    def create_id(user_id: str) -> uuid.UUID:
        return user_memory_id(user_id)

    # ---- events ---------------------------------------------------------------

    class Started(Aggregate.Created):
        user_id: str

    class MessageIngested(Aggregate.Event):
        # 2: ``redacted``, how many secrets of each kind were replaced by placeholders before recording.
        class_version = 2
        message_id: str
        session_id: str | None
        text: str
        context: list[dict[str, str]]
        at: datetime
        redacted: dict[str, int]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["redacted"] = {}

        def apply(self, aggregate: UserMemory) -> None:
            aggregate.messages_ingested += 1
            aggregate.last_message_id = self.message_id
            aggregate.recent_message_ids = ([*aggregate.recent_message_ids, self.message_id])[-RECENT_MESSAGES:]

    class ExtractionRecorded(Aggregate.Event):
        """What the extractor said about a message: items, raw answer, extractor and prompt id."""

        # 2: a typed Extraction; version 1 held a dict that also carried LLM token counts.
        class_version = 2
        message_id: str
        extraction: Extraction

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            state["extraction"] = Extraction.from_dict(state["extraction"])

        def apply(self, aggregate: UserMemory) -> None:
            if self.message_id in aggregate.failed_extractions:
                aggregate.failed_extractions.remove(self.message_id)
            # The decisions that follow in the same save refer to this message,
            # which may be an older one whose extraction is being retried.
            aggregate.deciding_message_id = self.message_id

    class ExtractionFailed(Aggregate.Event):
        """The extractor gave no usable answer; the message waits for ``retry-failed``."""

        message_id: str
        extractor_id: str
        prompt_id: str | None
        error: str
        raw_output: str

        def apply(self, aggregate: UserMemory) -> None:
            if self.message_id not in aggregate.failed_extractions:
                aggregate.failed_extractions.append(self.message_id)

    class FactObserved(Aggregate.Event):
        # 2: ``rules``, the ids of the extractor's rules that produced the fact (issue 27).
        class_version = 2
        fact_id: str
        text: str
        category: str
        confidence: float
        message_id: str | None
        session_id: str | None
        extractor_id: str
        at: datetime
        conflicts_with: str | None
        authority: str
        prompt_id: str | None
        actor: str | None
        rules: list[str]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        def apply(self, aggregate: UserMemory) -> None:
            aggregate.facts[self.fact_id] = Fact(
                id=self.fact_id,
                text=self.text,
                category=self.category,
                confidence=self.confidence,
                importance=self.confidence,
                times_mentioned=1,
                first_seen=self.at,
                last_confirmed=self.at,
                session_id=self.session_id,
                message_id=self.message_id,
                authority=self.authority,
            )
            aggregate.said_until = _later(aggregate.said_until, self.at)

    class FactConfirmed(Aggregate.Event):
        # 2: the judge's provenance as one Verdict (version 1 had four flat fields).
        # 3: ``said_at`` and ``said_text``: when the mention was said (``last_confirmed`` is the
        # latest of all) and in what words (ADR 0025).
        # 4: ``rules``, the ids of the rules that found it said again (issue 27).
        class_version = 4
        fact_id: str
        message_id: str
        session_id: str | None
        times_mentioned: int
        last_confirmed: datetime
        importance: float
        verdict: Verdict
        said_at: datetime
        said_text: str | None
        rules: list[str]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            _group_verdict(state)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            # mentions were recorded in the order said, so the latest time was this one's
            state["said_at"] = state["last_confirmed"]
            state["said_text"] = None

        @staticmethod
        def upcast_v3_v4(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        def apply(self, aggregate: UserMemory) -> None:
            fact = aggregate.facts[self.fact_id]
            aggregate.facts[self.fact_id] = attrs.evolve(
                fact,
                times_mentioned=self.times_mentioned,
                last_confirmed=self.last_confirmed,
                importance=self.importance,
                mentions=_mentioned(fact.mentions, Mention(self.said_at, self.message_id, self.said_text)),
            )
            aggregate.said_until = _later(aggregate.said_until, self.said_at)

    class FactInvalidated(Aggregate.Event):
        # 2: the judge's provenance as one Verdict, None for a manual invalidation.
        # 3: ``rules``, the ids of the rules that decided the invalidation (issue 27).
        # 4: ``reason_code``, why as a stable code (domain/reasons.py); ``reason`` only the words a
        # person wrote beside it (None when the code says it all): version 3 held a Chinese sentence.
        class_version = 4
        fact_id: str
        relation: str
        reason: str | None
        superseded_by: str | None
        message_id: str | None
        at: datetime
        verdict: Verdict | None
        actor: str | None
        rules: list[str]
        reason_code: ReasonCode

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            _group_verdict(state)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        @staticmethod
        def upcast_v3_v4(state: dict[str, Any]) -> None:
            _code_reason(state, manual=state["relation"] == InvalidationRelation.MANUAL.value)

        def apply(self, aggregate: UserMemory) -> None:
            fact = aggregate.facts.pop(self.fact_id, None)
            span: Span | None
            if fact is not None:
                span = Span(
                    fact.id,
                    fact.text,
                    fact.category,
                    fact.first_seen,
                    self.at,
                    self.superseded_by,
                    fact.authority,
                    fact.confidence,
                    fact.mentions,
                    fact.message_id,
                )
            elif self.fact_id in aggregate.retired_facts:
                # Ended earlier: a message said before the known end replaced the fact (ADR 0025).
                known = aggregate.past_facts.get(self.fact_id)
                span = None if known is None else attrs.evolve(known, valid_until=self.at, successor=self.superseded_by)
            else:
                raise KeyError(self.fact_id)  # a fact this (partial) history never held
            aggregate.retired_facts[self.fact_id] = self.superseded_by
            if span is not None:
                _keep_past(aggregate.past_facts, span)
            aggregate.said_until = _later(aggregate.said_until, self.at)

    class FactContested(Aggregate.Event):
        """A message contradicted a fact that outranks it; the fact stays, the challenge is kept."""

        # 3: ``rules``, the ids of the rules that decided the challenge (issue 27).
        class_version = 3
        fact_id: str
        challenger_text: str
        relation: str
        message_id: str
        at: datetime
        verdict: Verdict
        rules: list[str]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            _group_verdict(state)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        def apply(self, aggregate: UserMemory) -> None:
            fact = aggregate.facts[self.fact_id]
            aggregate.facts[self.fact_id] = attrs.evolve(fact, contested=fact.contested + 1)

    class PreferenceObserved(Aggregate.Event):
        # 2: ``rules``, the ids of the extractor's rules that produced the preference (issue 27).
        class_version = 2
        preference_id: str
        text: str
        category: str
        strength: float
        evidence: list[str]
        message_id: str
        session_id: str | None
        extractor_id: str
        at: datetime
        prompt_id: str | None
        rules: list[str]

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        def apply(self, aggregate: UserMemory) -> None:
            aggregate.preferences[self.preference_id] = Preference(
                id=self.preference_id,
                text=self.text,
                category=self.category,
                strength=self.strength,
                evidence=self.evidence,
                times_observed=1,
                first_seen=self.at,
                last_confirmed=self.at,
                session_id=self.session_id,
                message_id=self.message_id,
            )
            aggregate.said_until = _later(aggregate.said_until, self.at)

    class PreferenceSuperseded(Aggregate.Event):
        """A newer preference of the same kind replaced this one (以前喜欢…现在…): it stops being active."""

        # 2: ``rules``, the ids of the rules that decided the supersession (issue 27).
        # 3: ``reason_code`` and ``reason`` as ``FactInvalidated`` has them from its version 4.
        class_version = 3
        preference_id: str
        superseded_by: str
        reason: str | None
        message_id: str
        at: datetime
        verdict: Verdict
        rules: list[str]
        reason_code: ReasonCode

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            traced_by_no_rule(state)

        @staticmethod
        def upcast_v2_v3(state: dict[str, Any]) -> None:
            _code_reason(state, manual=False)

        def apply(self, aggregate: UserMemory) -> None:
            pref = aggregate.preferences.pop(self.preference_id, None)
            span: Span | None
            if pref is not None:
                span = Span(
                    pref.id,
                    pref.text,
                    pref.category,
                    pref.first_seen,
                    self.at,
                    self.superseded_by,
                    confidence=pref.strength,
                    mentions=pref.mentions,
                    message_id=pref.message_id,
                )
            elif self.preference_id in aggregate.retired_preferences:
                known = aggregate.past_preferences.get(self.preference_id)
                span = None if known is None else attrs.evolve(known, valid_until=self.at, successor=self.superseded_by)
            else:
                raise KeyError(self.preference_id)
            aggregate.retired_preferences[self.preference_id] = self.superseded_by
            if span is not None:
                _keep_past(aggregate.past_preferences, span)
            aggregate.said_until = _later(aggregate.said_until, self.at)

    class PreferenceReinforced(Aggregate.Event):
        # 2: ``said_at`` and ``said_text``: when the mention was said (``at`` is the latest of
        # all) and in what words (ADR 0025).
        class_version = 2
        preference_id: str
        observed_strength: float
        old_strength: float
        new_strength: float
        evidence: list[str]
        times_observed: int
        message_id: str
        session_id: str | None
        similarity: float
        at: datetime
        said_at: datetime
        said_text: str | None

        @staticmethod
        def upcast_v1_v2(state: dict[str, Any]) -> None:
            # mentions were recorded in the order said, so the latest time was this one's
            state["said_at"] = state["at"]
            state["said_text"] = None

        def apply(self, aggregate: UserMemory) -> None:
            pref = aggregate.preferences[self.preference_id]
            aggregate.preferences[self.preference_id] = attrs.evolve(
                pref,
                strength=self.new_strength,
                evidence=self.evidence,
                times_observed=self.times_observed,
                last_confirmed=self.at,
                mentions=_mentioned(pref.mentions, Mention(self.said_at, self.message_id, self.said_text)),
            )
            aggregate.said_until = _later(aggregate.said_until, self.said_at)

    class FactMentioned(Aggregate.Event):
        """A retired fact said again at a time it still held (a message said before its end,
        recorded after it): the mention is kept with it, for deciding later (ADR 0025)."""

        fact_id: str
        message_id: str
        said_at: datetime
        said_text: str | None
        verdict: Verdict

        def apply(self, aggregate: UserMemory) -> None:
            _keep_mention(aggregate.past_facts, aggregate.retired_facts, self.fact_id, self)

    class PreferenceMentioned(Aggregate.Event):
        """As ``FactMentioned``, for a retired preference."""

        preference_id: str
        message_id: str
        said_at: datetime
        said_text: str | None
        verdict: Verdict

        def apply(self, aggregate: UserMemory) -> None:
            _keep_mention(aggregate.past_preferences, aggregate.retired_preferences, self.preference_id, self)

    # ---- state ----------------------------------------------------------------

    @event(Started)
    def __init__(self, user_id: str) -> None:
        self.user_id = user_id
        self.messages_ingested = 0
        # Only the latest message id is kept: decisions always refer to the
        # message just ingested, and the state must not grow with every message.
        self.last_message_id: str | None = None
        # A bounded window: the domain's own guard against a retried delivery
        # (the store keeps every message id; see the message-id index).
        self.recent_message_ids: list[str] = []
        # Messages whose extraction failed: decisions may still refer to them later.
        self.failed_extractions: list[str] = []
        self.deciding_message_id: str | None = None
        self.facts: dict[str, Fact] = {}  # active facts only
        self.retired_facts: dict[str, str | None] = {}  # invalidated fact id -> the fact that replaced it
        self.preferences: dict[str, Preference] = {}  # active preferences only
        self.retired_preferences: dict[str, str] = {}  # superseded preference id -> its successor
        # What the latest retired items said and when they held, and the latest said time of any
        # decision: a message said before it is decided against the timeline (ADR 0025).
        self.past_facts: dict[str, Span] = {}
        self.past_preferences: dict[str, Span] = {}
        self.said_until: datetime | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> UserMemory:
        # The repository copies a cached aggregate before every command: the
        # records are immutable and replaced on change, so sharing them is safe.
        clone = copy.copy(self)
        clone.__dict__.update(
            {key: copy.copy(value) for key, value in self.__dict__.items() if isinstance(value, (dict, list))}
        )
        return clone

    @staticmethod
    def upcast_v1_v2(state: dict[str, Any]) -> None:
        """A version-1 snapshot held every fact ever seen as a dict, active or not."""
        facts, retired = {}, {}
        for fact_id, data in state["facts"].items():
            if data.get("is_active", True):
                facts[fact_id] = Fact(
                    id=fact_id, **{k: v for k, v in data.items() if k not in ("is_active", "invalidated_by")}
                )
            else:
                retired[fact_id] = data.get("invalidated_by")
        state["facts"] = facts
        state["retired_facts"] = retired
        state["preferences"] = {pid: Preference(id=pid, **data) for pid, data in state["preferences"].items()}
        state["retired_preferences"] = {}

    @staticmethod
    def upcast_v2_v3(state: dict[str, Any]) -> None:
        """A version-2 snapshot kept no spans: retired items before it are known by id only."""
        state["past_facts"] = {}
        state["past_preferences"] = {}
        times = [f.first_seen for f in state["facts"].values()] + [p.first_seen for p in state["preferences"].values()]
        state["said_until"] = max(times, default=None)

    @classmethod
    def start(cls, user_id: str) -> UserMemory:
        """Begin a user's memory."""
        if not isinstance(user_id, str) or not user_id.strip():
            raise DomainError("user_id must be a non-empty string")
        return cls(user_id=user_id)

    # ---- queries ----------------------------------------------------------------

    def fact(self, fact_id: str) -> Fact:
        """The active fact with this id."""
        try:
            return self.facts[fact_id]
        except KeyError:
            if fact_id in self.retired_facts:
                raise FactNotActive(f"fact {fact_id!r} is no longer active") from None
            raise UnknownItem(f"user {self.user_id!r} has no fact {fact_id!r}") from None

    def preference(self, preference_id: str) -> Preference:
        """The preference with this id."""
        try:
            return self.preferences[preference_id]
        except KeyError:
            if preference_id in self.retired_preferences:
                raise DomainError(f"preference {preference_id!r} was superseded and is no longer active") from None
            raise UnknownItem(f"user {self.user_id!r} has no preference {preference_id!r}") from None

    def active_facts(self) -> list[Fact]:
        """Every fact still valid, oldest first."""
        return list(self.facts.values())

    def all_preferences(self) -> list[Preference]:
        return list(self.preferences.values())

    def said_before(self, at: datetime) -> bool:
        """Whether ``at`` is before something the memory already decided on: a message said then
        is decided against what held at that time (ADR 0025)."""
        return self.said_until is not None and at < self.said_until

    def facts_around(self, at: datetime) -> tuple[list[Span], list[Span]]:
        """The facts that held at ``at`` and those said after it, active or retired, oldest first."""
        return _around([_span(f) for f in self.facts.values()], self.past_facts, at)

    def preferences_around(self, at: datetime) -> tuple[list[Span], list[Span]]:
        """The preferences that held at ``at`` and those said after it, oldest first."""
        return _around([_span(p) for p in self.preferences.values()], self.past_preferences, at)

    def item_ids(self) -> list[str]:
        """The ids of every fact and preference (active or retired) the user ever had."""
        return [*self.facts, *self.retired_facts, *self.preferences, *self.retired_preferences]

    # ---- commands -----------------------------------------------------------------

    def ingest_message(
        self,
        message_id: str,
        text: str,
        at: datetime,
        session_id: str | None = None,
        context: list[dict[str, str]] | None = None,
        redacted: dict[str, int] | None = None,
    ) -> None:
        """Record a message the user sent (``redacted``: secrets replaced in it, by kind)."""
        _check_text("message text", text)
        if message_id in self.recent_message_ids:
            raise DuplicateMessage(f"message {message_id!r} was already ingested for user {self.user_id!r}")
        self.trigger_event(
            self.MessageIngested,
            message_id=message_id,
            session_id=session_id,
            text=text,
            context=[dict(turn) for turn in (context or [])],
            at=at,
            redacted=dict(redacted or {}),
        )

    def record_extraction(self, message_id: str, extraction: Extraction) -> None:
        """Record what the extractor said about a message already ingested."""
        self._require_message(message_id)
        self.trigger_event(self.ExtractionRecorded, message_id=message_id, extraction=extraction)

    def record_extraction_failure(
        self, message_id: str, extractor_id: str, error: str, raw_output: str = "", prompt_id: str | None = None
    ) -> None:
        """Record that extraction of a message failed, with the raw answer, for a later retry."""
        self._require_message(message_id)
        self.trigger_event(
            self.ExtractionFailed,
            message_id=message_id,
            extractor_id=extractor_id,
            prompt_id=prompt_id,
            error=error,
            raw_output=raw_output,
        )

    def observe_fact(
        self,
        fact_id: str,
        text: str,
        category: str,
        confidence: float,
        message_id: str | None,
        at: datetime,
        extractor_id: str,
        session_id: str | None = None,
        conflicts_with: str | None = None,
        authority: Authority | str = Authority.STATED,
        prompt_id: str | None = None,
        actor: str | None = None,
        rules: Sequence[str] = (),
    ) -> None:
        """A fact seen for the first time (``message_id`` None: set by an operator); ``rules``:
        the ids of the extractor's rules that produced it."""
        if fact_id in self.facts or fact_id in self.retired_facts:
            raise DomainError(f"fact {fact_id!r} already exists")
        _check_text("fact text", text)
        authority = Authority(authority)
        if message_id is None:
            if authority is not Authority.MANUAL:
                raise DomainError("only a manual fact may be recorded without a message")
        else:
            self._require_message(message_id)
        self.trigger_event(
            self.FactObserved,
            fact_id=fact_id,
            text=text,
            category=fact_category(category),
            confidence=_check_unit("confidence", confidence),
            message_id=message_id,
            session_id=session_id,
            extractor_id=extractor_id,
            at=at,
            conflicts_with=conflicts_with,
            authority=authority.value,
            prompt_id=prompt_id,
            actor=actor,
            rules=list(rules),
        )

    def confirm_fact(
        self,
        fact_id: str,
        message_id: str,
        at: datetime,
        verdict: Verdict,
        session_id: str | None = None,
        said_text: str | None = None,
        rules: Sequence[str] = (),
    ) -> None:
        """The user said an active fact again (in the words ``said_text``, if known): one more
        mention, a little more importance; ``rules``: the ids of the rules that found it so."""
        fact = self.fact(fact_id)
        self._require_message(message_id)
        self.trigger_event(
            self.FactConfirmed,
            fact_id=fact_id,
            message_id=message_id,
            session_id=session_id,
            times_mentioned=fact.times_mentioned + 1,
            last_confirmed=max(at, fact.last_confirmed),
            importance=round(min(1.0, fact.importance + CONFIRMATION_BOOST), 6),
            verdict=verdict,
            said_at=at,
            said_text=said_text,
            rules=list(rules),
        )

    def invalidate_fact(
        self,
        fact_id: str,
        relation: InvalidationRelation | str,
        reason: ReasonCode,
        at: datetime,
        superseded_by: str | None = None,
        message_id: str | None = None,
        verdict: Verdict | None = None,
        actor: str | None = None,
        rules: Sequence[str] = (),
        note: str | None = None,
    ) -> None:
        """Mark an active fact invalid, saying why and what replaced it; or end a retired fact
        earlier than it was known to end, when a message said before that end replaced it.
        ``rules``: the ids of the rules that decided it.

        Only a manual invalidation may end a manual fact: nothing automatic
        overrides an operator's correction. The successor may itself be retired
        by now: a statement said before a later one holds until the later one's
        time, whatever followed (ADR 0025). ``reason`` is a code; ``note`` the words
        an operator gave (required for ``manual``).
        """
        authority = self._ending_authority(fact_id, at)
        relation = InvalidationRelation(relation)
        code = _checked_reason(reason, note)
        if superseded_by is not None and (
            superseded_by == fact_id or not _held(superseded_by, self.facts, self.past_facts, at)
        ):
            raise UnknownItem(f"superseding fact {superseded_by!r} does not exist or did not hold then")
        by_operator = relation is InvalidationRelation.MANUAL or (
            superseded_by is not None and self._fact_authority(superseded_by) == Authority.MANUAL.value
        )
        if authority == Authority.MANUAL.value and not by_operator:
            raise DomainError(f"fact {fact_id!r} was set manually; only a manual correction can invalidate it")
        if message_id is not None:
            self._require_message(message_id)
        self.trigger_event(
            self.FactInvalidated,
            fact_id=fact_id,
            relation=relation.value,
            reason=note,
            superseded_by=superseded_by,
            message_id=message_id,
            at=at,
            verdict=verdict,
            actor=actor,
            rules=list(rules),
            reason_code=code,
        )

    def mention_fact(
        self, fact_id: str, message_id: str, at: datetime, verdict: Verdict, said_text: str | None = None
    ) -> None:
        """A retired fact said again at ``at``, when it still held: the mention is kept (ADR 0025)."""
        span = self.past_facts.get(fact_id)
        if span is None or not span.holds_at(at):
            raise FactNotActive(f"fact {fact_id!r} did not hold at {at.isoformat()}")
        self._require_message(message_id)
        self.trigger_event(
            self.FactMentioned, fact_id=fact_id, message_id=message_id, said_at=at, said_text=said_text, verdict=verdict
        )

    def mention_preference(
        self, preference_id: str, message_id: str, at: datetime, verdict: Verdict, said_text: str | None = None
    ) -> None:
        """As ``mention_fact``, for a retired preference."""
        span = self.past_preferences.get(preference_id)
        if span is None or not span.holds_at(at):
            raise DomainError(f"preference {preference_id!r} did not hold at {at.isoformat()}")
        self._require_message(message_id)
        self.trigger_event(
            self.PreferenceMentioned,
            preference_id=preference_id,
            message_id=message_id,
            said_at=at,
            said_text=said_text,
            verdict=verdict,
        )

    def resume_fact(self, fact_id: str, resumed_id: str, mention: Mention, extractor_id: str) -> None:
        """A fact said again (``mention``) after a message, recorded later but said before the
        mention, replaced it: from the mention's time it holds again, as a fact of its own, observed
        from the mention's message (ADR 0025)."""
        span = self.past_facts.get(fact_id)
        _check_resumed(span, fact_id, mention)
        assert span is not None
        if resumed_id in self.facts or resumed_id in self.retired_facts:
            raise DomainError(f"fact {resumed_id!r} already exists")
        self.trigger_event(
            self.FactObserved,
            fact_id=resumed_id,
            text=mention.text or span.text,
            category=span.category,
            confidence=span.confidence,
            message_id=mention.message_id,
            session_id=None,
            extractor_id=extractor_id,
            at=mention.at,
            conflicts_with=None,
            authority=span.authority,
            prompt_id=None,
            actor=None,
            rules=[],
        )

    def absorb_fact(self, fact_id: str, into: str, message_id: str, verdict: Verdict) -> None:
        """``fact_id`` was recorded before ``into`` but said after it, in the same sense: said in
        order, each time it was said would have confirmed ``into``. It ends where it began, and
        every kept time it was said becomes a mention of ``into`` (ADR 0025)."""
        if into not in self.facts:
            raise UnknownItem(f"fact {into!r} is not active")
        span = self._span_of(fact_id, self.facts, self.past_facts)
        if span is None or span.valid_until == span.valid_from or span.valid_from < self.facts[into].first_seen:
            raise DomainError(f"fact {fact_id!r} cannot be absorbed by fact {into!r}")
        self.invalidate_fact(
            fact_id, InvalidationRelation.DUPLICATE, "said-before",
            span.valid_from, superseded_by=into, message_id=message_id, verdict=verdict,
        )  # fmt: skip
        for said in span.sayings():
            fact = self.facts[into]
            self.trigger_event(
                self.FactConfirmed,
                fact_id=into,
                message_id=said.message_id,
                session_id=None,
                times_mentioned=fact.times_mentioned + 1,
                last_confirmed=max(said.at, fact.last_confirmed),
                importance=round(min(1.0, fact.importance + CONFIRMATION_BOOST), 6),
                verdict=verdict,
                said_at=said.at,
                said_text=said.text,
                rules=[],
            )

    def absorb_preference(self, preference_id: str, into: str, message_id: str, verdict: Verdict) -> None:
        """As ``absorb_fact``, for a preference: each time it was said reinforces ``into``."""
        if into not in self.preferences:
            raise UnknownItem(f"preference {into!r} is not active")
        span = self._span_of(preference_id, self.preferences, self.past_preferences)
        if span is None or span.valid_until == span.valid_from or span.valid_from < self.preferences[into].first_seen:
            raise DomainError(f"preference {preference_id!r} cannot be absorbed by preference {into!r}")
        self.supersede_preference(preference_id, into, "said-before", message_id, span.valid_from, verdict)
        for said in span.sayings():
            pref = self.preferences[into]
            self.trigger_event(
                self.PreferenceReinforced,
                preference_id=into,
                observed_strength=span.confidence,
                old_strength=pref.strength,
                new_strength=reinforced_strength(pref.strength, pref.times_observed, span.confidence),
                evidence=list(pref.evidence),
                times_observed=pref.times_observed + 1,
                message_id=said.message_id,
                session_id=None,
                similarity=verdict.similarity,
                at=max(said.at, pref.last_confirmed),
                said_at=said.at,
                said_text=said.text,
            )

    @staticmethod
    def _span_of(item_id: str, active: dict[str, Fact] | dict[str, Preference], past: dict[str, Span]) -> Span | None:
        item = active.get(item_id)
        return _span(item) if item is not None else past.get(item_id)

    def contest_fact(
        self,
        fact_id: str,
        challenger_text: str,
        relation: str,
        message_id: str,
        at: datetime,
        verdict: Verdict,
        rules: Sequence[str] = (),
    ) -> None:
        """Keep a contradiction of a fact that outranks its challenger, without invalidating it;
        ``rules``: the ids of the rules that decided the challenge."""
        self.fact(fact_id)
        self._require_message(message_id)
        self.trigger_event(
            self.FactContested,
            fact_id=fact_id,
            challenger_text=challenger_text,
            relation=relation,
            message_id=message_id,
            at=at,
            verdict=verdict,
            rules=list(rules),
        )

    def observe_preference(
        self,
        preference_id: str,
        text: str,
        category: str,
        strength: float,
        message_id: str,
        at: datetime,
        extractor_id: str,
        evidence: str = "",
        session_id: str | None = None,
        prompt_id: str | None = None,
        rules: Sequence[str] = (),
    ) -> None:
        """A preference seen for the first time; ``rules``: the ids of the extractor's rules that produced it."""
        if preference_id in self.preferences:
            raise DomainError(f"preference {preference_id!r} already exists")
        _check_text("preference text", text)
        self._require_message(message_id)
        self.trigger_event(
            self.PreferenceObserved,
            preference_id=preference_id,
            text=text,
            category=preference_category(category),
            strength=_check_unit("strength", strength),
            evidence=[evidence] if evidence else [],
            message_id=message_id,
            session_id=session_id,
            extractor_id=extractor_id,
            at=at,
            prompt_id=prompt_id,
            rules=list(rules),
        )

    def supersede_preference(
        self,
        preference_id: str,
        superseded_by: str,
        reason: ReasonCode,
        message_id: str,
        at: datetime,
        verdict: Verdict,
        rules: Sequence[str] = (),
        note: str | None = None,
    ) -> None:
        """A newer preference replaces this one (a changed taste or request), or an active fact
        that says the taste changed ("用户现在天天玩原神" after 最爱玩王者荣耀): no longer active.

        As for facts, a retired preference may be ended earlier than it was known to end, and
        the successor may be retired by now (ADR 0025). ``reason`` is a code, ``note`` any words beside it.
        """
        code = _checked_reason(reason, note)
        span = self.past_preferences.get(preference_id)
        if preference_id not in self.preferences and not (span is not None and span.holds_at(at)):
            self.preference(preference_id)  # unknown, or superseded by then: says so
        held = _held(superseded_by, self.preferences, self.past_preferences, at) or _held(
            superseded_by, self.facts, self.past_facts, at
        )
        if superseded_by == preference_id or not held:
            raise UnknownItem(f"superseding preference or fact {superseded_by!r} does not exist or did not hold then")
        self._require_message(message_id)
        self.trigger_event(
            self.PreferenceSuperseded,
            preference_id=preference_id,
            superseded_by=superseded_by,
            reason=note,
            message_id=message_id,
            at=at,
            verdict=verdict,
            rules=list(rules),
            reason_code=code,
        )

    def resume_preference(self, preference_id: str, resumed_id: str, mention: Mention, extractor_id: str) -> None:
        """As ``resume_fact``, for a preference said again after one that replaced it (ADR 0025)."""
        span = self.past_preferences.get(preference_id)
        _check_resumed(span, preference_id, mention)
        assert span is not None
        if resumed_id in self.preferences or resumed_id in self.retired_preferences:
            raise DomainError(f"preference {resumed_id!r} already exists")
        self.trigger_event(
            self.PreferenceObserved,
            preference_id=resumed_id,
            text=mention.text or span.text,
            category=span.category,
            strength=span.confidence,
            evidence=[],
            message_id=mention.message_id,
            session_id=None,
            extractor_id=extractor_id,
            at=mention.at,
            prompt_id=None,
            rules=[],
        )

    def reinforce_preference(
        self,
        preference_id: str,
        observed_strength: float,
        message_id: str,
        at: datetime,
        similarity: float,
        evidence: str = "",
        session_id: str | None = None,
        said_text: str | None = None,
    ) -> None:
        """The preference was observed again (in the words ``said_text``, if known): the spec's
        weighted strength, evidence kept to 5."""
        pref = self.preference(preference_id)
        observed = _check_unit("strength", observed_strength)
        self._require_message(message_id)
        new_evidence = list(pref.evidence)
        if evidence and evidence not in new_evidence:
            new_evidence.append(evidence)
        self.trigger_event(
            self.PreferenceReinforced,
            preference_id=preference_id,
            observed_strength=observed,
            old_strength=pref.strength,
            new_strength=reinforced_strength(pref.strength, pref.times_observed, observed),
            evidence=new_evidence[-EVIDENCE_KEPT:],
            times_observed=pref.times_observed + 1,
            message_id=message_id,
            session_id=session_id,
            similarity=float(similarity),
            at=max(at, pref.last_confirmed),
            said_at=at,
            said_text=said_text,
        )

    # ---- guards -------------------------------------------------------------------

    def _ending_authority(self, fact_id: str, at: datetime) -> str:
        """The authority of a fact that may end at ``at``: active, or retired later than ``at``."""
        if fact_id in self.facts:
            return self.facts[fact_id].authority
        span = self.past_facts.get(fact_id)
        if span is not None and span.valid_until is not None and at < span.valid_until:
            return span.authority
        self.fact(fact_id)  # unknown: says so
        raise FactNotActive(f"fact {fact_id!r} is no longer active (retired by {at.isoformat()})")

    def _fact_authority(self, fact_id: str) -> str:
        if fact_id in self.facts:
            return self.facts[fact_id].authority
        span = self.past_facts.get(fact_id)
        return span.authority if span is not None else Authority.STATED.value

    def _require_message(self, message_id: str) -> None:
        if message_id not in (self.last_message_id, self.deciding_message_id) and (
            message_id not in self.failed_extractions
        ):
            raise UnknownItem(f"message {message_id!r} is not the latest message ingested for user {self.user_id!r}")


def _held(item_id: str, active: dict[str, Any], past: dict[str, Span], at: datetime) -> bool:
    """Whether an item may stand as a successor at ``at``: active, or retired but holding then."""
    span = past.get(item_id)
    return item_id in active or (span is not None and span.holds_at(at))


def _keep_mention(past: dict[str, Span], retired: dict[str, Any], item_id: str, said: Any) -> None:
    span = past.get(item_id)
    if span is not None:
        past[item_id] = attrs.evolve(
            span, mentions=_mentioned(span.mentions, Mention(said.said_at, said.message_id, said.said_text))
        )
    elif item_id not in retired:
        raise KeyError(item_id)  # an item this (partial) history does not hold as retired


def _check_resumed(span: Span | None, item_id: str, mention: Mention) -> None:
    if span is None or mention not in span.mentions:
        raise UnknownItem(f"item {item_id!r} has no kept mention in message {mention.message_id!r}")
    if span.valid_until is None or mention.at <= span.valid_until:
        raise DomainError(f"item {item_id!r} still held when it was said again; nothing resumes")


def _checked_reason(reason: object, note: str | None) -> ReasonCode:
    """A reason code, refused unless known; a worded one (``manual``) needs its words."""
    try:
        code = reason_code(reason)
    except ValueError as exc:
        raise DomainError(str(exc)) from None
    if code == "manual" and not (note or "").strip():
        raise DomainError("a manual invalidation needs a reason")
    if note is not None:
        _check_text("reason", note)
    return code


def _code_reason(state: dict[str, Any], *, manual: bool) -> None:
    """An older version's reason sentence as its code and the words to keep (domain/reasons.py)."""
    state["reason_code"], state["reason"] = reason_of_literal(state["reason"], manual=manual)


def _group_verdict(state: dict[str, Any]) -> None:
    """Version 1 spelled a verdict as four fields; version 2 holds one ``Verdict`` (None when manual)."""
    judge_id = state.pop("judge_id", None)
    prompt_id = state.pop("judge_prompt_id", None)
    similarity = state.pop("similarity", None)
    raw_answer = state.pop("raw_answer", None)
    state["verdict"] = None if judge_id is None else Verdict(judge_id, similarity or 0.0, raw_answer or "", prompt_id)


def traced_by_no_rule(state: dict[str, Any]) -> None:
    """Upcaster of every event that gained ``rules`` (issue 27): one recorded before named none."""
    state["rules"] = []


def project_memory(events: list[Any]) -> UserMemory | None:
    """Rebuild a memory from its events alone (as a repository does)."""
    memory: UserMemory | None = None
    for domain_event in events:
        memory = domain_event.mutate(memory)
    return memory
