"""The users of a ledger, listed for an operator: who they are, how much is recorded, when last.

Read from the event log's messages and the read model's items: a user forgotten is in
neither, a user with only an operator's restatement has items and no message.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import attrs

from factledger.application.ledger import MemoryLedger
from factledger.application.ports import MemoryReadModel
from factledger.application.validation import InputLimits, require_page

USERS_PAGE = 50


@attrs.define
class UserSummary:
    """One user: messages recorded, active and retired facts and preferences, last activity."""

    user_id: str
    messages: int = 0
    active: int = 0
    retired: int = 0
    last_activity: datetime | None = None

    def seen(self, at: datetime) -> None:
        if self.last_activity is None or at > self.last_activity:
            self.last_activity = at

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "messages": self.messages,
            "active": self.active,
            "retired": self.retired,
            "last_activity": self.last_activity.isoformat() if self.last_activity else None,
        }


@attrs.frozen
class UserPage:
    """A page of users in id order, those whose id contains ``search`` (case-insensitive)."""

    users: tuple[UserSummary, ...]
    search: str
    offset: int
    total: int

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.users) < self.total


def list_users(
    ledger: MemoryLedger,
    read_model: MemoryReadModel,
    limits: InputLimits,
    search: str = "",
    offset: int = 0,
    limit: int = USERS_PAGE,
) -> UserPage:
    """A page of the ledger's users with their counts (reads every message's position and user:
    an operator's page, not a hot path)."""
    require_page(limit, offset, limits)
    summaries: dict[str, UserSummary] = {}
    for _, user_id, message in ledger.recorded_messages():
        summary = summaries.setdefault(user_id, UserSummary(user_id))
        summary.messages += 1
        summary.seen(message.at)
    for item in read_model.all_items():
        summary = summaries.setdefault(item.user_id, UserSummary(item.user_id))
        if item.is_active:
            summary.active += 1
        else:
            summary.retired += 1
        summary.seen(item.updated_at)
    needle = search.strip().casefold()
    found = sorted((s for s in summaries.values() if needle in s.user_id.casefold()), key=lambda s: s.user_id)
    return UserPage(tuple(found[offset : offset + limit]), search, offset, len(found))
