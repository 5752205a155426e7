"""Runs ``MemoryProjection`` over the event log: catch up, rebuild, follow, status.

Batches many events per transaction with the last tracking position, which
keeps exactly-once semantics (the position moves only with the rows) and is
much faster than the stock runner's one commit per event. An advisory lock
serialises projectors, so the in-process catch-up after an ingest and a
``projection follow`` process never step on each other.

Nothing one event holds can stop the read model: an event it cannot store
(or decode) is quarantined with its error, logged, counted in the status, and
the projection goes on. A rebuild builds into a schema of its own and moves
the finished tables in, in one transaction, so a failed or interrupted
rebuild leaves the old read model serving.
"""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from eventsourcing import persistence
from eventsourcing.application import Application
from eventsourcing.persistence import Notification
from psycopg.sql import SQL, Identifier

from factledger.application.errors import LLMUnavailable, RebuildRunning
from factledger.application.ports import ProjectionStatus
from factledger.infrastructure.event_store import datastore_for_schema
from factledger.projections.memories import MemoryProjection, MemoryView

logger = logging.getLogger(__name__)

BATCH_SIZE = 500
# Waiting for NOTIFY with a shorter timeout than this is a busy loop.
MIN_POLL_INTERVAL = 0.1


def _infrastructure_failure(exc: BaseException) -> bool:
    """A lost connection or a timeout: the event is fine, the database is not; do not quarantine."""
    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))


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
        return ProjectionStatus(self.position(), self.head(), self.view.embedder_id, self.view.quarantine_count())

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        """The events the read model could not store, with their errors."""
        return self.view.quarantined(limit)

    # ---- catching up ---------------------------------------------------------------

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
            decoded = [self._decode(n) for n in notifications]
            events = [e for e in decoded if not isinstance(e, Exception)]
            texts = self.projection.texts_to_embed(events)
            # Embed before the transaction: the cache commits on its own and
            # the row-writing transaction stays short.
            vectors = dict(zip(texts, self.projection.embedder.embed(texts), strict=True))
            with self.view.datastore.transaction(commit=True) as curs:
                curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                now = self.view.position(curs, self.app.name)
                if now == start:
                    self._apply_batch(curs, notifications, decoded, vectors)
                    self.view.record_position(curs, self.app.name, notifications[-1].id)
            if now != start:
                start = now  # another projector moved on meanwhile: continue from its position
                continue
            start = notifications[-1].id
            processed += len(notifications)
            if progress:
                progress(processed, max(head - first, processed))

    def _decode(self, notification: Notification) -> Any:
        try:
            return self.app.mapper.to_domain_event(notification)
        except Exception as exc:  # an unknown topic, a broken upcaster: the event stays, unread
            return exc

    def _apply_batch(
        self, curs: Any, notifications: Sequence[Notification], decoded: Sequence[Any],
        vectors: dict[str, list[float]],
    ) -> None:
        """Apply the batch; if one event fails, apply them one by one and quarantine the failures."""
        conn = curs.connection
        try:
            with conn.transaction():  # a savepoint: the fast path, all or nothing
                for event in decoded:
                    if isinstance(event, Exception):
                        raise event
                    self.projection.apply(event, curs, vectors)
            return
        except Exception as exc:
            if _infrastructure_failure(exc):
                raise
        for notification, event in zip(notifications, decoded, strict=True):
            try:
                if isinstance(event, Exception):
                    raise event
                with conn.transaction():
                    self.projection.apply(event, curs, vectors)
            except Exception as exc:
                if _infrastructure_failure(exc):
                    raise
                error = f"{type(exc).__name__}: {exc}"
                logger.error(
                    "quarantined event %d (%s) of %s: %s", notification.id, notification.topic,
                    notification.originator_id, error,
                )
                self.view.quarantine(curs, notification.id, notification.originator_id, notification.topic, error)

    # ---- rebuilding ------------------------------------------------------------------

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project the whole log again into new tables, then swap them in atomically.

        The current read model serves until the swap; if the rebuild fails or
        is killed, it is untouched. Returns how many events were projected.
        """
        live = self.view.datastore
        shadow_schema = f"rebuild_{zlib.crc32(live.schema.encode()):08x}"
        with self._rebuild_lock(), self._fresh_schema(shadow_schema):
            shadow_store = datastore_for_schema(live, shadow_schema)
            try:
                shadow_view = MemoryView(shadow_store, embedder_id=self.view.embedder_id, dimension=self.view.dimension)
                shadow_view.create_table(check_embedder=False)
                shadow = Projector(self.app, MemoryProjection(shadow_view, self.projection.embedder))
                count = shadow.catch_up(progress)
            finally:
                shadow_store.close()
            with live.transaction(commit=True) as curs:
                curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                for table in MemoryView.TABLES:
                    curs.execute(SQL("DROP TABLE IF EXISTS {}").format(Identifier(live.schema, table)))
                    curs.execute(
                        SQL("ALTER TABLE {} SET SCHEMA {}").format(
                            Identifier(shadow_schema, table), Identifier(live.schema)
                        )
                    )
        # Events recorded while the copy was built.
        return count + self.catch_up()

    @contextmanager
    def _rebuild_lock(self) -> Iterator[None]:
        """One rebuild at a time per read model, across processes."""
        with self.view.datastore.get_connection() as conn:
            key = self._lock_key + 1
            row = conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (key,)).fetchone()
            if not row or not row["ok"]:
                raise RebuildRunning("another process is rebuilding this read model; wait for it to finish")
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (key,))

    @contextmanager
    def _fresh_schema(self, name: str) -> Iterator[None]:
        """An empty schema for the duration of the block (left-overs of a killed rebuild removed)."""
        with self.view.datastore.transaction(commit=True) as curs:
            curs.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))
            curs.execute(SQL("CREATE SCHEMA {}").format(Identifier(name)))
        try:
            yield
        finally:
            with self.view.datastore.transaction(commit=True) as curs:
                curs.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))

    # ---- following -------------------------------------------------------------------

    def follow(self, stop: threading.Event, poll_interval: float = 1.0,
               on_batch: Callable[[int], None] | None = None) -> None:
        """Keep catching up until ``stop`` is set: LISTEN for new events, poll as a fallback.

        A lost connection (server restart, network) or an embedding endpoint
        that is down is logged and retried with backoff instead of ending the follower.
        """
        poll_interval = max(poll_interval, MIN_POLL_INTERVAL)
        backoff = poll_interval
        while not stop.is_set():
            try:
                self._follow_once(stop, poll_interval, on_batch)
            except (
                psycopg.OperationalError, persistence.OperationalError, persistence.InterfaceError, LLMUnavailable
            ) as exc:
                # The database or the embedding endpoint is away: wait for it rather than end the follower.
                logger.warning("projection follower cannot go on (%s); retrying in %.1fs", exc, backoff)
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
