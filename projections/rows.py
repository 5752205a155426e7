"""The ``memories`` projection as pure data: which row changes each event makes.

``row_changes(event)`` says what a ``UserMemory`` event does to the read model
(one row per fact or preference, and the user id of each memory); views on
PostgreSQL and in memory apply the changes. Rows are derived from events
alone (times included), so a rebuild reproduces them exactly.
"""

from __future__ import annotations

from datetime import datetime
from functools import singledispatch
from typing import Any
from uuid import UUID, uuid5

import attrs
from eventsourcing.domain import Aggregate
from eventsourcing.utils import get_topic

from factledger.domain.memory import UserMemory
from factledger.domain.relative_time import time_refs


@attrs.frozen
class UserNamed:
    """The memory ``originator_id`` belongs to the user ``user_id``."""

    originator_id: UUID
    user_id: str


@attrs.frozen
class ItemAdded:
    """A new row: a fact or a preference of the user whose memory is ``originator_id``."""

    originator_id: UUID
    id: str
    type: str  # fact | preference
    content: str
    category: str
    metadata: dict[str, Any]
    importance: float
    session_id: str | None
    at: datetime
    # Words the lexical index holds beside ``content`` (a message: the turn it answers).
    indexed_also: str = ""

    @property
    def indexed_text(self) -> str:
        return f"{self.indexed_also}\n{self.content}" if self.indexed_also else self.content


@attrs.frozen
class ItemChanged:
    """Fields of a row that change: metadata keys merged, importance and activity replaced when given."""

    id: str
    metadata: dict[str, Any]
    at: datetime
    importance: float | None = None
    is_active: bool | None = None


RowChange = UserNamed | ItemAdded | ItemChanged


def _when(text: str, said: datetime) -> dict[str, Any]:
    """``refers_to``: the days the text's relative time (上周, yesterday) means, said when it was."""
    refs = time_refs(text, said)
    return {"refers_to": [r.to_dict() for r in refs]} if refs else {}


def texts_to_embed(changes: list[RowChange]) -> list[str]:
    """Texts of the memories these changes add: embedded in one batch before writing. A message
    is found by its words alone (ADR 0030): no vector, no embedding call per message."""
    return [c.content for c in changes if isinstance(c, ItemAdded) and c.type in EMBEDDED_TYPES]


EMBEDDED_TYPES = ("fact", "preference")


@singledispatch
def row_changes(event: Any) -> list[RowChange]:
    """Events without a row (messages, extractions) change nothing."""
    return []


def rowless_topics() -> frozenset[str]:
    """The topics of the ``UserMemory`` events that change no row (a message, an extraction):
    projecting need not decode them, and they are most of a message's bytes. Only these exact
    topics: an unknown or renamed one is still decoded (and quarantined if it cannot be)."""
    default = row_changes.dispatch(object)
    return frozenset(
        get_topic(cls)
        for cls in vars(UserMemory).values()
        if isinstance(cls, type) and issubclass(cls, Aggregate.Event) and row_changes.dispatch(cls) is default
    )


@row_changes.register
def _(e: UserMemory.Started) -> list[RowChange]:
    return [UserNamed(e.originator_id, e.user_id)]


def message_row_id(originator_id: UUID, message_id: str) -> str:
    """A message's row id: made from its memory and its message id (each recorded once)."""
    return str(uuid5(originator_id, "message:" + message_id))


@row_changes.register
def _(e: UserMemory.MessageIngested) -> list[RowChange]:
    # What the user said, as they said it (secrets already replaced), with the turn it answers:
    # a reply's words ("it went great") are about the question before it.
    answered = e.context[-1].get("content", "") if e.context else ""
    return [
        ItemAdded(
            e.originator_id,
            message_row_id(e.originator_id, e.message_id),
            "message",
            e.text,
            "message",
            metadata={
                "source_message": e.message_id,
                "source_session": e.session_id,
                "said_at": e.at.isoformat(),
                **_when(e.text, e.at),
            },
            importance=0.0,
            session_id=e.session_id,
            at=e.at,
            indexed_also=answered,
        )
    ]


@row_changes.register
def _(e: UserMemory.FactObserved) -> list[RowChange]:
    return [
        ItemAdded(
            e.originator_id,
            e.fact_id,
            "fact",
            e.text,
            e.category,
            metadata={
                "category": e.category,
                "confidence": e.confidence,
                "source_session": e.session_id,
                "source_message": e.message_id,
                "extractor_id": e.extractor_id,
                "first_seen": e.at.isoformat(),
                "last_confirmed": e.at.isoformat(),
                "times_mentioned": 1,
                "conflicts_with": e.conflicts_with,
                "rules": list(e.rules),  # the offline rules that produced it (issue 27)
                **_when(e.text, e.at),
            },
            importance=e.confidence,
            session_id=e.session_id,
            at=e.at,
        )
    ]


@row_changes.register
def _(e: UserMemory.FactConfirmed) -> list[RowChange]:
    return [
        ItemChanged(
            e.fact_id,
            {"times_mentioned": e.times_mentioned, "last_confirmed": e.last_confirmed.isoformat()},
            e.last_confirmed,
            importance=e.importance,
        )
    ]


@row_changes.register
def _(e: UserMemory.FactInvalidated) -> list[RowChange]:
    return [
        ItemChanged(
            e.fact_id,
            {
                "invalidated_at": e.at.isoformat(),
                "invalidation_reason": e.reason_code,
                "invalidation_note": e.reason,
                "invalidation_relation": e.relation,
                "superseded_by": e.superseded_by,
                "invalidation_rules": list(e.rules),
            },
            e.at,
            is_active=False,
        )
    ]


@row_changes.register
def _(e: UserMemory.PreferenceObserved) -> list[RowChange]:
    return [
        ItemAdded(
            e.originator_id,
            e.preference_id,
            "preference",
            e.text,
            e.category,
            metadata={
                "category": e.category,
                "strength": e.strength,
                "evidence": list(e.evidence),
                "first_seen": e.at.isoformat(),
                "last_confirmed": e.at.isoformat(),
                "times_observed": 1,
                "source_session": e.session_id,
                "source_message": e.message_id,
                "extractor_id": e.extractor_id,
                "rules": list(e.rules),
                **_when(e.text, e.at),
            },
            importance=e.strength,
            session_id=e.session_id,
            at=e.at,
        )
    ]


@row_changes.register
def _(e: UserMemory.PreferenceSuperseded) -> list[RowChange]:
    return [
        ItemChanged(
            e.preference_id,
            {
                "invalidated_at": e.at.isoformat(),
                "invalidation_reason": e.reason_code,
                "invalidation_note": e.reason,
                "superseded_by": e.superseded_by,
                "invalidation_rules": list(e.rules),
            },
            e.at,
            is_active=False,
        )
    ]


@row_changes.register
def _(e: UserMemory.PreferenceReinforced) -> list[RowChange]:
    return [
        ItemChanged(
            e.preference_id,
            {
                "strength": e.new_strength,
                "evidence": list(e.evidence),
                "last_confirmed": e.at.isoformat(),
                "times_observed": e.times_observed,
            },
            e.at,
            importance=e.new_strength,
        )
    ]
