"""The event store of user memories: an ``eventsourcing`` application.

Persistence is chosen by the environment it is given (PostgreSQL in
production, plain-old-Python objects in fast unit tests); nothing here
knows which.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.utils import EnvType

from factledger.domain.memory import UserMemory, user_memory_id

APPLICATION_NAME = "factledger"
DEFAULT_SNAPSHOT_INTERVAL = 50


class MemoryLedger(Application):
    """Stores and loads ``UserMemory`` aggregates.

    Snapshots every ``FACTLEDGER_SNAPSHOT_INTERVAL`` events (default 50) keep
    the load time of a long-lived user flat, and the aggregate cache keeps a
    hot user in memory between messages (ADR 0002).
    """

    name = APPLICATION_NAME
    snapshotting_intervals: ClassVar[dict[type[Any], int]] = {UserMemory: DEFAULT_SNAPSHOT_INTERVAL}
    env: ClassVar[dict[str, str]] = {
        "AGGREGATE_CACHE_MAXSIZE": "1000",
        "AGGREGATE_CACHE_FASTFORWARD": "y",
    }

    def __init__(self, env: EnvType | None = None, snapshot_interval: int | None = None) -> None:
        super().__init__(env)
        if snapshot_interval is not None:
            self.snapshotting_intervals = {UserMemory: snapshot_interval}  # type: ignore[misc]

    @property
    def storage_key(self) -> str:
        """Where this ledger's events live (its schema on PostgreSQL): stable across renames."""
        return self.env.get("POSTGRES_SCHEMA") or self.name

    def find_memory(self, user_id: str) -> UserMemory | None:
        """The user's memory, or None if nothing was ever recorded for them."""
        try:
            return self.repository.get(user_memory_id(user_id))
        except AggregateNotFoundError:
            return None

    def memory_at(self, user_id: str, version: int) -> UserMemory:
        return self.repository.get(user_memory_id(user_id), version=version)

    def user_events(self, user_id: str) -> Iterator[Any]:
        """Every event of the user's memory, oldest first."""
        return iter(self.events.get(user_memory_id(user_id)))
