"""The eventsourcing library's PostgreSQL persistence, with what factledger adds.

Selected with ``PERSISTENCE_MODULE=factledger.infrastructure.event_store``:

* every connection gets a ``statement_timeout`` and a ``lock_timeout``, so no
  statement and no lock wait runs forever (the library sets only the
  idle-in-transaction timeout);
* ``LedgerRecorder`` inserts a save's events in one transaction together with
  the ids of the messages the save records, in a table keyed by (user, message
  id): a message id is refused for a user's whole history, not a window of it;
* its ``SaveHooks`` (``save_hooks``): ``written_in_save`` (statements that
  only write: cached vectors, call readings), ``projected_in_save`` or, for a
  large save, ``within_save`` (the inline projection) write in the same
  transaction: one commit a message instead of several (ADR 0020);
  ``after_commit`` runs once it committed;
* a save of a message's few events sends BEGIN, the lock, then one statement
  taking the message ids, notifying, checking the streams it continues,
  inserting the events (ADR 0043) and writing the hooks' rows and the inline
  projection's as CTEs (ADR 0044), and COMMIT, in one round trip (pipeline
  mode; what would make the save wrong fails the statement, ADR 0046); a large
  one (a user moved between partitions) goes statement by statement, as the
  library's own pipelined insert could leave client and server blocked on
  each other's buffers while holding the events table lock.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any, cast
from uuid import UUID

import psycopg
from eventsourcing.persistence import IntegrityError, InterfaceError, OperationalError, ProgrammingError, StoredEvent
from eventsourcing.postgres import (
    PostgresAggregateRecorder,
    PostgresApplicationRecorder,
    PostgresFactory,
)
from eventsourcing.utils import EnvType
from psycopg import pq
from psycopg.sql import SQL, Composed, Identifier

from factledger.application.errors import MessageAlreadyRecorded, StoreBusy
from factledger.infrastructure.save_hooks import NO_HOOKS, HookedRecorder
from factledger.projections.vector_codec import bind_binary_vectors
from factledger.projections.view import SaveProjection

logger = logging.getLogger(__name__)

CONNECTION_ATTEMPTS = 3
# At most this many events are sent in one pipelined round trip; more (a whole user's stream)
# go statement by statement, so client and server never wait on each other's full buffers
# while the events table is locked.
PIPELINED_EVENTS = 256


STATEMENT_TIMEOUT = "POSTGRES_STATEMENT_TIMEOUT"  # seconds
# The role a ledger's connections run as (a tenant's, see factledger.infrastructure.tenant_roles).
DATABASE_ROLE = "FACTLEDGER_DATABASE_ROLE"
ROLE_NAME = re.compile(r"^[a-z0-9_]{1,63}$")


def connection_options(statement_timeout: float, lock_timeout: float, role: str | None = None) -> str:
    """libpq ``options`` that bound every statement and every lock wait of a session (seconds) and,
    given a ``role``, run the whole session as that role: set at connection start, it is what
    ``RESET ROLE`` and ``DISCARD ALL`` return to, so no reuse of the connection can drop it."""
    options = f"-c statement_timeout={int(statement_timeout * 1000)} -c lock_timeout={int(lock_timeout * 1000)}"
    if role is None:
        return options
    if not ROLE_NAME.match(role):  # a derived name; anything else would need libpq escaping
        raise ValueError(f"role {role!r} is not a plain lower-case name")
    return f"{options} -c role={role}"


def _is_timeout(exc: BaseException) -> bool:
    cause = exc.__cause__
    return isinstance(cause, (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled))


class LedgerRecorder(HookedRecorder, PostgresApplicationRecorder):
    """Events and message ids in one transaction (see the module's docstring)."""

    def __init__(self, datastore: Any, *, events_table_name: str = "stored_events") -> None:
        super().__init__(datastore, events_table_name=events_table_name)
        self.message_ids_table_name = events_table_name.removesuffix("_events") + "_message_ids"
        self.check_identifier_length(self.message_ids_table_name)
        self.message_ids = Identifier(self.datastore.schema, self.message_ids_table_name)
        # What runs inside each save's transaction and after its commit: ``attach``, once.
        self.hooks = NO_HOOKS
        # The library's lock statements less its SET LOCAL lock_timeout: every connection has
        # that timeout already (``connection_options``, the same value), so a save need not send it.
        self._lock_and_notify_statements = [
            SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(Identifier(self.datastore.schema, events_table_name)),
            SQL("NOTIFY {}").format(Identifier(self.channel_name)),
        ]
        # The table lock and the notification in one round trip (no parameters: one simple query).
        self._lock_and_notify = SQL("; ").join(self._lock_and_notify_statements)
        self._take_message_id = SQL(
            "INSERT INTO {} (originator_id, message_id, text_hash) VALUES (%s, %s, %s) "
            "ON CONFLICT DO NOTHING RETURNING 1"
        ).format(self.message_ids)
        self._version_stored = SQL("SELECT 1 FROM {} WHERE originator_id = %s AND originator_version = %s").format(
            Identifier(self.datastore.schema, self.events_table_name)
        )
        # The same, for a stream this process saved last: its last event must still be the one
        # that save wrote, at the position it got (ADR 0043: the memory was not read again).
        self._event_stored = SQL(
            "SELECT 1 FROM {} WHERE originator_id = %s AND originator_version = %s AND notification_id = %s"
        ).format(Identifier(self.datastore.schema, self.events_table_name))
        # A pipelined save's message ids, notification and events in one statement, under the
        # table lock (ADR 0043). What would make the save wrong makes the statement fail, so the
        # COMMIT sent after it in the same round trip commits nothing (ADR 0046): a message id
        # recorded before breaks its table's key; events of a stream that does not end where the
        # save continues it (at the position ``continues`` gives, if any) go in with no stream,
        # which the events table refuses. It answers with the events' positions.
        self._insert_save_template = SQL(
            "WITH taken AS (INSERT INTO {m} (originator_id, message_id, text_hash) "
            "SELECT * FROM unnest(%s::uuid[], %s::text[], %s::text[]) RETURNING 1), "
            "continued AS (SELECT count(*) = %s AS ok FROM unnest(%s::uuid[], %s::bigint[], %s::bigint[]) "
            "AS c(id, v, n) WHERE EXISTS (SELECT FROM {t} AS e WHERE e.originator_id = c.id "
            "AND e.originator_version = c.v AND (c.n IS NULL OR e.notification_id = c.n))), "
            "inserted AS (INSERT INTO {t} (originator_id, originator_version, topic, state) "
            "SELECT CASE WHEN (SELECT ok FROM continued) THEN originator_id END, originator_version, topic, state "
            "FROM unnest(%s::{type}[]) WHERE (SELECT count(*) FROM (SELECT pg_notify(%s, '')) AS n) = 1 "
            "RETURNING notification_id){more} "
            "SELECT (SELECT count(*) FROM taken) AS taken, "
            "ARRAY(SELECT notification_id FROM inserted ORDER BY notification_id) AS ids{answers}"
        )
        self._insert_save_names = dict(
            m=self.message_ids,
            t=Identifier(self.datastore.schema, self.events_table_name),
            type=Identifier(self.datastore.schema, self.stored_event_type_name),
        )
        self._insert_save = self._insert_save_template.format(more=SQL(""), answers=SQL(""), **self._insert_save_names)

    # ---- message ids ---------------------------------------------------------------

    def ensure_message_index(self, recorded: Callable[[], Iterable[tuple[UUID, str]]]) -> None:
        """Create the message-id table, filled from ``recorded`` (events written before it existed).

        Table and backfill commit together, so an interrupted start leaves no
        half-filled index behind.
        """
        with self.datastore.transaction(commit=True) as curs:
            curs.execute("SELECT to_regclass(%s) AS t", (f'"{self.datastore.schema}"."{self.message_ids_table_name}"',))
            row = curs.fetchone()
            if row is not None and row["t"] is not None:
                self._add_text_hashes(curs)
                return
            curs.execute(
                SQL(
                    "CREATE TABLE {} (originator_id uuid NOT NULL, message_id text NOT NULL, text_hash text, "
                    "PRIMARY KEY (originator_id, message_id))"
                ).format(self.message_ids)
            )
            pairs = list(recorded())
            if pairs:
                logger.info("indexing %d message ids recorded before the index existed", len(pairs))
                curs.executemany(
                    SQL("INSERT INTO {} VALUES (%s, %s) ON CONFLICT DO NOTHING").format(self.message_ids), pairs
                )

    def _add_text_hashes(self, curs: Any) -> None:
        """A table from before the text hashes gets their column; its rows keep none (unknown:
        an id sent again is a duplicate, as it was)."""
        curs.execute(
            "SELECT 1 FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "AND column_name = 'text_hash'",
            (self.datastore.schema, self.message_ids_table_name),
        )
        if curs.fetchone() is None:
            curs.execute(SQL("ALTER TABLE {} ADD COLUMN text_hash text").format(self.message_ids))

    def text_hash_of(self, originator_id: UUID, message_id: str) -> str | None:
        """The hash of the text recorded under ``message_id`` (None: not recorded, or before hashes)."""
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL("SELECT text_hash FROM {} WHERE originator_id = %s AND message_id = %s").format(self.message_ids),
                (originator_id, message_id),
            )
            row = curs.fetchone()
            return None if row is None else row["text_hash"]

    def has_message(self, originator_id: UUID, message_id: str) -> bool:
        """Whether ``message_id`` was recorded for the memory ``originator_id``."""
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL("SELECT 1 FROM {} WHERE originator_id = %s AND message_id = %s").format(self.message_ids),
                (originator_id, message_id),
            )
            return curs.fetchone() is not None

    def text_hashes_among(self, pairs: Sequence[tuple[UUID, str]]) -> dict[tuple[UUID, str], str | None]:
        """Those of the pairs already recorded, each with its text hash (None: from before hashes)."""
        if not pairs:
            return {}
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT m.originator_id, m.message_id, m.text_hash FROM {} AS m "
                    "JOIN unnest(%s::uuid[], %s::text[]) AS p(originator_id, message_id) "
                    "USING (originator_id, message_id)"
                ).format(self.message_ids),
                ([o for o, _ in pairs], [m for _, m in pairs]),
            )
            return {(row["originator_id"], row["message_id"]): row["text_hash"] for row in curs.fetchall()}

    def recorded_among(self, pairs: Sequence[tuple[UUID, str]]) -> set[tuple[UUID, str]]:
        """Those of the (memory id, message id) pairs already recorded, in one statement."""
        if not pairs:
            return set()
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT m.originator_id, m.message_id FROM {} AS m "
                    "JOIN unnest(%s::uuid[], %s::text[]) AS p(originator_id, message_id) "
                    "USING (originator_id, message_id)"
                ).format(self.message_ids),
                ([o for o, _ in pairs], [m for _, m in pairs]),
            )
            return {(row["originator_id"], row["message_id"]) for row in curs.fetchall()}

    def select_events_from(self, versions: Mapping[UUID, int]) -> dict[UUID, list[StoredEvent]]:
        """Each memory's events from the given version on, oldest first, in one statement."""
        found: dict[UUID, list[StoredEvent]] = {}
        if not versions:
            return found
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT e.originator_id, e.originator_version, e.topic, e.state FROM {} AS e "
                    "JOIN unnest(%s::uuid[], %s::bigint[]) AS v(originator_id, originator_version) "
                    "ON e.originator_id = v.originator_id AND e.originator_version >= v.originator_version "
                    "ORDER BY e.originator_id, e.originator_version"
                ).format(Identifier(self.datastore.schema, self.events_table_name)),
                (list(versions), list(versions.values())),
            )
            for row in curs.fetchall():
                found.setdefault(row["originator_id"], []).append(
                    StoredEvent(row["originator_id"], row["originator_version"], row["topic"], bytes(row["state"]))
                )
        return found

    def _insert_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        # Under the table lock (``_insert_stored_events``), as in the pipelined save (ADR 0043):
        # a concurrent save of the same message id waits for the lock, then finds the id taken;
        # no save waits on a key while holding the lock. Alone only for a save without events.
        for originator_id, message_id, *text_hash in kwargs.get("message_ids") or ():
            curs.execute(self._take_message_id, (originator_id, message_id, text_hash[0] if text_hash else None))
            if curs.fetchone() is None:
                raise MessageAlreadyRecorded(message_id)

    # ---- events ----------------------------------------------------------------------

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        # Under the table lock, which forgetting a user also takes: a save that
        # continues a stream must find the version it continues. A writer that
        # loaded a memory just before it was forgotten gets the IntegrityError
        # of a stale save, reloads, and finds no memory: nothing of the
        # forgotten stream is written back.
        curs.execute(self._lock_and_notify)
        self._insert_events(curs, stored_events, **kwargs)
        for originator_id, version in _continued(stored_events):
            curs.execute(*self._continuity_check(originator_id, version, kwargs))
            if curs.fetchone() is None:
                raise _forgotten(originator_id, version)
        # The insert itself, without the parent's second lock and notify (done above).
        PostgresAggregateRecorder._insert_stored_events(self, curs, stored_events, **kwargs)

    def _continuity_check(
        self, originator_id: Any, version: int, kwargs: Mapping[str, Any]
    ) -> tuple[SQL | Any, tuple[Any, ...]]:
        """The statement that finds the version a save continues: at the position this process
        saved it at, when the save says (``continues``: stream -> position), else any."""
        position = (kwargs.get("continues") or {}).get(originator_id)
        if position is None:
            return self._version_stored, (originator_id, version)
        return self._event_stored, (originator_id, version, position)

    def insert_events(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        """Insert in one transaction; retried on a lost connection, never on a timeout."""
        for attempt in range(1, CONNECTION_ATTEMPTS + 1):
            try:
                ids = self._insert_in_transaction(stored_events, **kwargs)
            except (InterfaceError, OperationalError) as exc:
                if _is_timeout(exc):
                    raise StoreBusy(str(exc)) from exc
                if attempt == CONNECTION_ATTEMPTS:
                    raise
                logger.warning("lost the connection while saving events (%s); retrying", exc)
                continue
            for hook in self.hooks.after_commit:
                hook()
            return ids
        raise AssertionError("unreachable")

    def _insert_in_transaction(self, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int] | None:
        # get_connection maps psycopg's errors to the library's: a stale version
        # becomes the IntegrityError the service retries on.
        with self.datastore.get_connection() as conn:
            if stored_events and len(stored_events) <= PIPELINED_EVENTS:
                return self._insert_in_one_statement(conn, stored_events, **kwargs)
            with conn.transaction(), conn.cursor() as curs:
                if not stored_events:
                    self._insert_events(curs, stored_events, **kwargs)
                    return []
                self._insert_stored_events(curs, stored_events, **kwargs)  # the lock, message ids, events
                ids = self._fetch_ids_after_insert_events(curs, stored_events, **kwargs)
                bind_binary_vectors(curs)
                for statement, parameters in self._written(stored_events):
                    curs.execute(statement, parameters)
                if ids:
                    for hook in self.hooks.within_save:
                        hook(curs, stored_events, ids, None)
                return ids

    def _insert_in_one_statement(self, conn: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> Sequence[int]:
        """A save that fits one statement, with what ``projected_in_save`` writes beside its events
        (ADR 0044), and its COMMIT, in one round trip (ADR 0046). A statement the server refuses
        with those rows is sent again without them, whose catch-up then projects the events
        (quarantining what it must): a save never fails for its projection. A refusal of the
        save itself comes back the second time too."""
        written = self._written(stored_events)  # once: a hook hands over what it holds
        projections = [p for hook in self.hooks.projected_in_save if (p := hook(conn, stored_events)) is not None]
        try:
            if projections:
                try:
                    with _transaction_in_pipeline(conn):
                        return self._insert_pipelined(conn, stored_events, written, projections, **kwargs)
                except _REFUSALS as exc:
                    logger.info("the server refused a save with its own rows (%s); saving it without them", exc)
            with _transaction_in_pipeline(conn):
                return self._insert_pipelined(conn, stored_events, written, [], **kwargs)
        except _Refused as refused:  # rolled back: say why, in the library's and our own terms
            raise self._refusal(conn, refused.why, stored_events, kwargs) from None

    def _written(self, stored_events: Sequence[StoredEvent]) -> list[tuple[Any, Sequence[Any]]]:
        """What the ``written_in_save`` hooks write with these events: their statements, in order."""
        return [statement for write in self.hooks.written_in_save for statement in write(stored_events) or ()]

    def _insert_pipelined(
        self,
        conn: Any,
        stored_events: Sequence[StoredEvent],
        written: Sequence[tuple[Any, Sequence[Any]]],
        projections: Sequence[SaveProjection],
        **kwargs: Any,
    ) -> Sequence[int]:
        """The save sent in one round trip (pipeline mode) and read after: BEGIN, the table lock,
        one statement taking the message ids, notifying, inserting the events (ADR 0043),
        writing what the hooks wrote (``written``) and the ``projections`` (ADR 0044), then
        COMMIT (ADR 0046). A message id recorded before, or a continued stream that does not
        end where the save continues it, makes the statement fail (``_Refused``): the COMMIT
        after it then commits nothing. Returns the positions, once each projection was told
        whether it wrote."""
        given = _given(kwargs)
        statement, more_parameters = self._save_statement(written, projections)
        try:
            with conn.pipeline():
                conn.execute(_BEGIN)
                events = bind_binary_vectors(conn.cursor())  # rows and cached vectors go as binary parameters
                events.execute(self._lock_and_notify_statements[0])  # the table lock
                parameters = self._insert_parameters(stored_events, given, _continued(stored_events), kwargs)
                events.execute(statement, (*parameters, *more_parameters))
                conn.execute(_COMMIT)
        except (psycopg.errors.UniqueViolation, psycopg.errors.NotNullViolation) as exc:
            why = self._refused_because(exc)
            if why is None:
                raise
            raise _Refused(why) from exc
        row = events.fetchone()
        ids = row["ids"] if row is not None else []
        if row is None or len(ids) != len(stored_events):  # the statement guarantees it: never seen
            raise IntegrityError(f"the save committed {len(ids)} of its {len(stored_events)} events")
        for i, projection in enumerate(projections):
            projection.done(bool(row[f"projected_{i}"]), ids)
        return ids

    def _refused_because(self, exc: psycopg.Error) -> str | None:
        """What a failed save statement says of the save ("taken", "moved"), or None: another error."""
        table, column = exc.diag.table_name, exc.diag.column_name
        if isinstance(exc, psycopg.errors.UniqueViolation) and table == self.message_ids_table_name:
            return "taken"
        if isinstance(exc, psycopg.errors.NotNullViolation) and (table, column) == (
            self.events_table_name,
            "originator_id",
        ):
            return "moved"
        return None

    def _refusal(
        self, conn: Any, why: str, stored_events: Sequence[StoredEvent], kwargs: Mapping[str, Any]
    ) -> Exception:
        """The error a refused save raises: the message id recorded before (looked up on ``conn``:
        the statement that met it was rolled back), or the stream the save continues gone."""
        if why == "moved":
            continued = _continued(stored_events)
            return _forgotten(*continued[0]) if continued else IntegrityError("the save's events did not go in")
        given = _given(kwargs)
        with conn.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT originator_id, message_id FROM {} WHERE (originator_id, message_id) IN "
                    "(SELECT * FROM unnest(%s::uuid[], %s::text[]))"
                ).format(self.message_ids),
                ([o for o, _, _ in given], [m for _, m, _ in given]),
            )
            recorded = {(row["originator_id"], row["message_id"]) for row in curs.fetchall()}
        # none recorded: the save named one id twice
        return MessageAlreadyRecorded(next((m for o, m, _ in given if (o, m) in recorded), given[0][1]))

    def _save_statement(
        self, written: Sequence[tuple[Any, Sequence[Any]]], projections: Sequence[SaveProjection]
    ) -> tuple[Composed, list[Any]]:
        """The save's statement with the hooks' writes (CTEs ``written_N``) and each projection's
        CTEs after its events, and a column ``projected_N`` saying whether that one wrote; their
        parameters, in order. (Data-modifying CTEs run whether or not anything reads them.)"""
        if not projections and not written:
            return self._insert_save, []
        ctes: list[Any] = [SQL("{} AS ({})").format(Identifier(f"written_{i}"), w[0]) for i, w in enumerate(written)]
        parameters: list[Any] = [value for _, values in written for value in values]
        answers = []
        for i, projection in enumerate(projections):
            ctes.extend(projection.ctes)
            parameters.extend(projection.parameters)
            answers.append(SQL(", {} AS {}").format(projection.projected, Identifier(f"projected_{i}")))
        statement = self._insert_save_template.format(
            more=SQL("").join(SQL(", {}").format(cte) for cte in ctes),
            answers=SQL("").join(answers),
            **self._insert_save_names,
        )
        return statement, parameters

    def _insert_parameters(
        self,
        events: Sequence[StoredEvent],
        given: Sequence[tuple[Any, str, str | None]],
        continued: Sequence[tuple[Any, int]],
        kwargs: Mapping[str, Any],
    ) -> tuple[Any, ...]:
        positions = kwargs.get("continues") or {}
        return (
            [originator_id for originator_id, _, _ in given],
            [message_id for _, message_id, _ in given],
            [text_hash for _, _, text_hash in given],
            len(continued),
            [originator_id for originator_id, _ in continued],
            [version for _, version in continued],
            [positions.get(originator_id) for originator_id, _ in continued],
            [self.construct_pg_stored_event(e.originator_id, e.originator_version, e.topic, e.state) for e in events],
            self.channel_name,
        )


_BEGIN = SQL("BEGIN")
# What the server answers when it will not take a statement's values (a key taken, a value out of
# range, a type it cannot read): a save sent with its own rows is then sent again without them.
_REFUSALS = (psycopg.IntegrityError, psycopg.DataError, psycopg.ProgrammingError, psycopg.InternalError)


_COMMIT = SQL("COMMIT")


class _Refused(Exception):
    """The save's statement failed for what it found: "taken" (a message id recorded before) or
    "moved" (a stream the save continues does not end there)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@contextmanager
def _transaction_in_pipeline(conn: Any) -> Iterator[None]:
    """A transaction on an autocommit connection whose BEGIN and COMMIT the block sends itself,
    in its pipeline (psycopg's transaction block sends each alone: a round trip of its own);
    rolled back if the block raises, or ends with the transaction still open."""
    try:
        yield
        if conn.info.transaction_status != pq.TransactionStatus.IDLE:
            raise ProgrammingError(f"the save's transaction did not commit ({conn.info.transaction_status!r})")
    except BaseException:
        if conn.info.transaction_status in (pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR):
            # psycopg's rollback, not a bare ROLLBACK: it also forgets the statements it
            # prepared in the aborted pipeline, which the server never kept.
            with suppress(psycopg.Error):
                conn.rollback()
        raise


def _given(kwargs: Mapping[str, Any]) -> list[tuple[Any, str, str | None]]:
    """The save's message ids: (memory, message id, text hash or None)."""
    return [(entry[0], entry[1], entry[2] if len(entry) > 2 else None) for entry in kwargs.get("message_ids") or ()]


def _continued(stored_events: Sequence[StoredEvent]) -> list[tuple[Any, int]]:
    """(stream, the version before its first event here) for each stream a save continues."""
    first: dict[Any, int] = {}
    for event in stored_events:
        version = event.originator_version
        first[event.originator_id] = min(first.get(event.originator_id, version), version)
    return [(originator_id, version - 1) for originator_id, version in first.items() if version > 1]


def _forgotten(originator_id: Any, version: int) -> IntegrityError:
    return IntegrityError(f"memory {originator_id} has no version {version} (it was forgotten)")


class SnapshotRecorder(PostgresAggregateRecorder):
    """Snapshots, of which only the latest few per aggregate are kept.

    The library appends one per interval and never removes any: a user's
    snapshots would then add up to far more than their events. Older versions
    are rebuilt from the events, so only the newest are worth keeping.
    """

    KEEP = 2

    def _insert_stored_events(self, curs: Any, stored_events: Sequence[StoredEvent], **kwargs: Any) -> None:
        super()._insert_stored_events(curs, stored_events, **kwargs)
        table = Identifier(self.datastore.schema, self.events_table_name)
        for originator_id in {e.originator_id for e in stored_events}:
            curs.execute(
                SQL(
                    "DELETE FROM {t} WHERE originator_id = %(id)s AND originator_version < ("
                    "SELECT min(originator_version) FROM (SELECT originator_version FROM {t} "
                    "WHERE originator_id = %(id)s ORDER BY originator_version DESC LIMIT %(keep)s) AS newest)"
                ).format(t=table),
                {"id": originator_id, "keep": self.KEEP},
            )


class Factory(PostgresFactory):
    """The library's factory with ``LedgerRecorder`` and per-connection timeouts."""

    application_recorder_class = LedgerRecorder

    def aggregate_recorder(self, purpose: str = "events") -> Any:
        if purpose != "snapshots":
            return super().aggregate_recorder(purpose)
        recorder = SnapshotRecorder(self.datastore, events_table_name=f"{self.env.name.lower() or 'stored'}_{purpose}")
        if self.env_create_table():
            recorder.create_table()
        return recorder

    def __init__(self, env: EnvType | Any) -> None:
        super().__init__(env)
        statement_timeout = float(self.env.get(STATEMENT_TIMEOUT) or "30")
        lock_timeout = float(self.datastore.lock_timeout or 10)
        # The pool opens lazily: every connection it makes gets these settings.
        cast(dict[str, Any], self.datastore.pool.kwargs)["options"] = connection_options(
            statement_timeout, lock_timeout, self.env.get(DATABASE_ROLE) or None
        )
