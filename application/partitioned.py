"""Users partitioned over several complete ledgers (ADR 0018), behind one façade.

A user belongs to one of ``SLICES`` slices (a stable hash of the id); a
routing table maps slice ranges to partitions, and a per-user override
wins over it (a user moved elsewhere). Every partition is a whole ledger
(events, notification sequence, read model, named ledgers) with its own
``LedgerService``; nothing a query needs crosses partitions, because every
query is about one user.

``PartitionedLedger`` routes each per-user call to the user's partition
while holding that user's route (a shared lock: a move of the user waits
for it, and it for a move), and runs partition-wide calls once per partition.
Where the partitions live and how routes are stored is the ``PartitionStore``
port (PostgreSQL: ``factledger.infrastructure.partitions``).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol, TypeVar

import attrs

from factledger.application.at_once import each_at_once
from factledger.application.decisions import Outcome
from factledger.application.errors import ConfigError, FactledgerError, InvalidInput, NotFound, StoreBusy
from factledger.application.ingestion import Incoming
from factledger.application.ledger_protocol import Ledger
from factledger.application.ports import ProjectionStatus, RecallHit, Tombstone
from factledger.application.replay import ReplayReport
from factledger.application.results import Diff, Explanation, HistoryPage, IngestResult, MemoryContext, Profile
from factledger.application.service import LedgerService
from factledger.application.validation import DEFAULT_LIMITS, InputLimits, require_id
from factledger.domain.kinds import Clock, HistoryKind

SLICES = 256
PARTITION_NAME = re.compile(r"^[a-z][a-z0-9_]{0,15}$")
T = TypeVar("T")


def slice_of(user_id: str) -> int:
    """The user's slice: the first 4 bytes of SHA-256 of the UTF-8 id, big-endian, mod ``SLICES``.

    Never depends on the process (``hash()`` would, with its per-process seed).
    """
    return int.from_bytes(hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).digest()[:4], "big") % SLICES


def parse_slices(text: str) -> tuple[int, int]:
    """``"LO-HI"`` (inclusive) or one slice ``"N"``, within 0..SLICES-1."""
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", text)
    if match is None:
        raise InvalidInput(f"slices must be LO-HI or N (0..{SLICES - 1}), got {text!r}")
    lo, hi = int(match[1]), int(match[2] if match[2] is not None else match[1])
    if not 0 <= lo <= hi < SLICES:
        raise InvalidInput(f"slices {text!r}: need 0 <= LO <= HI <= {SLICES - 1}")
    return lo, hi


def check_partition_name(name: str) -> str:
    if not isinstance(name, str) or not PARTITION_NAME.match(name):
        raise InvalidInput(f"partition name {name!r} must be lower-case letters, digits and _ (≤ 16, a letter first)")
    return name


class PartitionError(InvalidInput):
    """A partition or a slice assignment that does not exist or is not allowed."""


class UnknownPartition(PartitionError, NotFound):
    """No partition has this name."""


class UnroutedSlice(ConfigError):
    """A user's slice is assigned to no partition: ``factledger partitions assign`` it."""

    def __init__(self, slice_: int) -> None:
        super().__init__(
            f"slice {slice_} is assigned to no partition: run `factledger partitions assign NAME --slices "
            f"{slice_}-{slice_}` (or a range holding it)"
        )
        self.slice = slice_


class PartitionUnavailable(StoreBusy):
    """The partition holding this user cannot be reached now; other partitions still serve. Retry later."""

    def __init__(self, partition: str, reason: str) -> None:
        super().__init__(f"partition {partition!r} is unavailable ({reason}); nothing was done, try again later")
        self.partition = partition


@attrs.frozen
class PartitionInfo:
    """A partition: a whole ledger in ``schema`` on ``database_url`` (None: the router's own server)."""

    name: str
    schema: str
    database_url: str | None = None


@attrs.frozen
class RoutingTable:
    """Slices to partitions, and the users routed elsewhere (moved or pinned)."""

    slices: Mapping[int, str]
    overrides: Mapping[str, str] = attrs.field(factory=dict)

    def resolve(self, user_id: str) -> str:
        """The partition of ``user_id``: its override, else its slice's partition."""
        if user_id in self.overrides:
            return self.overrides[user_id]
        slice_ = slice_of(user_id)
        try:
            return self.slices[slice_]
        except KeyError:
            raise UnroutedSlice(slice_) from None

    def ranges(self) -> dict[str, list[tuple[int, int]]]:
        """Each partition's slices as inclusive ranges, in order."""
        found: dict[str, list[tuple[int, int]]] = {}
        for slice_ in sorted(self.slices):
            name = self.slices[slice_]
            spans = found.setdefault(name, [])
            if spans and spans[-1][1] == slice_ - 1 and self.slices.get(slice_ - 1) == name:
                spans[-1] = (spans[-1][0], slice_)
            else:
                spans.append((slice_, slice_))
        return found

    def unrouted(self) -> list[int]:
        return [s for s in range(SLICES) if s not in self.slices]


@attrs.frozen
class MoveReport:
    """What ``move_user`` did: events copied (their new positions in the target) and the source's tombstone."""

    user_id: str
    source: str
    target: str
    events: int
    positions: tuple[int, int] | None
    tombstone: Tombstone | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "source": self.source,
            "target": self.target,
            "events": self.events,
            "positions": list(self.positions) if self.positions else None,
            "source_tombstone": self.tombstone.to_dict() if self.tombstone else None,
        }


class PartitionStore(Protocol):
    """Where partitions live, how a user's route is held and resolved, and how a user moves."""

    def names(self) -> list[str]: ...

    def service(self, name: str) -> LedgerService:
        """The partition's ledger, opened on first use (``PartitionUnavailable`` when unreachable)."""
        ...

    def guard(self, name: str) -> AbstractContextManager[None]:
        """Turns a lost or refused connection to the partition into ``PartitionUnavailable``."""
        ...

    def routed(self, user_id: str, exclusive: bool = False) -> AbstractContextManager[str]:
        """Holds the user's route (shared, or exclusive for a forget) and yields their partition."""
        ...

    def unfinished_moves(self, user_id: str) -> set[str]:
        """Partitions of an interrupted move of the user (they may hold a copy)."""
        ...

    def drop_route(self, user_id: str) -> None:
        """Remove the user's override and move record (the user was forgotten)."""
        ...

    def move(self, user_id: str, to: str) -> MoveReport: ...

    def close(self) -> None: ...


class PartitionedLedger:
    """A ``Ledger``: the calls of ``LedgerService``, each for one user routed to their partition;
    partition-wide calls take the service's parameters and answer per partition (``{partition: answer}``)."""

    def __init__(self, store: PartitionStore, limits: InputLimits = DEFAULT_LIMITS) -> None:
        self.store = store
        self.limits = limits

    # ---- routing -------------------------------------------------------------------------

    def partition_of(self, user_id: str) -> str:
        """The partition that holds (or will hold) ``user_id`` now."""
        with self.store.routed(self._id(user_id)) as name:
            return name

    def service_for(self, name: str) -> LedgerService:
        return self.store.service(name)

    def _id(self, user_id: str) -> str:
        return require_id("user_id", user_id, self.limits)

    def _on_user(self, user_id: str, call: Callable[[LedgerService], T], *, exclusive: bool = False) -> T:
        with self.store.routed(self._id(user_id), exclusive) as name, self.store.guard(name):
            return call(self.store.service(name))

    def _each(self, call: Callable[[LedgerService], T]) -> dict[str, T]:
        answers: dict[str, T] = {}
        for name in self.store.names():
            with self.store.guard(name):
                answers[name] = call(self.store.service(name))
        return answers

    # ---- per user ----------------------------------------------------------------------------

    def ingest(
        self,
        user_id: str,
        message: str,
        session_id: str | None = None,
        context: Sequence[Any] | None = None,
        *,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> IngestResult:
        return self._on_user(
            user_id,
            lambda s: s.ingest(user_id, message, session_id, context, message_id=message_id, timestamp=timestamp),
        )

    def ingest_many(self, messages: Sequence[Incoming]) -> list[IngestResult | FactledgerError]:
        """``LedgerService.ingest_many``, per user: each user's messages, in order, in one call
        to their partition with their route held (a call never holds many routes). With an
        LLM, users after the first go on up to their partition's ``bulk_workers`` threads."""
        outcomes: list[IngestResult | FactledgerError | None] = [None] * len(messages)
        by_user: dict[str, list[int]] = {}
        for n, message in enumerate(messages):
            try:
                by_user.setdefault(self._id(message.user_id), []).append(n)
            except InvalidInput as exc:
                outcomes[n] = exc

        def one_user(user: tuple[str, list[int]], stop: threading.Event) -> int:
            user_id, positions = user
            if stop.is_set():  # another user's call failed: its error is raised
                return 0
            mine = [messages[n] for n in positions]
            try:
                answers, workers = self._on_user(user_id, lambda s: (s.ingest_many(mine), s.bulk.workers))
            except StoreBusy as exc:  # the route or the partition: none of this user's messages went in
                answers, workers = [exc] * len(positions), 1
            for n, answer in zip(positions, answers, strict=True):
                outcomes[n] = answer
            return workers

        users = list(by_user.items())
        if users:
            # The first user alone (a wrong key is met once), then the others at once.
            workers = one_user(users[0], threading.Event())
            each_at_once(one_user, users[1:], workers)
        return [outcome for outcome in outcomes if outcome is not None]

    def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """One user's failed messages in their partition, or every partition's, one after another."""
        if user_id is not None:
            return self._on_user(user_id, lambda s: s.retry_failed(user_id, progress))
        return [result for done in self._each(lambda s: s.retry_failed(None, progress)).values() for result in done]

    def invalidate(
        self, user_id: str, fact_id: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> str:
        return self._on_user(user_id, lambda s: s.invalidate(user_id, fact_id, reason, actor, at))

    def restate(
        self,
        user_id: str,
        text: str,
        category: str = "other",
        actor: str | None = None,
        confidence: float = 1.0,
        at: datetime | None = None,
    ) -> Outcome:
        return self._on_user(user_id, lambda s: s.restate(user_id, text, category, actor, confidence, at))

    def knows(self, user_id: str) -> bool:
        return self._on_user(user_id, lambda s: s.knows(user_id))

    def profile(
        self,
        user_id: str,
        as_of: datetime | None = None,
        clock: Clock = "said",
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Profile:
        return self._on_user(user_id, lambda s: s.profile(user_id, as_of, clock, limit=limit, offset=offset))

    def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float | None = None,
    ) -> list[RecallHit]:
        return self._on_user(user_id, lambda s: s.recall(user_id, query, types, top_k, min_similarity))

    def memory_context(self, user_id: str, query: str, top_k: int = 5, language: str = "auto") -> MemoryContext:
        return self._on_user(user_id, lambda s: s.memory_context(user_id, query, top_k, language))

    def why(self, user_id: str, item_id: str) -> Explanation:
        return self._on_user(user_id, lambda s: s.why(user_id, item_id))

    def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: HistoryKind | None = None,
        *,
        offset: int = 0,
        limit: int | None = None,
        clock: Clock = "said",
    ) -> HistoryPage:
        return self._on_user(
            user_id, lambda s: s.history(user_id, since, until, kind, offset=offset, limit=limit, clock=clock)
        )

    def export(self, user_id: str) -> dict[str, Any]:
        data = self._on_user(user_id, lambda s: s.export(user_id))
        return {**data, "partition": self.partition_of(user_id)}

    def forget(self, user_id: str, actor: str = "operator") -> Tombstone:
        """Forget the user in their partition (and in both partitions of an interrupted move of
        theirs), then drop their route override. The returned tombstone sums the counts."""
        user_id = self._id(user_id)
        with self.store.routed(user_id, exclusive=True) as name:
            tombstones = []
            for partition in [name, *sorted(self.store.unfinished_moves(user_id) - {name})]:
                with self.store.guard(partition):
                    tombstones.append(self.store.service(partition).forget(user_id, actor))
            self.store.drop_route(user_id)
        counts: Counter[str] = Counter()
        for tombstone in tombstones:
            counts.update(tombstone.counts)
        first = tombstones[0]
        return Tombstone(first.user_key, first.forgotten_at, first.actor, dict(sorted(counts.items())))

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        """Tombstones of every partition, newest first (moves leave one in their source)."""
        found = [t for answer in self._each(lambda s: s.tombstones(user_id)).values() for t in answer]
        return sorted(found, key=lambda t: t.forgotten_at, reverse=True)

    def move_user(self, user_id: str, to: str) -> MoveReport:
        """Copy the user's events into partition ``to``, switch their route, forget them in the source."""
        return self.store.move(self._id(user_id), check_partition_name(to))

    # ---- per partition -----------------------------------------------------------------------

    def ledgers(self) -> dict[str, list[dict[str, Any]]]:
        return self._each(lambda s: s.ledgers())

    def replay(
        self,
        into: str,
        extractor: str | None = None,
        *,
        rules: str | None = None,
        prompts: str | None = None,
        users: Sequence[str] | None = None,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        share: tuple[int, int] | None = None,
    ) -> dict[str, ReplayReport]:
        """Replay every partition into its own ledger ``into`` (each resumable on its own); ``users``
        ``limit`` and ``share`` apply in each partition, ``progress`` is told each partition's counts."""

        def replay(service: LedgerService) -> ReplayReport:
            return service.replay(
                into, extractor, rules=rules, prompts=prompts, users=users, limit=limit, progress=progress, share=share
            )

        return self._each(replay)

    def diff(self, other: str, user_id: str | None = None) -> dict[str, Diff]:
        """Compare each partition's live ledger with its ledger ``other``; with ``user_id``, only
        that user, in their own partition (the answer then has that one partition)."""
        if user_id is None:
            return self._each(lambda s: s.diff(other))
        with self.store.routed(self._id(user_id)) as name, self.store.guard(name):
            return {name: self.store.service(name).diff(other, user_id)}

    def catch_up(self, progress: Callable[[int, int], None] | None = None, most: int | None = None) -> dict[str, int]:
        return self._each(lambda s: s.catch_up(progress, most))

    def rebuild_read_model(self, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
        return self._each(lambda s: s.rebuild_read_model(progress))

    def read_model_status(self) -> dict[str, ProjectionStatus]:
        return self._each(lambda s: s.read_model_status())

    # ---- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> PartitionedLedger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Both are ``Ledger``s: mypy checks each against the protocol here (tests/test_ledger_protocol.py).
LEDGERS: tuple[type[Ledger], ...] = (LedgerService, PartitionedLedger)


def ranges_text(spans: Sequence[tuple[int, int]]) -> str:
    return ", ".join(f"{lo}-{hi}" if lo != hi else str(lo) for lo, hi in spans) or "-"


def iter_slices(lo: int, hi: int) -> Iterator[int]:
    return iter(range(lo, hi + 1))
