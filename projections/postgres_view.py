"""The ``memories`` view on PostgreSQL: one row per fact or preference, with its pgvector.

An eventsourcing tracking recorder: the rows a batch of events changes and
the position it reaches commit in one transaction (exactly once). An advisory
lock serialises writers (the inline catch-up after an ingest and a
``projection follow`` process). An event that cannot be stored is
quarantined in a savepoint, so it stops no one. A rebuild fills the same
tables in a schema of its own and moves them in with ``ALTER TABLE … SET
SCHEMA`` in one transaction.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, cast
from uuid import UUID

import psycopg
from eventsourcing.persistence import IntegrityError, Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from psycopg import Cursor
from psycopg.sql import SQL, Composed, Identifier

from factledger.application.errors import EmbedderMismatch, RebuildRunning
from factledger.application.lexical import K1, B
from factledger.application.ports import LexicalHit, MemoryRecord, RecallHit, RecallQuery, Vector
from factledger.domain.values import storable_text
from factledger.projections.rows import EMBEDDED_TYPES, ItemAdded, ItemChanged, RowChange, UserNamed
from factledger.projections.tsvector import (
    lexemes_of,
    tsquery_any,
    tsvector_binary,
    tsvector_from_binary,
    tsvector_literal,
)
from factledger.projections.vector_codec import BinaryVector, bind_binary_vectors, vector_binary
from factledger.projections.view import Entry, SaveProjection

logger = logging.getLogger(__name__)

TRACKING_TABLE = "memories_tracking"
# Every table of the view: a rebuild builds them elsewhere and moves them in.
TABLES = ("memories", "memories_meta", "memories_users", TRACKING_TABLE, "memories_quarantine")
COLUMNS = "id, user_id, type, content, category, metadata, importance, is_active, session_id, created_at, updated_at"
# New rows go in with COPY … (FORMAT BINARY): these columns, sent as these types. The uuid, the
# jsonb and the vector go as their binary forms already made (``bytea`` here: COPY sends the bytes
# as they are, and the server reads them with the column's own uuid_recv, jsonb_recv, vector_recv).
COPY_COLUMNS = COLUMNS + ", embedding, lexemes, terms_count"
COPY_TYPES = ("bytea", "text", "text", "text", "text", "bytea", "float8", "bool", "text", "timestamptz", "timestamptz",
              "bytea", "bytea", "int4")  # fmt: skip
ROW_TYPES = "type IN ('fact', 'preference', 'message')"
JSONB_VERSION = b"\x01"
# The same row as an INSERT's parameters (a save's own rows, in a pipeline where COPY cannot go).
# (Every value cast: in ``INSERT … SELECT … FROM (VALUES …)`` nothing gives an untyped one its column's type.)
_INSERT_ROW = SQL(
    "(%s::uuid, %s::text, %s::text, %s::text, %s::text, %s::jsonb, %s::float8, %s::bool, %s::text, "
    "%s::timestamptz, %s::timestamptz, %s::vector, %s::tsvector, %s::int4)"
)
# The gate of a save's own rows (``save_projection``): its CTE ``p_go``.
_GO = SQL("(SELECT go FROM p_go)")
_CANONICAL_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# json.dumps(…, ensure_ascii=False), without making an encoder a call
_JSON = json.JSONEncoder(ensure_ascii=False)
USER_TYPE_INDEX = "memories_user_type_active"
# BM25 over exactly one user's rows (``{0}``: the memories table). ``searched``: how many rows are
# searched and their mean length in terms; ``matched``: each (row, query term) it holds, with the
# term's frequency there; ``df``: how many rows hold each term (all of them are matched).
_MINE = "user_id = %(user)s AND type = ANY(%(types)s::text[]) AND is_active"
_WORDS_CTES = (
    "searched AS (SELECT count(*)::float8 AS n, avg(terms_count)::float8 AS avgdl FROM {0} WHERE " + _MINE + "), "
    "matched AS (SELECT m.id, m.terms_count AS dl, l.lexeme, cardinality(l.positions) AS tf "
    "FROM {0} AS m, unnest(m.lexemes) AS l WHERE m." + _MINE.replace(" AND ", " AND m.") + " "
    "AND m.lexemes @@ %(query)s::tsquery AND l.lexeme = ANY(%(terms)s::text[])), "
    "df AS (SELECT lexeme, count(*)::float8 AS df FROM matched GROUP BY lexeme)"
)
_BM25_TERM = (
    "ln(1 + (s.n - d.df + 0.5) / (d.df + 0.5)) * m.tf * (%(k1)s + 1) "
    "/ (m.tf + %(k1)s * (1 - %(b)s + %(b)s * m.dl / s.avgdl))"
)
OWNERS_KEPT = 100_000


def _insert_form(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A COPY row (``PostgresMemoryView._copy_row``) as INSERT parameters: the uuid, the jsonb and
    the vector from their binary forms to what the casts in ``_INSERT_ROW`` read."""
    (uuid, user_id, kind, content, category, metadata, importance, is_active, session_id, created, updated, vector,
     lexemes, terms_count) = row  # fmt: skip
    return (
        UUID(bytes=uuid), user_id, kind, content, category, metadata[len(JSONB_VERSION) :].decode(),
        importance, is_active, session_id, created, updated, None if vector is None else BinaryVector(vector),
        tsvector_literal(tsvector_from_binary(lexemes)), terms_count,
    )  # fmt: skip


def _fold(before: ItemChanged | None, after: ItemChanged) -> ItemChanged:
    """Two changes of one row as one: what applying ``before`` then ``after`` does."""
    if before is None:
        return after
    return ItemChanged(
        id=after.id,
        metadata={**before.metadata, **after.metadata},
        at=max(before.at, after.at),
        importance=after.importance if after.importance is not None else before.importance,
        is_active=after.is_active if after.is_active is not None else before.is_active,
    )


def _batch_changes(
    entries: Sequence[Entry],
) -> tuple[dict[UUID, str], list[ItemAdded], dict[str, ItemChanged]]:
    """A batch's owners named, rows added and changes (folded per row, in their order); the
    first entry that failed to decode raises its error."""
    changes: list[RowChange] = []
    for entry in entries:
        if isinstance(entry.changes, Exception):
            raise entry.changes
        changes.extend(entry.changes)
    named = {c.originator_id: c.user_id for c in changes if isinstance(c, UserNamed)}
    added = [c for c in changes if isinstance(c, ItemAdded)]
    folded: dict[str, ItemChanged] = {}
    for c in changes:
        if isinstance(c, ItemChanged):
            folded[c.id] = _fold(folded.get(c.id), c)
    return named, added, folded


def _owners_json(named: Mapping[UUID, str]) -> str:
    return _JSON.encode([{"o": str(o), "u": u} for o, u in named.items()])


def _changed_arrays(folded: Mapping[str, ItemChanged]) -> list[list[Any]]:
    """The changed rows as one array per column (``_update_statement`` unnests them)."""
    changes = list(folded.values())
    return [
        [c.id for c in changes],
        [_JSON.encode(c.metadata) for c in changes],
        [None if c.importance is None else float(c.importance) for c in changes],
        [c.is_active for c in changes],
        [c.at.isoformat() for c in changes],
    ]


_SAVEPOINT = SQL("SAVEPOINT inline_projection")
_BACK_TO_SAVEPOINT = SQL("ROLLBACK TO SAVEPOINT inline_projection")


def _infrastructure_failure(exc: BaseException) -> bool:
    """A lost connection or a timeout: the event is fine, the database is not; never quarantine."""
    return isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError))


class PostgresMemoryView(PostgresTrackingRecorder):
    """The ``memories`` tables in a ledger's schema."""

    def __init__(
        self,
        datastore: PostgresDatastore,
        *,
        embedder_id: str,
        dimension: int,
        application_name: str,
        channel: str | None = None,
        events_table: Identifier | None = None,
        bulk: bool = False,
    ) -> None:
        super().__init__(datastore, tracking_table_name=TRACKING_TABLE)
        # A copy being rebuilt (``rebuilding``), which no one else reads or writes: its secondary
        # index is built once at the end (``finish_bulk``) instead of row by row, and its batches
        # commit without waiting for the WAL flush (a crash loses the copy anyway; the swap's
        # own commit flushes everything before it).
        self.bulk = bulk
        # The application's event table: a batch is checked against it for events erased meanwhile.
        self.events_table = events_table
        # The NOTIFY channel of the application's event table, to wake a follower.
        self.channel = channel
        self.embedder_id = embedder_id
        self.dimension = dimension
        self.application_name = application_name
        self._lock_key = zlib.crc32(f"{datastore.schema}.memories".encode())
        # memory id → user id of memories projected by this process (see ``_remember_owners``)
        self._owners: dict[UUID, str] = {}
        self.memories = Identifier(datastore.schema, "memories")
        self.meta = Identifier(datastore.schema, "memories_meta")
        self.users = Identifier(datastore.schema, "memories_users")
        self.quarantine_table = Identifier(datastore.schema, "memories_quarantine")
        self.sql_create_statements.extend(
            [
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (id uuid PRIMARY KEY, user_id text NOT NULL, "
                    "type text NOT NULL CONSTRAINT memories_type_check CHECK (" + ROW_TYPES + "), "
                    "content text NOT NULL, category text NOT NULL, embedding vector({}), metadata jsonb NOT NULL, "
                    "importance double precision NOT NULL, is_active boolean NOT NULL, session_id text, "
                    "created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL, "
                    "lexemes tsvector NOT NULL DEFAULT '', terms_count integer NOT NULL DEFAULT 0)"
                ).format(self.memories, dimension),
                SQL("CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, value text NOT NULL)").format(self.meta),
                # Events carry the aggregate id; this maps it back to the user id.
                SQL("CREATE TABLE IF NOT EXISTS {} (originator_id uuid PRIMARY KEY, user_id text NOT NULL)").format(
                    self.users
                ),
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (notification_id bigint PRIMARY KEY, originator_id uuid, "
                    "topic text NOT NULL, error text NOT NULL, quarantined_at timestamptz NOT NULL DEFAULT now())"
                ).format(self.quarantine_table),
            ]
        )
        if not bulk:
            self.sql_create_statements.append(self._create_user_type_index())

    def _create_user_type_index(self) -> Composed:
        return SQL(
            "CREATE INDEX IF NOT EXISTS " + USER_TYPE_INDEX + " ON {} (user_id, type, is_active, importance DESC)"
        ).format(self.memories)

    def finish_bulk(self) -> None:
        """The index a bulk-loaded copy was built without (one sort instead of a b-tree insert a row)."""
        with self.datastore.transaction(commit=True) as curs:
            # One statement over the whole table: the per-statement timeout is for the small ones.
            curs.execute("SET LOCAL statement_timeout = 0")
            curs.execute(self._create_user_type_index())

    def create_table(self, check_embedder: bool = True) -> None:
        """Create the tables; unless told not to, refuse vectors of another embedder."""
        super().create_table()
        with self.datastore.transaction(commit=True) as curs:
            # A new table is claimed by the embedder whose dimension it was created with.
            curs.execute(
                SQL("INSERT INTO {} VALUES ('embedder_id', %s) ON CONFLICT DO NOTHING").format(self.meta),
                (self.embedder_id,),
            )
            curs.execute(SQL("SELECT value FROM {} WHERE key = 'embedder_id'").format(self.meta))
            row = curs.fetchone()
        self._add_lexical_columns()
        stored = row["value"] if row else self.embedder_id
        if check_embedder and stored != self.embedder_id:
            raise EmbedderMismatch(
                f"the read model holds vectors from embedder {stored!r} but the active embedder is "
                f"{self.embedder_id!r}; run `factledger projection rebuild` to re-embed it"
            )

    def _add_lexical_columns(self) -> None:
        """A read model made before ADR 0030 gets the lexical columns, message rows allowed and the
        terms of its memories (computed here, in batches); its messages come with a rebuild."""
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_schema = %s AND table_name = 'memories' "
                "AND column_name = 'lexemes'",
                (self.datastore.schema,),
            )
            if curs.fetchone() is not None:
                return
            curs.execute("SET LOCAL statement_timeout = 0")
            curs.execute(SQL("SELECT pg_advisory_xact_lock(%s)").format(), (self._lock_key,))
            curs.execute(
                SQL(
                    "ALTER TABLE {0} ADD COLUMN IF NOT EXISTS lexemes tsvector NOT NULL DEFAULT '', "
                    "ADD COLUMN IF NOT EXISTS terms_count integer NOT NULL DEFAULT 0, "
                    "ALTER COLUMN embedding DROP NOT NULL, DROP CONSTRAINT IF EXISTS memories_type_check, "
                    "ADD CONSTRAINT memories_type_check CHECK (" + ROW_TYPES + ")"
                ).format(self.memories)
            )
            curs.execute(SQL("SELECT id, content FROM {}").format(self.memories))
            rows = [(row["id"], *lexemes_of(row["content"])) for row in curs.fetchall()]
            for start in range(0, len(rows), 5000):
                batch = rows[start : start + 5000]
                curs.execute(
                    SQL(
                        "UPDATE {} AS m SET lexemes = v.l::tsvector, terms_count = v.n "
                        "FROM unnest(%s::uuid[], %s::text[], %s::int[]) AS v(id, l, n) WHERE m.id = v.id"
                    ).format(self.memories),
                    ([r[0] for r in batch], [tsvector_literal(r[1]) for r in batch], [r[2] for r in batch]),
                )
        logger.warning(
            "the read model of %s now searches words too; run `factledger projection rebuild` to add the "
            "messages said before",
            self.datastore.schema,
        )

    # ---- writes -----------------------------------------------------------------------

    def position(self) -> int:
        return self.max_tracking_id(self.application_name) or 0

    def apply_with_tracking(
        self,
        entries: Sequence[Entry],
        vectors: Mapping[str, Vector],
        expected: int,
        on_erased: Callable[[Sequence[Entry]], None] | None = None,
    ) -> bool:
        with self.datastore.transaction(commit=True) as curs:
            # Forgetting a user takes this lock too: a batch read before the
            # forget is checked after it, so no row of an erased event is written.
            if self.bulk:
                curs.execute(
                    "SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(%s)", (self._lock_key,)
                )
            else:
                curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
            if (self._max_tracking_id(self.application_name, curs) or 0) != expected:
                return False
            kept, erased = self._still_recorded(curs, entries)
            if kept:
                self._apply_entries(curs, kept, vectors)
            self._insert_tracking(curs, Tracking(self.application_name, entries[-1].position))
        if erased and on_erased is not None:
            on_erased(erased)
        return True

    def save_projection(
        self,
        conn: Any,
        entries: Sequence[Entry],
        vectors: Mapping[str, Vector],
        done: Callable[[bool, Sequence[int]], None],
    ) -> SaveProjection | None:
        """A save's own rows and the view's position as CTEs of the save's statement (ADR 0044),
        or None when they cannot be made here (the catch-up after the save does the work).

        They write only when the view's lock is free (tried, never waited for), nothing older
        waits (the newest event before the save, in the statement's snapshot, is at the view's
        position or before it) and the position is before the save's events; the position
        then moves to the save's last event. One statement sees one snapshot: a row added in
        the save goes in with its changes folded in (``_apply_batch`` does the same).
        """
        if self.events_table is None:
            return None
        try:
            with conn.cursor() as curs:  # an owners' lookup, when this process does not know them
                ctes, parameters = self._row_ctes(curs, entries, vectors, _GO)
        except Exception as exc:
            if _infrastructure_failure(exc):
                raise
            logger.info("a save's own rows could not be made (%s); the catch-up will do it", exc)
            return None
        tracking = Identifier(self.datastore.schema, TRACKING_TABLE)
        gate = SQL(
            "p_at AS (SELECT pg_try_advisory_xact_lock(%s) AS locked, "
            "coalesce((SELECT max(notification_id) FROM {t} WHERE application_name = %s), 0) AS position, "
            "coalesce((SELECT max(notification_id) FROM {e}), 0) AS before), "
            "p_go AS (SELECT locked AND before <= position "
            "AND position < (SELECT min(notification_id) FROM inserted) AS go FROM p_at)"
        ).format(t=tracking, e=self.events_table)
        return SaveProjection(
            ctes=[gate, *ctes, self._tracking_cte(SQL("(SELECT max(notification_id) FROM inserted)"), _GO)],
            parameters=[self._lock_key, self.application_name, *parameters, self.application_name],
            projected=SQL("(SELECT count(*) FROM p_tracked) > 0"),
            done=done,
        )

    def apply_within_save(
        self,
        curs: Cursor[Any],
        entries: Sequence[Entry],
        vectors: Mapping[str, Vector],
        first: int,
    ) -> bool:
        """Project the events of a save too large for one statement in its transaction
        (``curs``, holding the events table lock); False, with nothing written, when it
        should be left to a catch-up.

        Only when nothing older is waiting (no event between the view's position and
        ``first``) and no other projector holds the lock (not waited for: a forget or a
        follower holds it, the catch-up after the save does the work). The events were
        inserted in this transaction, so none can be erased meanwhile. Anything that fails
        is taken back to a savepoint and left to the catch-up, which quarantines what it
        must: the save never fails for its projection.
        """
        conn = curs.connection
        savepoint = False
        try:
            with conn.pipeline():
                curs.execute(_SAVEPOINT)
                savepoint = True
                check = conn.cursor()
                check.execute(self._within_save_check, (self._lock_key, self.application_name, first))
            checked = check.fetchone()
            if checked is None or not checked["locked"] or (checked["before"] or 0) > (checked["position"] or 0):
                return False
            bind_binary_vectors(curs)
            ctes, parameters = self._row_ctes(curs, entries, vectors, SQL("true"))
            ctes.append(self._tracking_cte(SQL("%s"), SQL("true")))
            parameters.extend([self.application_name, entries[-1].position])
            # One statement writing the rows and the position (the savepoint is never released:
            # the save's commit ends it, only a failure goes back to it).
            curs.execute(
                SQL("WITH {} SELECT count(*) AS tracked FROM p_tracked").format(SQL(", ").join(ctes)), parameters
            )
            tracked = curs.fetchone()
            if tracked is None or not tracked["tracked"]:
                raise IntegrityError(f"the view's position did not move to {entries[-1].position}")
        except Exception as exc:
            if _infrastructure_failure(exc):
                raise
            if savepoint:
                curs.execute(_BACK_TO_SAVEPOINT)
            logger.info("projecting a save in its transaction failed (%s); the catch-up will do it", exc)
            return False
        return True

    @property
    def _within_save_check(self) -> Composed:
        """Sent after the save's events: the lock is tried, never waited for; the view's
        position; the newest event older than the save's first."""
        if self.events_table is None:
            raise RuntimeError("a view projects within saves only when it knows the events table")
        return SQL(
            "SELECT pg_try_advisory_xact_lock(%s) AS locked, "
            "(SELECT max(notification_id) FROM {} WHERE application_name = %s) AS position, "
            "(SELECT max(notification_id) FROM {} WHERE notification_id < %s) AS before"
        ).format(Identifier(self.datastore.schema, TRACKING_TABLE), self.events_table)

    def _still_recorded(self, curs: Cursor[Any], entries: Sequence[Entry]) -> tuple[list[Entry], list[Entry]]:
        if self.events_table is None:
            return list(entries), []
        # Only the missing ones come back (usually none); the positions go as one array literal.
        # One range scan of the batch's positions, not a probe of the index per event.
        positions = [int(e.position) for e in entries]
        curs.execute(
            SQL(
                "SELECT p AS notification_id FROM unnest(%s::bigint[]) AS p EXCEPT "
                "SELECT notification_id FROM {} WHERE notification_id BETWEEN %s AND %s"
            ).format(self.events_table),
            ("{" + ",".join(map(str, positions)) + "}", min(positions), max(positions)),
        )
        missing = {row["notification_id"] for row in curs.fetchall()}
        if not missing:
            return list(entries), []
        return [e for e in entries if e.position not in missing], [e for e in entries if e.position in missing]

    def forget(self, originator_id: UUID, user_id: str) -> int:
        with self.datastore.transaction(commit=True) as curs:
            return self.forget_in(curs, originator_id, user_id)

    def forget_in(self, curs: Cursor[Any], originator_id: UUID, user_id: str) -> int:
        """``forget`` inside the caller's transaction (the eraser's, across ledgers)."""
        curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
        self._owners.pop(originator_id, None)
        curs.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(self.memories), (user_id,))
        rows = curs.rowcount
        curs.execute(SQL("DELETE FROM {} WHERE originator_id = %s").format(self.users), (originator_id,))
        curs.execute(SQL("DELETE FROM {} WHERE originator_id = %s").format(self.quarantine_table), (originator_id,))
        return rows

    def _apply_entries(self, curs: Cursor[Any], entries: Sequence[Entry], vectors: Mapping[str, Vector]) -> None:
        """All at once in a savepoint (a few statements, new rows in one COPY); if anything fails,
        entry by entry, each failure quarantined."""
        conn = curs.connection
        bind_binary_vectors(curs)
        try:
            with conn.transaction():
                self._apply_batch(curs, entries, vectors)
            return
        except Exception as exc:
            if _infrastructure_failure(exc):
                raise
        for entry in entries:
            try:
                with conn.transaction():
                    self._apply_entry(curs, entry, vectors)
            except Exception as exc:
                if _infrastructure_failure(exc):
                    raise
                self._quarantine(curs, entry, f"{type(exc).__name__}: {exc}")

    def _apply_batch(self, curs: Cursor[Any], entries: Sequence[Entry], vectors: Mapping[str, Vector]) -> None:
        """The batch's changes in a few statements: owners, then new rows (one COPY), then changed
        rows (a save's own few go in one statement instead: ``_inline_writes``).

        The order is safe to change that far: a change only touches a row added before it
        (earlier in the batch or before it), and several changes of one row are folded in
        their order (metadata merged, the last importance and activity given, the latest time),
        which is what applying them one after another does. A row added in this batch goes in
        with its changes already folded in (what the UPDATE would make of it); only rows of
        earlier batches are updated. No pipeline (large pipelined batches have hung the server
        connection before; ADR 0011).
        """
        named, added, folded = _batch_changes(entries)
        if named:
            self._insert_owners(curs, named)
        if added:
            self._copy_rows(curs, self._new_rows(curs, added, named, folded, vectors))
        if folded:
            self._update_rows(curs, folded)

    def _row_ctes(
        self, curs: Cursor[Any], entries: Sequence[Entry], vectors: Mapping[str, Vector], gate: SQL
    ) -> tuple[list[Composed], list[Any]]:
        """A save's own changes as data-modifying CTEs (owners, new rows, changed rows), each
        writing only where ``gate`` holds, and their parameters in order.

        One statement sees one snapshot: the UPDATE cannot see the rows inserted beside it,
        which is why a row added in the batch goes in with its changes folded in, as
        ``_apply_batch`` does.
        """
        named, added, folded = _batch_changes(entries)
        ctes: list[Composed] = []
        parameters: list[Any] = []
        if named:
            ctes.append(SQL("p_owners AS ({})").format(self._owners_insert(gate)))
            parameters.append(_owners_json(named))
        if added:
            rows = self._new_rows(curs, added, named, folded, vectors)
            ctes.append(
                SQL("p_rows AS (INSERT INTO {} (" + COPY_COLUMNS + ") SELECT * FROM (VALUES {}) AS v WHERE {})").format(
                    self.memories, SQL(", ").join([_INSERT_ROW] * len(rows)), gate
                )
            )
            parameters.extend(value for row in rows for value in _insert_form(row))
        if folded:
            ctes.append(SQL("p_changed AS ({})").format(self._update_statement(gate)))
            parameters.extend(_changed_arrays(folded))
        return ctes, parameters

    def _tracking_cte(self, position: SQL | Composed, gate: SQL) -> Composed:
        """The view's position moved to ``position`` where ``gate`` holds, only ever forward (the
        library's single-row upsert); ``p_tracked`` holds a row when it moved."""
        return SQL(
            "p_tracked AS (INSERT INTO {t} SELECT %s, {position} WHERE {gate} ON CONFLICT (application_name) "
            "DO UPDATE SET notification_id = EXCLUDED.notification_id "
            "WHERE {t}.notification_id < EXCLUDED.notification_id RETURNING 1)"
        ).format(t=Identifier(self.datastore.schema, TRACKING_TABLE), position=position, gate=gate)

    def _owners_insert(self, gate: SQL) -> Composed:
        # Fixed statements with the rows as one JSON parameter: prepared once, nothing to
        # build or parse per batch; jsonb_to_recordset reads each value with its column's type.
        return SQL(
            "INSERT INTO {} (originator_id, user_id) SELECT o, u FROM jsonb_to_recordset(%s::jsonb) "
            "AS v(o uuid, u text) WHERE {} ON CONFLICT DO NOTHING"
        ).format(self.users, gate)

    def _insert_owners(self, curs: Cursor[Any], named: Mapping[UUID, str]) -> None:
        curs.execute(self._owners_insert(SQL("true")), (_owners_json(named),))

    def _copy_rows(self, curs: Cursor[Any], rows: Sequence[tuple[Any, ...]]) -> None:
        """New rows (``_new_rows``) in one COPY."""
        # What can fail in the block (the server refusing a value, psycopg unable to encode
        # a text or a naive time) aborts the COPY with that error; the savepoint takes it back.
        with curs.copy(SQL("COPY {} (" + COPY_COLUMNS + ") FROM STDIN (FORMAT BINARY)").format(self.memories)) as copy:
            copy.set_types(COPY_TYPES)
            for row in rows:
                copy.write_row(row)

    def _new_rows(
        self,
        curs: Cursor[Any],
        added: Sequence[ItemAdded],
        named: Mapping[UUID, str],
        folded: dict[str, ItemChanged],
        vectors: Mapping[str, Vector],
    ) -> list[tuple[Any, ...]]:
        """The COPY rows of ``added`` (their owners looked up when this process does not know
        them), each with its changes of the batch folded in (taken out of ``folded``)."""
        wanted = {c.originator_id for c in added}
        owners = {o: self._owners[o] for o in wanted if o in self._owners}
        owners.update(named)
        unknown = list(wanted - owners.keys())
        if unknown:
            curs.execute(
                SQL("SELECT originator_id, user_id FROM {} WHERE originator_id = ANY(%s)").format(self.users),
                (unknown,),
            )
            owners.update({row["originator_id"]: row["user_id"] for row in curs.fetchall()})
        self._remember_owners(owners)
        return [self._copy_row(c, owners, folded.pop(c.id, None), vectors) for c in added]

    def _update_statement(self, gate: SQL) -> Composed:
        # Arrays, not one JSON document: the planner reads unnest's row count (an estimate of
        # 10 in a generic plan) where it took jsonb_to_recordset for 100 rows, and then chose a
        # scan of the whole table over the primary key for a save's one or two rows.
        return SQL(
            "UPDATE {} AS m SET metadata = m.metadata || v.metadata::jsonb, "
            "importance = COALESCE(v.importance, m.importance), "
            "is_active = COALESCE(v.is_active, m.is_active), "
            "updated_at = GREATEST(m.updated_at, v.at::timestamptz) "
            "FROM unnest(%s::text[], %s::text[], %s::float8[], %s::bool[], %s::text[]) "
            "AS v(id, metadata, importance, is_active, at) "
            "WHERE m.id = v.id::uuid AND {}"
        ).format(self.memories, gate)

    def _update_rows(self, curs: Cursor[Any], folded: Mapping[str, ItemChanged]) -> None:
        curs.execute(self._update_statement(SQL("true")), _changed_arrays(folded))

    def _remember_owners(self, owners: Mapping[UUID, str]) -> None:
        # A memory's id is made from its user's id, so the pair never changes: no lookup for a
        # user this process has projected before (bounded; the oldest go first).
        self._owners.update(owners)
        while len(self._owners) > OWNERS_KEPT:
            del self._owners[next(iter(self._owners))]

    @staticmethod
    def _copy_row(
        c: ItemAdded, owners: Mapping[UUID, str], change: ItemChanged | None, vectors: Mapping[str, Vector]
    ) -> tuple[Any, ...]:
        """The COPY row of a new row, with the changes of the same batch applied as the UPDATE
        applies them (``metadata || changed``, COALESCE, GREATEST)."""
        if c.originator_id not in owners:
            raise LookupError(f"no Started event projected for memory {c.originator_id}")
        if not _CANONICAL_UUID.fullmatch(c.id):
            # uuid_recv takes the 16 bytes; only this form is sure to read the same here as in
            # PostgreSQL's uuid input: anything else goes in as text, entry by entry.
            raise ValueError(f"not a uuid in its canonical form: {c.id!r}")
        metadata, importance, is_active, updated_at = c.metadata, c.importance, True, c.at
        if change is not None:
            metadata = {**metadata, **change.metadata}
            if change.importance is not None:
                importance = change.importance
            if change.is_active is not None:
                is_active = change.is_active
            updated_at = max(updated_at, change.at)
        positions, length = lexemes_of(c.indexed_text)
        return (
            bytes.fromhex(c.id.replace("-", "")), owners[c.originator_id], c.type, c.content, c.category,
            JSONB_VERSION + _JSON.encode(metadata).encode(), importance, is_active, c.session_id, c.at, updated_at,
            vector_binary(vectors[c.content]) if c.type in EMBEDDED_TYPES else None,
            tsvector_binary(positions), length,
        )  # fmt: skip

    def _apply_entry(self, curs: Cursor[Any], entry: Entry, vectors: Mapping[str, Vector]) -> None:
        if isinstance(entry.changes, Exception):
            raise entry.changes
        for change in entry.changes:
            self._apply_change(curs, change, vectors)

    def _apply_change(self, curs: Cursor[Any], change: RowChange, vectors: Mapping[str, Vector]) -> None:
        if isinstance(change, UserNamed):
            curs.execute(
                SQL("INSERT INTO {} (originator_id, user_id) VALUES (%s, %s) ON CONFLICT DO NOTHING").format(
                    self.users
                ),
                (change.originator_id, change.user_id),
            )
        elif isinstance(change, ItemAdded):
            curs.execute(
                SQL("SELECT user_id FROM {} WHERE originator_id = %s").format(self.users), (change.originator_id,)
            )
            row = curs.fetchone()
            if row is None:
                raise LookupError(f"no Started event projected for memory {change.originator_id}")
            positions, length = lexemes_of(change.indexed_text)
            curs.execute(
                SQL(
                    "INSERT INTO {} (id, user_id, type, content, category, metadata, importance, is_active, "
                    "session_id, created_at, updated_at, embedding, lexemes, terms_count) "
                    "VALUES (%s, %s, %s, %s, %s, %s::jsonb, %s, true, %s, %s, %s, %s::vector, %s::tsvector, %s)"
                ).format(self.memories),
                (
                    change.id,
                    row["user_id"],
                    change.type,
                    change.content,
                    change.category,
                    json.dumps(change.metadata, ensure_ascii=False),
                    change.importance,
                    change.session_id,
                    change.at,
                    change.at,
                    BinaryVector.of(vectors[change.content]) if change.type in EMBEDDED_TYPES else None,
                    tsvector_literal(positions),
                    length,
                ),
            )
        elif isinstance(change, ItemChanged):
            curs.execute(
                SQL(
                    "UPDATE {} SET metadata = metadata || %s::jsonb, importance = COALESCE(%s, importance), "
                    "is_active = COALESCE(%s, is_active), updated_at = GREATEST(updated_at, %s) WHERE id = %s"
                ).format(self.memories),
                (
                    json.dumps(change.metadata, ensure_ascii=False),
                    change.importance,
                    change.is_active,
                    change.at,
                    change.id,
                ),
            )

    def _quarantine(self, curs: Cursor[Any], entry: Entry, error: str) -> None:
        logger.error("quarantined event %d (%s) of %s: %s", entry.position, entry.topic, entry.originator_id, error)
        curs.execute(
            SQL(
                "INSERT INTO {} (notification_id, originator_id, topic, error) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (notification_id) DO UPDATE SET error = EXCLUDED.error, quarantined_at = now()"
            ).format(self.quarantine_table),
            (entry.position, entry.originator_id, entry.topic, storable_text(error)[:2000]),
        )

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL("SELECT * FROM {} ORDER BY notification_id LIMIT %s").format(self.quarantine_table), (limit,)
            )
            return [dict(row) for row in curs.fetchall()]

    def quarantine_count(self) -> int:
        with self.datastore.cursor() as curs:
            curs.execute(SQL("SELECT count(*) AS n FROM {}").format(self.quarantine_table))
            row = curs.fetchone()
        return int(row["n"]) if row else 0

    # ---- rebuilding and following ---------------------------------------------------------

    @contextmanager
    def rebuilding(self) -> Iterator[PostgresMemoryView]:
        shadow_schema = f"rebuild_{zlib.crc32(self.datastore.schema.encode()):08x}"
        with self._rebuild_lock(), self._fresh_schema(shadow_schema):
            store = datastore_for_schema(self.datastore, shadow_schema)
            try:
                shadow = PostgresMemoryView(
                    store,
                    embedder_id=self.embedder_id,
                    dimension=self.dimension,
                    application_name=self.application_name,
                    events_table=self.events_table,
                    bulk=True,
                )
                shadow.create_table(check_embedder=False)
                yield shadow
                shadow.finish_bulk()
            finally:
                store.close()
            with self.datastore.transaction(commit=True) as curs:
                curs.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                for table in TABLES:
                    curs.execute(SQL("DROP TABLE IF EXISTS {}").format(Identifier(self.datastore.schema, table)))
                    curs.execute(
                        SQL("ALTER TABLE {} SET SCHEMA {}").format(
                            Identifier(shadow_schema, table), Identifier(self.datastore.schema)
                        )
                    )

    @contextmanager
    def _rebuild_lock(self) -> Iterator[None]:
        """One rebuild at a time per read model, across processes."""
        with self.datastore.get_connection() as conn:
            row = conn.execute("SELECT pg_try_advisory_lock(%s) AS ok", (self._lock_key + 1,)).fetchone()
            if not row or not row["ok"]:
                raise RebuildRunning("another process is rebuilding this read model; wait for it to finish")
            try:
                yield
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (self._lock_key + 1,))

    @contextmanager
    def _fresh_schema(self, name: str) -> Iterator[None]:
        """An empty schema for the block (the left-overs of a killed rebuild removed first)."""
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))
            curs.execute(SQL("CREATE SCHEMA {}").format(Identifier(name)))
        try:
            yield
        finally:
            with self.datastore.transaction(commit=True) as curs:
                curs.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))

    @contextmanager
    def listening(self) -> Iterator[Callable[[float], None]]:
        with self.datastore.get_connection() as conn:
            if self.channel:
                conn.execute(SQL("LISTEN {}").format(Identifier(self.channel)))

            def wait(timeout: float) -> None:
                for _ in conn.notifies(timeout=timeout, stop_after=1):
                    pass

            yield wait

    # ---- reads --------------------------------------------------------------------------

    def _record(self, row: dict[str, Any]) -> MemoryRecord:
        return MemoryRecord(
            id=str(row["id"]),
            user_id=row["user_id"],
            type=row["type"],
            content=row["content"],
            category=row["category"],
            metadata=row["metadata"],
            importance=row["importance"],
            is_active=row["is_active"],
            session_id=row["session_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )

    def page(self, user_id: str, type: str, limit: int, offset: int = 0) -> tuple[list[MemoryRecord], int]:
        # One statement, so the count and the page see the same rows; with an offset past
        # the end the page is empty and the one row left carries the count alone.
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "WITH chosen AS (SELECT " + COLUMNS + " FROM {} WHERE user_id = %s AND type = %s AND is_active), "
                    "shown AS (SELECT * FROM chosen ORDER BY importance DESC, created_at, id LIMIT %s OFFSET %s) "
                    "SELECT (SELECT count(*) FROM chosen) AS total, shown.* FROM (SELECT 1) AS one "
                    "LEFT JOIN shown ON true ORDER BY shown.importance DESC, shown.created_at, shown.id"
                ).format(self.memories),
                (user_id, type, limit, offset),
            )
            rows = curs.fetchall()
        total = int(rows[0]["total"]) if rows else 0
        return [self._record(row) for row in rows if row["id"] is not None], total

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]:
        where = SQL("WHERE type <> 'message' AND user_id = %s" if user_id is not None else "WHERE type <> 'message'")
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL("SELECT " + COLUMNS + " FROM {} {} ORDER BY user_id, id").format(self.memories, where),
                (user_id,) if user_id is not None else (),
            )
            return [self._record(row) for row in curs.fetchall()]

    def search(
        self, user_id: str, vector: Vector, types: Sequence[str], top_k: int, min_similarity: float
    ) -> list[RecallHit]:
        # Exact distance over one user's rows (btree on user_id): exact and fast
        # for the hundreds of rows a user has; no ANN index to miss filtered rows.
        literal = BinaryVector.of(vector)
        with self.datastore.cursor() as curs:
            bind_binary_vectors(curs)
            curs.execute(
                SQL(
                    "SELECT " + COLUMNS + ", 1 - (embedding <=> %s::vector) AS similarity FROM {} "
                    "WHERE user_id = %s AND type = ANY(%s) AND is_active AND embedding IS NOT NULL "
                    "ORDER BY embedding <=> %s::vector, id LIMIT %s"
                ).format(self.memories),
                (literal, user_id, list(types), literal, top_k),
            )
            scored = [(self._record(row), round(float(row["similarity"]), 6)) for row in curs.fetchall()]
        return [RecallHit(record, similarity) for record, similarity in scored if similarity >= min_similarity]

    def search_words(
        self, user_id: str, terms: Sequence[str], types: Sequence[str], top_k: int, vector: Vector | None = None
    ) -> list[LexicalHit]:
        # BM25 over exactly the user's rows (btree on user_id, as ``search``): the document
        # frequencies come from the rows that match, which are all the rows holding a term.
        if not terms:
            return []
        with self.datastore.cursor() as curs:
            bind_binary_vectors(curs)
            curs.execute(
                self._words_sql,
                {
                    "user": user_id, "types": list(types), "terms": list(terms), "query": tsquery_any(terms),
                    "k": top_k, "vector": None if vector is None else BinaryVector.of(vector), "k1": K1, "b": B,
                },
            )  # fmt: skip
            return [
                LexicalHit(
                    self._record(row),
                    float(row["score"]),
                    None if row["similarity"] is None else round(float(row["similarity"]), 6),
                )
                for row in curs.fetchall()
            ]

    def recall(self, query: RecallQuery) -> list[RecallHit]:
        # One statement: both rankings, their fusion and the rows of the best (fused_recall's
        # result, without a round trip or a record built for each candidate).
        statement, params = self.recall_statement(query)
        with self.datastore.cursor() as curs:
            bind_binary_vectors(curs)
            curs.execute(statement, params)
            return [
                RecallHit(
                    self._record(row),
                    None if row["similarity"] is None else round(float(row["similarity"]), 6),
                    round(float(row["score"]), 6),
                )
                for row in curs.fetchall()
            ]

    def recall_statement(self, query: RecallQuery) -> tuple[Composed, dict[str, Any]]:
        """The statement ``recall`` runs and its parameters (the vector as a ``BinaryVector``:
        a cursor needs ``bind_binary_vectors``); ``benchmarks/recall.py`` times it bare."""
        q = query
        params = {
            "user": q.user_id, "types": list(q.types),
            "embedded": list(q.embedded_types) if q.vector is not None else [],
            "terms": list(q.terms), "query": tsquery_any(q.terms) if q.terms else "", "depth": q.depth,
            "vector": None if q.vector is None else BinaryVector.of(q.vector), "k1": K1, "b": B,
            "threshold": q.threshold, "wm": q.meaning_weight, "ww": q.words_weight,
            "c": q.rank_constant, "top_k": q.top_k,
        }  # fmt: skip
        return self._recall_sql(q.strict), params

    def _recall_sql(self, strict: bool) -> Composed:
        # Only a strict recall needs each worded row's similarity (its vector read for every match).
        if strict:
            words = (
                "words AS (SELECT m.id, sum(" + _BM25_TERM + ") AS score, "
                "1 - (min(r.embedding <=> %(vector)s::vector)) AS sim FROM matched AS m JOIN df AS d USING (lexeme) "
                "CROSS JOIN searched AS s JOIN {0} AS r ON r.id = m.id "
                "GROUP BY m.id ORDER BY score DESC, m.id LIMIT %(depth)s), "
                "worded AS (SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM words "
                "WHERE round(sim::numeric, 6) >= %(threshold)s), "
            )
        else:
            words = (
                "words AS (SELECT m.id, sum(" + _BM25_TERM + ") AS score FROM matched AS m JOIN df AS d "
                "USING (lexeme) CROSS JOIN searched AS s GROUP BY m.id ORDER BY score DESC, m.id LIMIT %(depth)s), "
                "worded AS (SELECT id, row_number() OVER (ORDER BY score DESC, id) AS rank FROM words), "
            )
        return SQL(
            "WITH "
            + _WORDS_CTES
            + ", "
            + words
            + "nearest AS (SELECT id, embedding <=> %(vector)s::vector AS distance FROM {0} WHERE user_id = %(user)s "
            "AND type = ANY(%(embedded)s::text[]) AND is_active AND embedding IS NOT NULL "
            "ORDER BY embedding <=> %(vector)s::vector, id LIMIT %(depth)s), "
            "near AS (SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM nearest "
            "WHERE round((1 - distance)::numeric, 6) >= %(threshold)s), "
            "fused AS (SELECT id, sum(w) AS score FROM (SELECT id, %(wm)s / (%(c)s + rank) AS w FROM near "
            "UNION ALL SELECT id, %(ww)s / (%(c)s + rank) FROM worded) AS x "
            "GROUP BY id ORDER BY score DESC, id LIMIT %(top_k)s) "
            "SELECT " + ", ".join("r." + c for c in COLUMNS.split(", ")) + ", fused.score, "
            "1 - (r.embedding <=> %(vector)s::vector) AS similarity "
            "FROM fused JOIN {0} AS r USING (id) ORDER BY fused.score DESC, r.id"
        ).format(self.memories)

    @property
    def _words_sql(self) -> Composed:
        return SQL(
            "WITH " + _WORDS_CTES + ", "
            "scored AS (SELECT m.id, sum(" + _BM25_TERM + ") AS score "
            "FROM matched AS m JOIN df AS d USING (lexeme) CROSS JOIN searched AS s GROUP BY m.id "
            "ORDER BY score DESC, m.id LIMIT %(k)s) "
            "SELECT " + ", ".join("r." + c for c in COLUMNS.split(", ")) + ", scored.score, "
            "1 - (r.embedding <=> %(vector)s::vector) AS similarity "
            "FROM scored JOIN {0} AS r USING (id) ORDER BY scored.score DESC, r.id"
        ).format(self.memories)

    def all_rows(self) -> list[dict[str, Any]]:
        with self.datastore.cursor() as curs:
            curs.execute(SQL("SELECT *, embedding::text AS embedding FROM {} ORDER BY id").format(self.memories))
            return [dict(row) for row in curs.fetchall()]


def datastore_for_schema(datastore: PostgresDatastore, schema: str) -> PostgresDatastore:
    """A small datastore on the same server and settings as ``datastore``, for another schema."""
    params = cast(dict[str, Any], datastore.pool.kwargs)
    sibling = PostgresDatastore(
        params["dbname"],
        params["host"],
        params["port"],
        params["user"],
        params["password"],
        schema=schema,
        pool_size=1,
        max_overflow=1,
        lock_timeout=datastore.lock_timeout,
        idle_in_transaction_session_timeout=datastore.idle_in_transaction_session_timeout,
    )
    cast(dict[str, Any], sibling.pool.kwargs)["options"] = params.get("options", "")
    return sibling
