"""The event store of user memories: an ``eventsourcing`` application.

Persistence is chosen by the environment it is given (PostgreSQL in
production, plain-old-Python objects in fast unit tests); nothing here
knows which.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any, ClassVar
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application
from eventsourcing.persistence import JSONTranscoder
from eventsourcing.utils import EnvType, get_topic

from factledger.application.ports import MessageIndex
from factledger.application.transcodings import register_transcodings
from factledger.domain.memory import UserMemory, user_memory_id

logger = logging.getLogger(__name__)

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

    def recorded_message_ids(self) -> Iterator[tuple[UUID, str]]:
        """(memory id, message id) of every message recorded, oldest first."""
        topic = get_topic(UserMemory.MessageIngested)
        start = None
        while batch := self.recorder.select_notifications(start=start, limit=1000, topics=[topic]):
            for notification in batch:
                event = self.mapper.to_domain_event(notification)
                yield notification.originator_id, str(event.message_id)  # type: ignore[arg-type]
            start = batch[-1].id + 1

    def has_message(self, user_id: str, message_id: str, memory: UserMemory | None = None) -> bool:
        """Whether this message id was ever recorded for the user.

        With a store that indexes message ids, for the whole history; otherwise
        only the aggregate's window of recent ids can tell.
        """
        if isinstance(self.recorder, MessageIndex):
            return self.recorder.has_message(user_memory_id(user_id), message_id)
        return memory is not None and message_id in memory.recent_message_ids

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)

    def _take_snapshots(self, processing_event: Any) -> None:
        # The events are committed when this runs: a snapshot that cannot be
        # written (a timeout, a lost connection) must not make the save look
        # failed, or the caller would decide and record the message again.
        try:
            super()._take_snapshots(processing_event)
        except Exception:
            logger.exception("could not write a snapshot; the events are recorded and a later one will be taken")

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
