"""factledger without a database: every persistence port in process memory.

``open_ledger(backend="memory")`` (or ``FACTLEDGER_BACKEND=memory``) keeps
events in the eventsourcing library's plain-Python recorder, the read model
in ``InMemoryMemoryView`` and named ledgers in a ``MemoryStore``, held by the
settings' ``InMemoryDatabase`` (``infrastructure.memory_database``); nothing
survives the process. It serves fast tests (the unit tier runs the whole
decision, correction and replay logic on it) and trying factledger out. The
same contract tests run against it and PostgreSQL.
"""

from __future__ import annotations

import threading
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import attrs
from eventsourcing.persistence import IntegrityError, Notification, StoredEvent
from eventsourcing.popo import POPOAggregateRecorder, POPOApplicationRecorder, POPOFactory

from factledger.application.errors import MessageAlreadyRecorded, StoreBusy
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import Extractor, LedgerInfo, RelationJudge, Tombstone
from factledger.application.service import LedgerService
from factledger.domain.memory import user_memory_id
from factledger.infrastructure.config import Settings
from factledger.infrastructure.directory import choose_extractor
from factledger.infrastructure.embedding_cache import HASH_PURPOSE, SharedEmbeddings
from factledger.infrastructure.erasure import USER_KEY_PURPOSE
from factledger.infrastructure.ledgers import LIVE, LedgerError, UnknownLedger, check_ledger_name
from factledger.infrastructure.save_hooks import HookedRecorder
from factledger.infrastructure.secret import InstallationSecret
from factledger.projections.memory_view import InMemoryMemoryView, ViewState
from factledger.projections.rows import row_changes, texts_to_embed

PERSISTENCE = "factledger.infrastructure.memory:Factory"


class InMemoryRecorder(HookedRecorder, POPOApplicationRecorder):
    """The library's plain-Python recorder, with every message id of every user indexed."""

    def __init__(self) -> None:
        super().__init__()
        self._message_ids: set[tuple[UUID, str]] = set()
        self._text_hashes: dict[tuple[UUID, str], str] = {}

    def has_message(self, originator_id: UUID, message_id: str) -> bool:
        with self._database_lock:
            return (originator_id, message_id) in self._message_ids

    def text_hash_of(self, originator_id: UUID, message_id: str) -> str | None:
        with self._database_lock:
            return self._text_hashes.get((originator_id, message_id))

    def text_hashes_among(self, pairs: Sequence[tuple[UUID, str]]) -> dict[tuple[UUID, str], str | None]:
        with self._database_lock:
            return {pair: self._text_hashes.get(pair) for pair in pairs if pair in self._message_ids}

    def recorded_among(self, pairs: Sequence[tuple[UUID, str]]) -> set[tuple[UUID, str]]:
        with self._database_lock:
            return {pair for pair in pairs if pair in self._message_ids}

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        # (memory id, message id) or (memory id, message id, hash of its text)
        given = list(kwargs.pop("message_ids", None) or ())
        pairs = [(entry[0], entry[1]) for entry in given]
        with self._database_lock:  # re-entrant: the recorder takes it again inside
            taken = [message_id for pair in pairs if pair in self._message_ids for _, message_id in [pair]]
            if taken:
                raise MessageAlreadyRecorded(taken[0])
            _require_continuation(self, stored_events, kwargs.get("continues") or {})
            ids = self._insert_with_hooks(stored_events, **kwargs)
            self._message_ids.update(pairs)
            self._text_hashes.update(((e[0], e[1]), e[2]) for e in given if len(e) > 2 and e[2] is not None)
        self._notify_listeners()
        for hook in self.hooks.after_commit:
            hook()
        return ids

    def _insert_with_hooks(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """The events and the save's hooks, as on PostgreSQL but with no cursor (None): the
        database lock is the transaction, and a hook that raises takes the events out again."""
        ids = self._insert_events(stored_events, **kwargs)
        try:
            for write in self.hooks.written_in_save:
                write(stored_events)  # nothing to write here; a hook that fails takes the save back
            if ids:
                for hook in self.hooks.within_save:
                    hook(None, stored_events, ids, None)
        except BaseException:
            del self._stored_events[len(self._stored_events) - len(stored_events) :]
            for event in stored_events:
                self._stored_events_index[str(event.originator_id)].pop(event.originator_version, None)
            raise
        return ids

    def erase(self, originator_id: UUID) -> int:
        """Remove a memory's events and message ids; return how many events.

        Their places in the log stay, as gaps (as on PostgreSQL): positions
        already tracked by a read model keep their meaning.
        """
        with self._database_lock:
            self._message_ids = {pair for pair in self._message_ids if pair[0] != originator_id}
            self._text_hashes = {pair: h for pair, h in self._text_hashes.items() if pair[0] != originator_id}
            return _erase(self, originator_id)

    def select_notifications(
        self,
        start: int | None,
        limit: int,
        stop: int | None = None,
        topics: Sequence[str] = (),
        *,
        inclusive_of_start: bool = True,
    ) -> Sequence[Notification]:
        found: list[Notification] = []
        with self._database_lock:
            while len(found) < limit:
                batch = super().select_notifications(
                    start, limit - len(found), stop, topics, inclusive_of_start=inclusive_of_start
                )
                if not batch:
                    return found
                found.extend(n for n in batch if n.topic != ERASED.topic)
                start, inclusive_of_start = batch[-1].id, False
        return found


class InMemorySnapshots(POPOAggregateRecorder):
    """The library's plain-Python snapshot store, with erasing."""

    def erase(self, originator_id: UUID) -> int:
        with self._database_lock:
            return _erase(self, originator_id)


# What an erased event leaves in the plain-Python log: a gap no reader decodes.
ERASED = StoredEvent(UUID(int=0), 0, "factledger:erased", b"")


def _erase(recorder: POPOAggregateRecorder, originator_id: UUID) -> int:
    index = recorder._stored_events_index.pop(str(originator_id), {})
    for position in index.values():
        recorder._stored_events[position] = ERASED
    return len(index)


def _require_continuation(
    recorder: POPOAggregateRecorder, stored_events: Sequence[StoredEvent], continues: Mapping[Any, int]
) -> None:
    """A save that continues a stream must find the version it continues (see LedgerRecorder),
    at the position ``continues`` gives for it, if any (ADR 0043)."""
    for event in stored_events:
        versions = recorder._stored_events_index.get(str(event.originator_id), {})
        before = event.originator_version - 1
        position = continues.get(event.originator_id)
        if position is not None and before >= 1 and before in versions and versions[before] != position - 1:
            raise IntegrityError(f"memory {event.originator_id} version {before} is not the one saved here")
        if (
            before >= 1
            and before not in versions
            and not any(
                e.originator_id == event.originator_id and e.originator_version == before for e in stored_events
            )
        ):
            raise IntegrityError(f"memory {event.originator_id} has no version {before} (it was forgotten)")


class Factory(POPOFactory):
    def application_recorder(self) -> InMemoryRecorder:
        return InMemoryRecorder()

    def aggregate_recorder(self, purpose: str = "events") -> InMemorySnapshots:
        return InMemorySnapshots()


@attrs.define
class _Ledger:
    info: LedgerInfo
    ledger: MemoryLedger
    view: ViewState


class MemoryStore:
    """The ledgers of one in-memory 'database', by name (``live`` first)."""

    def __init__(self, snapshot_interval: int) -> None:
        self.snapshot_interval = snapshot_interval
        # The embedding cache every service on this store shares (the database's table, in memory).
        self.embeddings = SharedEmbeddings()
        self.tombstones: list[Tombstone] = []
        self._lock = threading.Lock()
        self._ledgers: dict[str, _Ledger] = {}
        # replay positions of shares: (ledger's schema, share count) -> share index -> position
        self._shares: dict[tuple[str, int], dict[int, int]] = {}
        self._add(LIVE, None, None, None)

    def _add(self, name: str, extractor_id: str | None, source: str | None, users: list[str] | None) -> _Ledger:
        info = LedgerInfo(
            name,
            f"memory:{name}:{uuid.uuid4().hex[:6]}",
            extractor_id,
            source,
            datetime.now(UTC),
            0,
            tuple(sorted(users)) if users else None,
        )
        entry = _Ledger(
            info,
            MemoryLedger(env={"PERSISTENCE_MODULE": PERSISTENCE}, snapshot_interval=self.snapshot_interval),
            ViewState(),
        )
        self._ledgers[name] = entry
        return entry

    def get(self, name: str) -> _Ledger:
        with self._lock:
            try:
                return self._ledgers[name]
            except KeyError:
                raise UnknownLedger(f"no ledger named {name!r} (ledgers: {', '.join(self._ledgers)})") from None

    def entries(self) -> list[LedgerInfo]:
        with self._lock:
            return sorted((e.info for e in self._ledgers.values()), key=lambda i: (i.created_at, i.name))

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None) -> LedgerInfo:
        check_ledger_name(name)
        with self._lock:
            existing = self._ledgers.get(name)
            if existing is None:
                return self._add(name, extractor_id, source, users).info
        info = existing.info
        if info.extractor_id is not None and info.extractor_id != extractor_id:
            raise LedgerError(f"ledger {name!r} was replayed with {info.extractor_id}, not {extractor_id}")
        wanted = tuple(sorted(users)) if users else None
        if info.replay_position and info.replay_users != wanted:
            raise LedgerError(f"ledger {name!r} was replayed for users {info.replay_users or 'all'}")
        return info

    def set_position(self, name: str, position: int, share: tuple[int, int] | None = None) -> None:
        entry = self.get(name)
        with self._lock:
            if share is not None:  # the share's, and the ledger's to the lowest once all shares have one
                shares = self._shares.setdefault((entry.info.schema, share[1]), {})
                shares[share[0]] = max(shares.get(share[0], 0), position)
                position = min(shares.values()) if len(shares) == share[1] else 0
            entry.info = attrs.evolve(entry.info, replay_position=max(entry.info.replay_position, position))

    def share_position(self, name: str, share: tuple[int, int]) -> int:
        entry = self.get(name)
        with self._lock:
            own = self._shares.get((entry.info.schema, share[1]), {}).get(share[0], 0)
            return max(own, entry.info.replay_position)

    def promote(self, name: str) -> str:
        if name == LIVE:
            raise LedgerError("'live' is already the live ledger")
        kept = f"previous_{datetime.now(UTC):%Y%m%d%H%M%S%f}"
        with self._lock:
            if name not in self._ledgers:
                raise UnknownLedger(f"no ledger named {name!r}")
            live, chosen = self._ledgers.pop(LIVE), self._ledgers.pop(name)
            live.info = attrs.evolve(live.info, name=kept)
            chosen.info = attrs.evolve(chosen.info, name=LIVE)
            self._ledgers[kept], self._ledgers[LIVE] = live, chosen
        return kept


@attrs.define
class InMemoryEraser:
    """``Eraser`` over every ledger of a ``MemoryStore`` (see ``infrastructure.erasure``)."""

    store: MemoryStore
    secret: InstallationSecret

    def forget(self, user_id: str, actor: str) -> Tombstone:
        originator_id = user_memory_id(user_id)
        counts: Counter[str] = Counter()
        with self.store._lock:
            entries = list(self.store._ledgers.values())
            for entry in entries:
                if not entry.view.rebuild.acquire(timeout=30):
                    raise StoreBusy("a projection rebuild holds the ledger; nothing was deleted, try again")
                try:
                    self._erase_ledger(entry, originator_id, user_id, counts)
                finally:
                    entry.view.rebuild.release()
                replay_users = entry.info.replay_users
                if replay_users and user_id in replay_users:
                    remaining = tuple(u for u in replay_users if u != user_id)
                    entry.info = attrs.evolve(entry.info, replay_users=remaining)
                    counts["replay_filters"] += 1
            counts["cached_vectors"] += self.store.embeddings.forget(user_id)
            recorded = {key: int(value) for key, value in sorted(counts.items())}
            tombstone = Tombstone(self.secret.hexdigest(USER_KEY_PURPOSE, user_id), datetime.now(UTC), actor, recorded)
            self.store.tombstones.insert(0, tombstone)
        return tombstone

    def _erase_ledger(self, entry: _Ledger, originator_id: UUID, user_id: str, counts: Counter[str]) -> None:
        ledger = entry.ledger
        recorder = ledger.recorder
        assert isinstance(recorder, InMemoryRecorder)
        with recorder._database_lock, entry.view.lock:
            texts = {t for e in ledger.events.get(originator_id) for t in texts_to_embed(row_changes(e))}
            counts["events"] += recorder.erase(originator_id)
            if ledger.snapshots is not None and isinstance(ledger.snapshots.recorder, InMemorySnapshots):
                counts["snapshots"] += ledger.snapshots.recorder.erase(originator_id)
            counts["read_model_rows"] += entry.view.forget(originator_id, user_id, ledger.head())
        hashes = {self.secret.digest(HASH_PURPOSE, text) for text in texts}
        for cache_key in [k for k in self.store.embeddings.vectors if k[1] in hashes]:
            del self.store.embeddings.vectors[cache_key]
            counts["cached_vectors"] += 1
        ledger.evict(user_id)

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        with self.store._lock:
            if user_id is None:
                return list(self.store.tombstones)
            key = self.secret.hexdigest(USER_KEY_PURPOSE, user_id)
            return [t for t in self.store.tombstones if t.user_key == key]


def memory_store(settings: Settings) -> MemoryStore:
    """The ledgers of these settings' installation (home, schema) in their ``memory_database``:
    every open of the same settings, or of settings evolved from them, sees the same data."""
    return settings.memory_database.held(
        "ledgers", str(settings.home), settings.schema, lambda: MemoryStore(settings.snapshot_interval)
    )


@attrs.define
class InMemoryLedgerDirectory:
    """``LedgerDirectory`` over a ``MemoryStore``; ``opener`` opens a ledger of it (the bootstrap's
    ``open_ledger``, given in: this module is what the bootstrap builds on, not the other way)."""

    settings: Settings
    store: MemoryStore
    opener: Callable[..., LedgerService]

    def entries(self) -> list[LedgerInfo]:
        return self.store.entries()

    def event_count(self, name: str) -> int:
        return self.store.get(name).ledger.head()

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None = None) -> LedgerInfo:
        return self.store.create(name, extractor_id, source, users)

    def set_position(self, name: str, position: int, share: tuple[int, int] | None = None) -> None:
        self.store.set_position(name, position, share)

    def share_position(self, name: str, share: tuple[int, int]) -> int:
        return self.store.share_position(name, share)

    def promote(self, name: str) -> str:
        return self.store.promote(name)

    def open(
        self,
        name: str,
        extractor: Extractor | None = None,
        judge: RelationJudge | None = None,
        inline_projection: bool = True,
    ) -> LedgerService:
        settings = attrs.evolve(self.settings, inline_projection=inline_projection)
        return self.opener(
            settings,
            extractor=extractor,
            judge=judge,
            ledger=name,
            check_embedder=extractor is not None,
            warn_if_offline=False,
        )

    def extractor(self, name: str | None, rules: str | None = None, prompts: str | None = None) -> Extractor:
        return choose_extractor(self.settings, None, name, rules, prompts)


def view_for(entry: _Ledger, embedder_id: str, dimension: int, check_embedder: bool) -> InMemoryMemoryView:
    """The ledger's read model as seen with this embedder (refused if it holds another's vectors)."""
    view = InMemoryMemoryView(entry.view, embedder_id=embedder_id, dimension=dimension)
    view.claim(check_embedder)
    return view
