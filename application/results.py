"""What the service returns, and how it checks what it is given."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import attrs

from factledger.application.decisions import Outcome
from factledger.domain.values import Turn


class InvalidInput(ValueError):
    """A caller passed something factledger cannot use; the message says what."""


class NothingToWrite(Exception):
    """Raised by a change to a memory to say: record nothing, return this value instead."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


@attrs.frozen
class IngestResult:
    """The spec's result for one message, plus what happened to each item."""

    user_id: str
    message_id: str
    facts: tuple[str, ...]
    preferences: tuple[str, ...]
    items: tuple[Outcome, ...]
    extractor_id: str
    notification_id: int | None
    # recorded | duplicate (message id seen before: nothing written) | extraction_failed
    status: str = "recorded"

    @property
    def facts_extracted(self) -> int:
        return len(self.facts)

    @property
    def preferences_extracted(self) -> int:
        return len(self.preferences)

    def as_dict(self) -> dict[str, Any]:
        """The spec's four keys first, then ids and outcomes."""
        return {
            "facts_extracted": self.facts_extracted,
            "preferences_extracted": self.preferences_extracted,
            "facts": list(self.facts),
            "preferences": list(self.preferences),
            "user_id": self.user_id,
            "message_id": self.message_id,
            "extractor_id": self.extractor_id,
            "status": self.status,
            "items": [item.as_dict() for item in self.items],
        }


def require_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    return value


def context_turns(context: Iterable[Any] | None) -> list[Turn]:
    if context is None:
        return []
    if not isinstance(context, (list, tuple)):
        raise InvalidInput(f"context must be a list of {{role, content}} turns, got {type(context).__name__}")
    turns = []
    for position, turn in enumerate(context):
        if isinstance(turn, Turn):
            turns.append(turn)
            continue
        try:
            turns.append(Turn.from_dict(turn))
        except ValueError as exc:
            raise InvalidInput(f"context[{position}]: {exc}") from None
    return turns


def resolve_prefix(prefix: str, ids: Iterable[str], kind: str) -> str:
    """The one id starting with ``prefix``; a clear error when none or several do."""
    prefix = require_text(f"{kind} id", prefix).strip()
    matches = [i for i in ids if i.startswith(prefix)]
    if not matches:
        raise InvalidInput(f"no {kind} id starts with {prefix!r}")
    if len(matches) > 1:
        raise InvalidInput(f"{kind} id prefix {prefix!r} is ambiguous: {', '.join(m[:12] for m in matches[:5])}")
    return matches[0]


def utc(at: datetime | None) -> datetime:
    """``at`` with a time zone (naive means UTC); now when None."""
    if at is None:
        return datetime.now(timezone.utc)
    if not isinstance(at, datetime):
        raise InvalidInput(f"timestamp must be a datetime, got {type(at).__name__}")
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def history_entry(event: Any) -> dict[str, Any]:
    """An event as a plain dict: its class name, version, recording time and fields."""
    fields = {
        key: value
        for key, value in vars(event).items()
        if key not in {"originator_id", "originator_version", "timestamp", "originator_topic"}
    }
    return {
        "version": event.originator_version,
        "event": type(event).__name__,
        "recorded_at": event.timestamp,
        **fields,
    }
