"""The event store of user memories: an ``eventsourcing`` application.

Persistence is chosen by the environment it is given (PostgreSQL in
production, plain-old-Python objects in fast unit tests); nothing here
knows which.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, cast
from uuid import UUID

from eventsourcing.application import AggregateNotFoundError, Application, Cache, LRUCache, ProcessingEvent
from eventsourcing.persistence import JSONTranscoder, Recording
from eventsourcing.utils import EnvType, get_topic

from factledger.application.ports import MessageIndex, StreamsReader
from factledger.application.transcodings import register_transcodings
from factledger.application.validation import InputLimits, user_id_as_recorded
from factledger.domain.memory import UserMemory, user_memory_id
from factledger.domain.values import Authority, InvalidationRelation

logger = logging.getLogger(__name__)
BATCH = 1000

APPLICATION_NAME = "factledger"
DEFAULT_SNAPSHOT_INTERVAL = 200


def is_correction(event: Any) -> bool:
    """An operator's decision: a restated fact, or a fact an operator marked wrong."""
    if isinstance(event, UserMemory.FactObserved):
        return bool(event.authority == Authority.MANUAL.value)
    if isinstance(event, UserMemory.FactInvalidated):
        return event.relation == InvalidationRelation.MANUAL.value and event.superseded_by is None
    return False


class MemoryLedger(Application[UUID]):
    """Stores and loads ``UserMemory`` aggregates.

    Snapshots every ``FACTLEDGER_SNAPSHOT_INTERVAL`` events (default 200) keep
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
        # The hash kept beside a message id, to tell a retry (same text) from another message
        # under a taken id; the opener sets a keyed one (the installation secret): texts are personal.
        self.text_hash: Callable[[str], str] = lambda text: hashlib.sha256(text.encode("utf-8")).hexdigest()
        if snapshot_interval is not None:
            self.snapshotting_intervals = {UserMemory: snapshot_interval}  # type: ignore[misc]
        # Memory id -> (version, position of its last event) of each memory this process saved
        # last, beside the saved memory in the aggregate cache: a change starts from it unread
        # and its save checks that position (ADR 0043).
        # Bounded as the library bounds its cache (a size of 0 or less: unbounded).
        maxsize = int(self.env.get("AGGREGATE_CACHE_MAXSIZE") or 0)
        self._saved_heads: Cache[UUID, tuple[int, int]] = LRUCache(maxsize) if maxsize > 0 else Cache()

    # ---- the event log, across users ---------------------------------------------

    def head(self) -> int:
        """The position of the newest event (0 when empty)."""
        return self.recorder.max_notification_id() or 0

    def _notifications(self, event_class: type, after: int = 0) -> Iterator[Any]:
        start = after + 1
        while batch := self.recorder.select_notifications(start=start, limit=BATCH, topics=[get_topic(event_class)]):
            yield from batch
            start = batch[-1].id + 1

    def recorded_messages(self, after: int = 0) -> Iterator[tuple[int, str, UserMemory.MessageIngested]]:
        """(position, user id, message) of every message recorded after ``after``, in recorded order."""
        for notification in self._notifications(UserMemory.MessageIngested, after):
            event = self.mapper.to_domain_event(notification)
            yield notification.id, self.user_of(notification.originator_id), event  # type: ignore[misc]

    def recorded_history(self, after: int = 0) -> Iterator[tuple[int, str, Any]]:
        """(position, user id, event) of every message and every operator correction after
        ``after``, in recorded order: what a replay feeds into another ledger.

        Corrections are restatements (a fact set manually) and manual
        invalidations by an operator (not the ones a restatement made).
        """
        start = after + 1
        topics = [
            get_topic(c) for c in (UserMemory.MessageIngested, UserMemory.FactObserved, UserMemory.FactInvalidated)
        ]
        while batch := self.recorder.select_notifications(start=start, limit=BATCH, topics=topics):
            for notification in batch:
                event = self.mapper.to_domain_event(notification)
                if isinstance(event, UserMemory.MessageIngested) or is_correction(event):
                    yield notification.id, self.user_of(notification.originator_id), event
            start = batch[-1].id + 1

    def redaction_counts(self, user_id: str | None = None) -> dict[str, int]:
        """Secrets replaced by placeholders in recorded messages, by kind (one user's, or everyone's)."""
        totals: Counter[str] = Counter()
        if user_id is not None:
            events: Iterator[Any] = self.user_events(user_id)
        else:
            events = (event for _, _, event in self.recorded_messages())
        for event in events:
            if isinstance(event, UserMemory.MessageIngested):
                totals.update(event.redacted)
        return dict(sorted(totals.items()))

    def count_messages(self, after: int = 0) -> int:
        """How many messages were recorded after ``after`` (reads positions, decodes nothing)."""
        return sum(1 for _ in self._notifications(UserMemory.MessageIngested, after))

    def recorded_message_ids(self) -> Iterator[tuple[UUID, str]]:
        """(memory id, message id) of every message recorded, oldest first."""
        for notification in self._notifications(UserMemory.MessageIngested):
            event = self.mapper.to_domain_event(notification)
            yield notification.originator_id, str(event.message_id)  # type: ignore[attr-defined]

    def users_with_failures(self) -> list[str]:
        """Users with an extraction that failed at some time (it may have been retried since)."""
        originators = dict.fromkeys(n.originator_id for n in self._notifications(UserMemory.ExtractionFailed))
        return [self.user_of(originator_id) for originator_id in originators]

    @functools.lru_cache(maxsize=10_000)  # noqa: B019 - a ledger lives as long as its process uses it
    def user_of(self, originator_id: UUID) -> str:
        """The user id of a memory: its first event (Started) names it."""
        [started] = self.events.get(originator_id, lte=1)
        return str(started.user_id)  # type: ignore[attr-defined]

    def has_message(self, user_id: str, message_id: str, memory: UserMemory | None = None) -> bool:
        """Whether this message id was ever recorded for the user.

        With a store that indexes message ids, for the whole history; otherwise
        only the aggregate's window of recent ids can tell.
        """
        if isinstance(self.recorder, MessageIndex):
            return self.recorder.has_message(user_memory_id(user_id), message_id)
        return memory is not None and message_id in memory.recent_message_ids

    def recorded_text_hash(self, user_id: str, message_id: str) -> str | None:
        """The hash of the text recorded under the user's message id (``text_hash``), if the
        store kept one (None: a store that keeps none, or an id recorded before it did)."""
        if isinstance(self.recorder, MessageIndex):
            return self.recorder.text_hash_of(user_memory_id(user_id), message_id)
        return None

    def recorded_text_hashes(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        """Those of the (user id, message id) pairs ever recorded, with the hash of the text
        recorded (None: unknown), in one read; with a store that indexes no ids, none."""
        if not isinstance(self.recorder, MessageIndex) or not pairs:
            return {}
        by_memory = {(user_memory_id(user_id), message_id): (user_id, message_id) for user_id, message_id in pairs}
        return {by_memory[pair]: h for pair, h in self.recorder.text_hashes_among(list(by_memory)).items()}

    def recorded_among(self, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
        """Those of the (user id, message id) pairs ever recorded, in one read; with a store
        that indexes no message ids, none (a memory's window of recent ids still tells)."""
        if not isinstance(self.recorder, MessageIndex) or not pairs:
            return set()
        by_memory = {(user_memory_id(user_id), message_id): (user_id, message_id) for user_id, message_id in pairs}
        return {by_memory[pair] for pair in self.recorder.recorded_among(list(by_memory))}

    def register_transcodings(self, transcoder: JSONTranscoder) -> None:
        super().register_transcodings(transcoder)
        register_transcodings(transcoder)

    def _take_snapshots(self, processing_event: Any) -> None:
        """Snapshot a memory whose save crossed an interval, from the aggregate in hand.

        The library would load the aggregate again at the exact interval version
        (decoding its whole state) before encoding it; the saved aggregate is
        already current, so it is snapshotted at its own version. The events
        are committed when this runs: a snapshot that cannot be written (a
        timeout, a lost connection) is logged, never reported as a failed save,
        or the caller would decide and record the message again.
        """
        saved: dict[Any, int] = {}
        for event in processing_event.events:
            saved[event.originator_id] = saved.get(event.originator_id, 0) + 1
        for aggregate_id, count in saved.items():
            aggregate = processing_event.aggregates.get(aggregate_id)
            interval = self.snapshotting_intervals.get(type(aggregate)) if aggregate is not None else None
            if not interval or aggregate.version // interval == (aggregate.version - count) // interval:
                continue
            try:
                snapshot_class = getattr(type(aggregate), "Snapshot", type(self).snapshot_class)
                self.snapshots.put([snapshot_class.take(aggregate)])  # type: ignore[union-attr]
            except Exception:
                logger.exception("could not write a snapshot; the events are recorded and a later one will be taken")

    @property
    def storage_key(self) -> str:
        """Where this ledger's events live (its schema on PostgreSQL): stable across renames."""
        return self.env.get("POSTGRES_SCHEMA") or self.name

    def user_id(self, value: object, limits: InputLimits) -> str:
        """A user id checked and normalised to NFC, or the exact form a user was recorded under
        before ids were normalised (ADR 0027)."""
        return user_id_as_recorded(value, limits, lambda user_id: self.find_memory(user_id) is not None)

    def find_memory(self, user_id: str) -> UserMemory | None:
        """The user's memory, or None if nothing was ever recorded for them (or they were forgotten).

        A memory this process holds in its cache is checked against the store:
        if the user was forgotten since (here or in another process), the
        cached copy is dropped rather than written on.
        """
        memory_id = user_memory_id(user_id)
        cached = self._cached(memory_id)
        if cached is not None:
            fresh = self._fast_forwarded(cached)
            if fresh is not None:
                return fresh
            self.evict(user_id)
        try:
            memory: UserMemory = self.repository.get(memory_id)
        except AggregateNotFoundError:
            return None
        return memory

    def _cached(self, memory_id: UUID) -> UserMemory | None:
        cache = self.repository.cache
        try:
            return cast(UserMemory, cache.get(memory_id)) if cache is not None else None
        except KeyError:
            return None

    def find_memories(self, user_ids: Sequence[str]) -> dict[str, UserMemory | None]:
        """``find_memory`` of each user; the memories this process holds are checked against
        the store in one read for all of them (a bulk ingest's group of messages)."""
        cached = {}
        for user_id in dict.fromkeys(user_ids):
            memory = self._cached(user_memory_id(user_id))
            if memory is not None:
                cached[user_id] = memory
        found: dict[str, UserMemory | None] = {}
        if isinstance(self.recorder, StreamsReader) and len(cached) > 1:
            stored = self.recorder.select_events_from({memory.id: memory.version for memory in cached.values()})
            for user_id, memory in cached.items():
                fresh = self._fast_forwarded(memory, stored.get(memory.id, []))
                if fresh is not None:
                    found[user_id] = fresh
                else:
                    self.evict(user_id)
        for user_id in user_ids:
            if user_id not in found:
                found[user_id] = self.find_memory(user_id)
        return found

    def memory_to_write(self, user_id: str) -> UserMemory | None:
        """The user's memory to change and save: a copy of the one this process saved last,
        not read again (ADR 0043): its save checks that the stored stream still ends where that
        save left it (a writer elsewhere, or a forget, fails it and the retry reloads);
        otherwise ``find_memory``."""
        memory_id = user_memory_id(user_id)
        cached = self._cached(memory_id)
        if cached is not None and self.saved_here(cached):
            return copy.deepcopy(cached)
        return self.find_memory(user_id)

    def saved_here(self, memory: UserMemory) -> bool:
        """Whether ``memory`` is at the version this process saved it last (so maybe unread)."""
        head = self._saved_head(memory.id)
        return head is not None and head[0] == memory.version

    def _saved_head(self, memory_id: UUID) -> tuple[int, int] | None:
        try:
            return self._saved_heads.get(memory_id)
        except KeyError:
            return None

    def _record(self, processing_event: ProcessingEvent[UUID]) -> list[Recording[UUID]]:
        """The library's, telling the recorder where each stream this process saved last must
        still end (``continues``), then keeping the saved memories and where they end now."""
        continues = {}
        for event in processing_event.events:
            head = self._saved_head(event.originator_id)
            if head is not None and head[0] == event.originator_version - 1:
                continues[event.originator_id] = head[1]
        if continues:
            processing_event.saved_kwargs["continues"] = continues
        recordings = super()._record(processing_event)
        cache = self.repository.cache
        last = {r.domain_event.originator_id: r for r in recordings}
        for memory_id, recording in last.items():
            aggregate = processing_event.aggregates.get(memory_id)
            position = recording.notification.id
            if cache is None or aggregate is None or position is None:
                continue
            if aggregate.version == recording.domain_event.originator_version:
                cache.put(memory_id, aggregate)  # handed out as copies (``memory_to_write``)
                self._saved_heads.put(memory_id, (aggregate.version, position))
        return recordings

    def _fast_forwarded(self, cached: UserMemory, stored: Sequence[Any] | None = None) -> UserMemory | None:
        """A copy of the cached memory brought up to date, in one read (or from ``stored``, its
        events from its own version on, read already): the event it was last changed by (it
        must be the stored one: else the user was forgotten, maybe begun again) and any saved
        after it (by another process). None: load it afresh."""
        if stored is None:
            stored = self.recorder.select_events(cached.id, gt=cached.version - 1)
        if not stored:
            return None
        last: Any = self.mapper.to_domain_event(stored[0])
        if last.originator_version != cached.version or last.timestamp != cached.modified_on:
            return None
        memory = copy.deepcopy(cached)
        if len(stored) > 1:
            for event in stored[1:]:
                change: Any = self.mapper.to_domain_event(event)
                memory = change.mutate(memory)
            cache = self.repository.cache
            if cache is not None:
                cache.put(memory.id, copy.deepcopy(memory))  # the caller changes its own copy
        return memory

    def evict(self, user_id: str) -> None:
        """Drop the user's memory from this process's cache (it was forgotten)."""
        cache = self.repository.cache
        if cache is not None:
            try:
                cache.get(user_memory_id(user_id), evict=True)
            except KeyError:
                pass
        try:
            self._saved_heads.get(user_memory_id(user_id), evict=True)
        except KeyError:
            pass
        self.user_of.cache_clear()

    def memory_at(self, user_id: str, version: int) -> UserMemory:
        return self.repository.get(user_memory_id(user_id), version=version)

    def user_events(self, user_id: str) -> Iterator[Any]:
        """Every event of the user's memory, oldest first."""
        return iter(self.events.get(user_memory_id(user_id)))
