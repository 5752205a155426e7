"""Partitions on PostgreSQL: the routing table, per-user route locks, and moving a user (ADR 0018).

The router is the base schema of the default database: ``factledger_partitions``
(name, database URL or NULL for the router's own server, schema),
``factledger_slices`` (one row per slice: the partition it routes to),
``factledger_partition_users`` (users routed elsewhere than their slice:
moved, or pinned by a reassignment) and ``factledger_partition_moves`` (a move
in progress; the row goes when it is done). The first open of a router with no
partition registers the base schema as the partition ``main`` owning every
slice, so a single installation is a one-partition one.

Every routed call holds PostgreSQL advisory locks in the router for its whole
run: shared on its slice and on its user. Moving a user takes the user's lock
exclusively (it waits for calls in flight, later calls wait for it, up to the
lock timeout, then ``StoreBusy``); reassigning slices takes the slices' locks.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
from eventsourcing.persistence import InterfaceError, OperationalError
from psycopg.conninfo import conninfo_to_dict
from psycopg.rows import dict_row
from psycopg.sql import SQL, Identifier
from psycopg_pool import ConnectionPool

from factledger.application.errors import ConfigError, NotFound, StoreBusy
from factledger.application.partitioned import (
    SLICES,
    MoveReport,
    PartitionedLedger,
    PartitionError,
    PartitionInfo,
    PartitionUnavailable,
    RoutingTable,
    UnknownPartition,
    UnroutedSlice,
    check_partition_name,
)
from factledger.application.service import LedgerService
from factledger.domain.memory import user_memory_id
from factledger.infrastructure.bootstrap import database_uri, open_ledger, prepare_database, startup_lock
from factledger.infrastructure.config import RESERVED_SCHEMA, SCHEMA_PATTERN, Settings, is_reserved_schema
from factledger.infrastructure.event_store import LedgerRecorder, connection_options

logger = logging.getLogger(__name__)

MAIN = "main"
SLICE_LOCKS = 0x736C6963  # pg_advisory_lock(int4, int4) namespaces: "slic", "user"
USER_LOCKS = 0x75736572
DOWN_S = 5.0  # after a partition failed to answer, calls to it fail at once for this long
PROBE_EVERY_S = 1.0  # a partition's server is probed (a connect) before a call at most this often
PROBE_TIMEOUT_S = 2
TABLES = ("factledger_partitions", "factledger_slices", "factledger_partition_users", "factledger_partition_moves")
_UNREACHABLE = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


def _user_key(user_id: str) -> int:
    return int.from_bytes(hashlib.sha256(user_id.encode("utf-8", "surrogatepass")).digest()[:4], "big", signed=True)


def _is_timeout(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled)):
            return True
        exc = exc.__cause__  # type: ignore[assignment]
    return False


def default_schema(name: str, base: str) -> str:
    """``p_<name>``; for an installation in another base schema ``p<6 hex of it>_<name>`` (≤ 24)."""
    return f"p_{name}" if base == "public" else f"p{hashlib.sha256(base.encode()).hexdigest()[:6]}_{name}"


class PostgresPartitions:
    """``PartitionStore`` on PostgreSQL, plus the admin operations (add, assign, describe)."""

    def __init__(self, settings: Settings, **parts: Any) -> None:
        self.settings = settings
        self.parts = parts  # extractor / judge / embedder overrides, for every partition
        self.uri = database_uri(settings)
        self.options = connection_options(settings.statement_timeout, settings.lock_timeout)
        self.base = settings.schema
        self.t = {name: Identifier(self.base, name) for name in TABLES}
        self._services: dict[str, LedgerService] = {}
        self._down: dict[str, float] = {}
        self._probed: dict[str, float] = {}
        self._uris: dict[str, str] = {}
        self._opening = threading.Lock()
        self.ensure()
        self.pool: ConnectionPool[psycopg.Connection[dict[str, Any]]] = ConnectionPool(
            self.uri,
            min_size=1,
            max_size=8,
            kwargs={"options": self.options, "row_factory": dict_row, "autocommit": True, "connect_timeout": 10},
            timeout=settings.lock_timeout,
            open=True,
            name="factledger-router",
        )

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(
            self.uri, row_factory=dict_row, options=self.options, autocommit=True, connect_timeout=10
        )

    def ensure(self) -> None:
        """Create the routing tables; register the base schema as ``main`` owning every slice if none exists."""
        p, s, u, m = (self.t[name] for name in TABLES)
        with startup_lock(self.uri) as conn:
            prepare_database(conn, self.base)
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, database_url text, "
                    "schema_name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())"
                ).format(p)
            )
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (slice int PRIMARY KEY CHECK (slice >= 0 AND slice < {}), "
                    "partition text NOT NULL REFERENCES {} (name))"
                ).format(s, SLICES, p)
            )
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (user_id text PRIMARY KEY, partition text NOT NULL "
                    "REFERENCES {} (name), routed_at timestamptz NOT NULL DEFAULT now())"
                ).format(u, p)
            )
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (user_id text PRIMARY KEY, source text NOT NULL, "
                    "target text NOT NULL, started_at timestamptz NOT NULL DEFAULT now(), switched boolean "
                    "NOT NULL DEFAULT false)"
                ).format(m)
            )
            if conn.execute(SQL("SELECT 1 FROM {} LIMIT 1").format(p)).fetchone() is None:
                conn.execute(SQL("INSERT INTO {} (name, schema_name) VALUES (%s, %s)").format(p), (MAIN, self.base))
                conn.execute(
                    SQL("INSERT INTO {} SELECT g, %s FROM generate_series(0, {}) g ON CONFLICT DO NOTHING").format(
                        s, SLICES - 1
                    ),
                    (MAIN,),
                )

    # ---- the routing table ---------------------------------------------------------------

    def partitions(self) -> list[PartitionInfo]:
        with self.pool.connection() as conn:
            rows = conn.execute(
                SQL("SELECT * FROM {} ORDER BY created_at, name").format(self.t["factledger_partitions"])
            )
            return [PartitionInfo(r["name"], r["schema_name"], r["database_url"]) for r in rows.fetchall()]

    def names(self) -> list[str]:
        return [info.name for info in self.partitions()]

    def info(self, name: str) -> PartitionInfo:
        for info in self.partitions():
            if info.name == name:
                return info
        raise UnknownPartition(f"no partition named {name!r}")

    def table(self) -> RoutingTable:
        with self.pool.connection() as conn:
            slices = conn.execute(SQL("SELECT slice, partition FROM {}").format(self.t["factledger_slices"])).fetchall()
            users = conn.execute(
                SQL("SELECT user_id, partition FROM {}").format(self.t["factledger_partition_users"])
            ).fetchall()
        return RoutingTable({r["slice"]: r["partition"] for r in slices}, {r["user_id"]: r["partition"] for r in users})

    def _resolve(self, conn: psycopg.Connection[dict[str, Any]], user_id: str, slice_: int) -> str:
        row = conn.execute(
            SQL(
                "SELECT coalesce((SELECT partition FROM {} WHERE user_id = %s), "
                "(SELECT partition FROM {} WHERE slice = %s)) AS p"
            ).format(self.t["factledger_partition_users"], self.t["factledger_slices"]),
            (user_id, slice_),
        ).fetchone()
        if row is None or row["p"] is None:
            raise UnroutedSlice(slice_)
        return str(row["p"])

    @contextmanager
    def routed(self, user_id: str, exclusive: bool = False) -> Iterator[str]:
        """Hold the user's route (and their slice's, shared) until the block ends; yield their partition."""
        from factledger.application.partitioned import slice_of

        slice_ = slice_of(user_id)
        lock = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        try:
            with self.pool.connection() as conn, conn.transaction():
                conn.execute(
                    SQL("SELECT pg_advisory_xact_lock_shared(%s, %s), {}(%s, %s)").format(SQL(lock)),
                    (SLICE_LOCKS, slice_, USER_LOCKS, _user_key(user_id)),
                )
                # A statement of its own: its snapshot is taken after the lock, so it sees a move just committed.
                yield self._resolve(conn, user_id, slice_)
        except psycopg.errors.LockNotAvailable as exc:
            raise StoreBusy(
                f"user {user_id!r} is being moved between partitions (or their slices reassigned): "
                "nothing was done, try again"
            ) from exc
        except _UNREACHABLE as exc:
            if _is_timeout(exc):
                raise StoreBusy(f"the partition router is busy ({exc}); try again") from exc
            raise StoreBusy(f"the partition router's database cannot be reached ({exc}); try again later") from exc

    def unfinished_moves(self, user_id: str) -> set[str]:
        with self.pool.connection() as conn:
            row = conn.execute(
                SQL("SELECT source, target FROM {} WHERE user_id = %s").format(self.t["factledger_partition_moves"]),
                (user_id,),
            ).fetchone()
        return {row["source"], row["target"]} if row else set()

    def drop_route(self, user_id: str) -> None:
        with self.pool.connection() as conn, conn.transaction():
            for name in ("factledger_partition_users", "factledger_partition_moves"):
                conn.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(self.t[name]), (user_id,))

    # ---- partitions' ledgers --------------------------------------------------------------

    def uri_of(self, info: PartitionInfo) -> str:
        return info.database_url or self.uri

    def _check_up(self, name: str) -> None:
        """Fail at once for a partition that failed moments ago; probe an open one's server now and then.

        The probe is what makes a stopped server fail fast: a call on the library's pool would wait
        for a connection, and the library retries a read 10 times.
        """
        now = time.monotonic()
        until = self._down.get(name)
        if until is not None and now < until:
            raise PartitionUnavailable(name, "it did not answer moments ago")
        uri = self._uris.get(name)
        if uri is not None and now - self._probed.get(name, 0.0) > PROBE_EVERY_S:
            self._probe(name, uri)
            self._probed[name] = now

    def _probe(self, name: str, uri: str) -> None:
        try:
            psycopg.connect(uri, connect_timeout=PROBE_TIMEOUT_S).close()
        except psycopg.Error as exc:
            self._down[name] = time.monotonic() + DOWN_S
            raise PartitionUnavailable(name, str(exc).strip().splitlines()[0][:200] or type(exc).__name__) from exc

    @contextmanager
    def guard(self, name: str) -> Iterator[None]:
        self._check_up(name)
        try:
            yield
        except _UNREACHABLE as exc:
            if _is_timeout(exc):
                raise StoreBusy(f"partition {name!r} is busy ({exc}); nothing was done, try again") from exc
            self._down[name] = time.monotonic() + DOWN_S
            raise PartitionUnavailable(name, str(exc).strip().splitlines()[0][:200]) from exc

    def service(self, name: str) -> LedgerService:
        service = self._services.get(name)
        if service is not None:
            return service
        self._check_up(name)
        with self._opening:
            service = self._services.get(name)
            if service is None:
                service = self._open(self.info(name))
                self._services[name] = service
        return service

    def _open(self, info: PartitionInfo) -> LedgerService:
        uri = self.uri_of(info)
        self._probe(info.name, uri)
        settings = attrs.evolve(self.settings, database_url=uri, schema=info.schema)
        service = open_ledger(settings, warn_if_offline=False, **self.parts)
        self._uris[info.name], self._probed[info.name] = uri, time.monotonic()
        return service

    def close(self) -> None:
        with self._opening:
            services, self._services = self._services, {}
        for service in services.values():
            service.close()
        self.pool.close()

    # ---- moving a user ---------------------------------------------------------------------

    def move(self, user_id: str, to: str) -> MoveReport:
        """Copy, project, switch the route, forget in the source: under the user's exclusive lock."""
        self.info(to)
        moves = self.t["factledger_partition_moves"]
        with self.routed(user_id, exclusive=True) as source, self._connect() as side:
            pending = side.execute(SQL("SELECT * FROM {} WHERE user_id = %s").format(moves), (user_id,)).fetchone()
            if source == to:  # already there; finish an interrupted move's forget in its source
                tombstone = None
                if pending is not None and pending["switched"] and pending["source"] != to:
                    with self.guard(pending["source"]):
                        tombstone = self.service(pending["source"]).forget(user_id, f"moved to partition {to}")
                side.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(moves), (user_id,))
                return MoveReport(user_id, pending["source"] if pending else source, to, 0, None, tombstone)
            if pending is not None and pending["target"] not in (source, to):  # an older copy somewhere else
                with self.guard(pending["target"]):
                    self.service(pending["target"]).forget(user_id, "partition move: copy of an interrupted move")
            with self.guard(source):
                src = self.service(source)
                events, message_ids, snapshot = self._read(src, user_id)
            if not events:
                raise NotFound(f"nothing is recorded for user {user_id!r} (partition {source!r})")
            side.execute(
                SQL(
                    "INSERT INTO {} (user_id, source, target) VALUES (%s, %s, %s) ON CONFLICT (user_id) DO UPDATE "
                    "SET source = excluded.source, target = excluded.target, started_at = now(), switched = false"
                ).format(moves),
                (user_id, source, to),
            )
            with self.guard(to):
                dst = self.service(to)
                recorder = dst.ledger.recorder
                assert isinstance(recorder, LedgerRecorder)
                if recorder.select_events(user_memory_id(user_id), limit=1):  # a copy left by an interrupted move
                    dst.forget(user_id, "partition move: copy of an interrupted move")
                positions = list(recorder.insert_events(events, message_ids=message_ids) or [])
                if snapshot is not None and dst.ledger.snapshots is not None:
                    dst.ledger.snapshots.recorder.insert_events([snapshot])
                dst.catch_up()
            with side.transaction():
                side.execute(
                    SQL(
                        "INSERT INTO {} (user_id, partition) VALUES (%s, %s) ON CONFLICT (user_id) "
                        "DO UPDATE SET partition = excluded.partition, routed_at = now()"
                    ).format(self.t["factledger_partition_users"]),
                    (user_id, to),
                )
                side.execute(SQL("UPDATE {} SET switched = true WHERE user_id = %s").format(moves), (user_id,))
            with self.guard(source):
                # Events written around the router (a plain ledger on the partition's schema) are copied too.
                late = src.ledger.recorder.select_events(user_memory_id(user_id), gt=events[-1].originator_version)
                if late:
                    with self.guard(to):
                        positions += list(recorder.insert_events(late) or [])
                        dst.catch_up()
                tombstone = src.forget(user_id, f"moved to partition {to}")
            side.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(moves), (user_id,))
        dst.ledger.evict(user_id)
        logger.info("moved a user from partition %s to %s (%d events)", source, to, len(events) + len(late))
        span = (min(positions), max(positions)) if positions else None
        return MoveReport(user_id, source, to, len(events) + len(late), span, tombstone)

    @staticmethod
    def _read(service: LedgerService, user_id: str) -> tuple[list[Any], list[tuple[Any, str, str | None]], Any]:
        """The user's stored events (as stored: encrypted payloads stay encrypted), message ids with their
        text hashes, and last snapshot."""
        originator_id = user_memory_id(user_id)
        recorder = service.ledger.recorder
        assert isinstance(recorder, LedgerRecorder)
        events = list(recorder.select_events(originator_id))
        with recorder.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL("SELECT message_id, text_hash FROM {} WHERE originator_id = %s").format(recorder.message_ids),
                (originator_id,),
            )
            message_ids = [(originator_id, str(row["message_id"]), row["text_hash"]) for row in curs.fetchall()]
        snapshots = service.ledger.snapshots
        latest = snapshots.recorder.select_events(originator_id, desc=True, limit=1) if snapshots else []
        return events, message_ids, latest[0] if latest else None

    # ---- administration ---------------------------------------------------------------------

    def add(self, name: str, database_url: str | None = None, schema: str | None = None) -> PartitionInfo:
        """Register a partition (its ledger is created now: an unreachable server is refused)."""
        check_partition_name(name)
        schema = schema or default_schema(name, self.base)
        if not SCHEMA_PATTERN.match(schema):
            raise PartitionError(f"schema {schema!r} must be letters, digits and _ (a letter or _ first, ≤ 24)")
        if is_reserved_schema(schema):
            raise PartitionError(f"schema {schema!r} {RESERVED_SCHEMA}")
        if database_url is not None:
            try:
                conninfo_to_dict(database_url)
            except psycopg.ProgrammingError as exc:
                raise ConfigError(f"--database-url is not a valid PostgreSQL URI: {exc}") from None
        info = PartitionInfo(name, schema, database_url)
        for other in self.partitions():
            if other.name == name:
                raise PartitionError(f"a partition named {name!r} exists already")
            if other.schema == schema and self.uri_of(other) == self.uri_of(info):
                raise PartitionError(f"partition {other.name!r} already uses schema {schema!r} on that server")
        self._open(info).close()
        with self.pool.connection() as conn:
            conn.execute(
                SQL("INSERT INTO {} (name, database_url, schema_name) VALUES (%s, %s, %s)").format(
                    self.t["factledger_partitions"]
                ),
                (name, database_url, schema),
            )
        return info

    def assign(self, name: str, lo: int, hi: int) -> dict[str, int]:
        """Route slices lo..hi to ``name``. Users already stored in another partition for those slices
        are pinned there (an override each), so nothing recorded becomes unreachable; ``move`` them
        afterwards. Returns how many users were pinned, by partition."""
        from factledger.application.partitioned import slice_of

        self.info(name)
        wanted = set(range(lo, hi + 1))
        pinned: dict[str, int] = {}
        with self.pool.connection() as conn, conn.transaction():
            for slice_ in sorted(wanted):  # waits for calls in flight on these slices; holds off new ones
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (SLICE_LOCKS, slice_))
            rows = conn.execute(
                SQL("SELECT slice, partition FROM {} WHERE slice BETWEEN %s AND %s").format(
                    self.t["factledger_slices"]
                ),
                (lo, hi),
            ).fetchall()
            for previous in sorted({r["partition"] for r in rows} - {name}):
                users = [u for u in self._users(previous) if slice_of(u) in wanted]
                overrides = self.t["factledger_partition_users"]
                for user_id in users:
                    conn.execute(
                        SQL("INSERT INTO {} (user_id, partition) VALUES (%s, %s) ON CONFLICT DO NOTHING").format(
                            overrides
                        ),
                        (user_id, previous),
                    )
                pinned[previous] = len(users)
            conn.execute(
                SQL(
                    "INSERT INTO {} SELECT g, %s FROM generate_series(%s::int, %s::int) g "
                    "ON CONFLICT (slice) DO UPDATE SET partition = excluded.partition"
                ).format(self.t["factledger_slices"]),
                (name, lo, hi),
            )
        return pinned

    def _users(self, name: str) -> list[str]:
        """Every user stored in a partition (from its read model, brought up to date first)."""
        with self.guard(name):
            service = self.service(name)
            service.catch_up()
            recorder = service.ledger.recorder
            assert isinstance(recorder, LedgerRecorder)
            with recorder.datastore.transaction(commit=False) as curs:
                curs.execute(
                    SQL("SELECT user_id FROM {}").format(Identifier(recorder.datastore.schema, "memories_users"))
                )
                return [str(row["user_id"]) for row in curs.fetchall()]

    def describe(self) -> dict[str, Any]:
        """Each partition (where it is, its slice ranges, users routed to it by override, events,
        reachable), the slices routed nowhere, and the moves in progress."""
        table = self.table()
        ranges = table.ranges()
        pinned: dict[str, int] = {}
        for partition in table.overrides.values():
            pinned[partition] = pinned.get(partition, 0) + 1
        with self.pool.connection() as conn:
            moving = conn.execute(SQL("SELECT count(*) AS n FROM {}").format(self.t["factledger_partition_moves"]))
            in_progress = int((moving.fetchone() or {"n": 0})["n"])
        described = []
        for info in self.partitions():
            entry: dict[str, Any] = {
                "name": info.name,
                "database_url": _without_password(info.database_url),
                "schema": info.schema,
                "slices": [list(span) for span in ranges.get(info.name, [])],
                "users_by_override": pinned.get(info.name, 0),
                "reachable": False,
                "events": None,
                "head": None,
            }
            try:
                with psycopg.connect(self.uri_of(info), connect_timeout=PROBE_TIMEOUT_S, row_factory=dict_row) as conn:
                    entry["reachable"] = True
                    events = Identifier(info.schema, "factledger_events")
                    found = conn.execute("SELECT to_regclass(%s) AS t", (f'"{info.schema}"."factledger_events"',))
                    exists = (found.fetchone() or {}).get("t")
                    counted = SQL("SELECT count(*) AS n, coalesce(max(notification_id), 0) AS head FROM {}")
                    row = conn.execute(counted.format(events)).fetchone() if exists else None
                    entry["events"], entry["head"] = (int(row["n"]), int(row["head"])) if row else (0, 0)
            except psycopg.Error as exc:
                entry["error"] = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            described.append(entry)
        return {"partitions": described, "unrouted_slices": table.unrouted(), "moves_in_progress": in_progress}


def _without_password(url: str | None) -> str | None:
    if url is None:
        return None
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(invalid)"
    if parts.get("password"):
        parts["password"] = "***"
    return " ".join(f"{k}={v}" for k, v in parts.items())


def open_partitioned(settings: Settings | None = None, **parts: Any) -> PartitionedLedger:
    """The partitioned ledger of an installation: the router in ``settings``' database and base schema
    (``DATABASE_URL``, else the embedded server); ``parts``: extractor / judge / embedder overrides."""
    settings = settings or Settings.load()
    if settings.backend == "memory":
        raise ConfigError("partitions need PostgreSQL (FACTLEDGER_BACKEND=memory keeps one ledger in a process)")
    return PartitionedLedger(PostgresPartitions(settings, **parts), settings.limits)
