"""Runs ``MemoryProjection`` over the event log: catch up, rebuild, follow, status.

Batches many events per transaction with the last tracking position, which
keeps exactly-once semantics (the position moves only with the rows) and is
much faster than the stock runner's one commit per event. An advisory lock
serialises projectors, so the in-process catch-up after an ingest and a
``projection follow`` process never step on each other.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable

import attrs
import psycopg
from eventsourcing.application import Application
from eventsourcing import persistence
from eventsourcing.persistence import Tracking
from psycopg.sql import SQL, Identifier

from factledger.projections.memories import MemoryProjection

logger = logging.getLogger(__name__)

BATCH_SIZE = 500


@attrs.frozen
class ProjectionStatus:
    """Where the read model stands against the head of the event log."""

    position: int
    head: int
    embedder_id: str

    @property
    def lag(self) -> int:
        return max(0, self.head - self.position)

    def as_dict(self) -> dict[str, object]:
        return {"position": self.position, "head": self.head, "lag": self.lag, "embedder_id": self.embedder_id}


class Projector:
    """Feeds the application's events to the memories projection."""

    def __init__(self, app: Application, projection: MemoryProjection) -> None:
        self.app = app
        self.projection = projection
        self.view = projection.view
        self._lock_key = zlib.crc32(f"{self.view.datastore.schema}.memories".encode())

    def position(self) -> int:
        return self.view.max_tracking_id(self.app.name) or 0

    def head(self) -> int:
        return self.app.recorder.max_notification_id() or 0

    def status(self) -> ProjectionStatus:
        return ProjectionStatus(self.position(), self.head(), self.view.embedder_id)

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project every event after the current position; return how many."""
        processed = 0
        start = first = self.position()
        head = self.head() if progress else 0
        while True:
            notifications = self.app.recorder.select_notifications(
                start=start, limit=BATCH_SIZE, inclusive_of_start=False
            )
            if not notifications:
                return processed
            events = [self.app.mapper.to_domain_event(n) for n in notifications]
            texts = self.projection.texts_to_embed(events)
            # Embed before the transaction: the cache commits on its own and
            # the row-writing transaction stays short.
            vectors = dict(zip(texts, self.projection.embedder.embed(texts), strict=True))
            with self.view.datastore.transaction(commit=True) as curs:
                curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                now = self.view._max_tracking_id(self.app.name, curs) or 0  # noqa: SLF001
                if now == start:
                    for event in events:
                        self.projection.apply(event, curs, vectors)
                    self.view._insert_tracking(curs, Tracking(self.app.name, notifications[-1].id))  # noqa: SLF001
            if now != start:
                start = now  # another projector moved on meanwhile: continue from its position
                continue
            start = notifications[-1].id
            processed += len(events)
            if progress:
                progress(processed, max(head - first, processed))

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Drop the read model and project the whole log again."""
        with self.view.datastore.transaction(commit=True) as curs:
            curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            self.view.reset(curs, self.app.name)
        return self.catch_up(progress)

    def follow(self, stop: threading.Event, poll_interval: float = 1.0,
               on_batch: Callable[[int], None] | None = None) -> None:
        """Keep catching up until ``stop`` is set: LISTEN for new events, poll as a fallback.

        A lost connection (server restart, network) is logged and retried with
        backoff instead of ending the follower.
        """
        backoff = poll_interval
        while not stop.is_set():
            try:
                self._follow_once(stop, poll_interval, on_batch)
            except (psycopg.OperationalError, persistence.OperationalError, persistence.InterfaceError) as exc:
                logger.warning("projection follower lost its connection (%s); retrying in %.1fs", exc, backoff)
                stop.wait(backoff)
                backoff = min(backoff * 2, 30.0)
            else:
                backoff = poll_interval

    def _follow_once(self, stop: threading.Event, poll_interval: float,
                     on_batch: Callable[[int], None] | None) -> None:
        channel = getattr(self.app.recorder, "channel_name", None)
        with self.view.datastore.get_connection() as conn:
            if channel:
                conn.execute(SQL("LISTEN {}").format(Identifier(channel)))
            while not stop.is_set():
                count = self.catch_up()
                if count and on_batch:
                    on_batch(count)
                # Wake on NOTIFY or after poll_interval, whichever comes first.
                for _ in conn.notifies(timeout=poll_interval, stop_after=1):
                    pass
