"""The ``memories`` read model: one row per fact or preference, with its vector.

``MemoryView`` is an eventsourcing tracking recorder: every write to the rows
commits in the same transaction as the tracking position, so each event is
applied exactly once. Rows are derived from events alone (times included), so
a rebuild reproduces them exactly.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from eventsourcing.dispatch import singledispatchmethod
from eventsourcing.persistence import Tracking
from eventsourcing.postgres import PostgresDatastore, PostgresTrackingRecorder
from eventsourcing.projection import Projection
from psycopg import Cursor
from psycopg.sql import SQL, Identifier

from factledger.application.errors import EmbedderMismatch
from factledger.application.ports import Embedder, MemoryRecord, RecallHit
from factledger.domain.memory import UserMemory
from factledger.domain.values import storable_text
from factledger.infrastructure.embedding_cache import vector_literal

TRACKING_TABLE = "memories_tracking"


def _iso(at: datetime) -> str:
    return at.isoformat()


class MemoryView(PostgresTrackingRecorder):
    """The ``memories`` table (and its tracking table) in the ledger's schema."""

    def __init__(self, datastore: PostgresDatastore, *, embedder_id: str, dimension: int) -> None:
        super().__init__(datastore, tracking_table_name=TRACKING_TABLE)
        self.embedder_id = embedder_id
        self.dimension = dimension
        self.memories = Identifier(datastore.schema, "memories")
        self.meta = Identifier(datastore.schema, "memories_meta")
        self.users = Identifier(datastore.schema, "memories_users")
        self.quarantine_table = Identifier(datastore.schema, "memories_quarantine")
        self.sql_create_statements.extend(
            [
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "id uuid PRIMARY KEY, user_id text NOT NULL, "
                    "type text NOT NULL CHECK (type IN ('fact', 'preference')), "
                    "content text NOT NULL, category text NOT NULL, "
                    "embedding vector({}) NOT NULL, metadata jsonb NOT NULL, "
                    "importance double precision NOT NULL, is_active boolean NOT NULL, "
                    "session_id text, created_at timestamptz NOT NULL, "
                    "updated_at timestamptz NOT NULL)"
                ).format(self.memories, dimension),
                SQL(
                    "CREATE INDEX IF NOT EXISTS memories_user_type_active "
                    "ON {} (user_id, type, is_active, importance DESC)"
                ).format(self.memories),
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, value text NOT NULL)"
                ).format(self.meta),
                # Events carry the aggregate id; this maps it back to the user id.
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (originator_id uuid PRIMARY KEY, user_id text NOT NULL)"
                ).format(self.users),
                # Events the read model could not store, kept aside so they stop no one.
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (notification_id bigint PRIMARY KEY, originator_id uuid, "
                    "topic text NOT NULL, error text NOT NULL, quarantined_at timestamptz NOT NULL DEFAULT now())"
                ).format(self.quarantine_table),
            ]
        )

    # Every table of the read model: a rebuild builds them elsewhere and moves them in.
    TABLES = ("memories", "memories_meta", "memories_users", TRACKING_TABLE, "memories_quarantine")

    def create_table(self, check_embedder: bool = True) -> None:
        """Create the tables; unless told not to, refuse vectors of another embedder."""
        super().create_table()
        with self.datastore.transaction(commit=True) as curs:
            # Always claim a new table for the embedder whose dimension it was created with.
            curs.execute(
                SQL("INSERT INTO {} VALUES ('embedder_id', %s) ON CONFLICT DO NOTHING").format(self.meta),
                (self.embedder_id,),
            )
            curs.execute(SQL("SELECT value FROM {} WHERE key = 'embedder_id'").format(self.meta))
            row = curs.fetchone()
        stored = row["value"] if row else self.embedder_id
        if check_embedder and stored != self.embedder_id:
            raise EmbedderMismatch(
                f"the read model holds vectors from embedder {stored!r} but the active embedder is "
                f"{self.embedder_id!r}; run `factledger projection rebuild` to re-embed it"
            )

    # ---- writes (inside the caller's transaction) -------------------------------

    def position(self, curs: Cursor[Any], application_name: str) -> int:
        """The last notification id applied, read inside the caller's transaction."""
        return self._max_tracking_id(application_name, curs) or 0

    def record_position(self, curs: Cursor[Any], application_name: str, notification_id: int) -> None:
        """Move the position, in the transaction that wrote the rows it covers (exactly once)."""
        self._insert_tracking(curs, Tracking(application_name, notification_id))

    def quarantine(
        self, curs: Cursor[Any], notification_id: int, originator_id: Any, topic: str, error: str
    ) -> None:
        """Keep aside an event the read model could not store."""
        curs.execute(
            SQL(
                "INSERT INTO {} (notification_id, originator_id, topic, error) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (notification_id) DO UPDATE SET error = EXCLUDED.error, quarantined_at = now()"
            ).format(self.quarantine_table),
            (notification_id, originator_id, topic, storable_text(error)[:2000]),
        )

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        """The quarantined events, oldest first."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL("SELECT * FROM {} ORDER BY notification_id LIMIT %s").format(self.quarantine_table), (limit,)
            )
            return [dict(row) for row in curs.fetchall()]

    def quarantine_count(self) -> int:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(SQL("SELECT count(*) AS n FROM {}").format(self.quarantine_table))
            row = curs.fetchone()
        return int(row["n"]) if row else 0

    def insert(
        self,
        curs: Cursor[Any],
        *,
        item_id: str,
        user_id: str,
        type: str,
        content: str,
        category: str,
        vector: Sequence[float],
        metadata: dict[str, Any],
        importance: float,
        session_id: str | None,
        at: datetime,
    ) -> None:
        curs.execute(
            SQL(
                "INSERT INTO {} (id, user_id, type, content, category, embedding, metadata, "
                "importance, is_active, session_id, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s::vector, %s::jsonb, %s, true, %s, %s, %s)"
            ).format(self.memories),
            (
                item_id, user_id, type, content, category, vector_literal(vector),
                json.dumps(metadata, ensure_ascii=False), importance, session_id, at, at,
            ),
        )

    def update(
        self,
        curs: Cursor[Any],
        item_id: str,
        metadata: dict[str, Any],
        at: datetime,
        importance: float | None = None,
        is_active: bool | None = None,
    ) -> None:
        curs.execute(
            SQL(
                "UPDATE {} SET metadata = metadata || %s::jsonb, "
                "importance = COALESCE(%s, importance), is_active = COALESCE(%s, is_active), "
                "updated_at = GREATEST(updated_at, %s) WHERE id = %s"
            ).format(self.memories),
            (json.dumps(metadata, ensure_ascii=False), importance, is_active, at, item_id),
        )

    # ---- reads ----------------------------------------------------------------------

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

    _COLUMNS = (
        "id, user_id, type, content, category, metadata, importance, is_active, "
        "session_id, created_at, updated_at"
    )

    def items(self, user_id: str, type: str, limit: int) -> list[MemoryRecord]:
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL(
                    "SELECT " + self._COLUMNS + " FROM {} WHERE user_id = %s AND type = %s "
                    "AND is_active ORDER BY importance DESC, created_at, id LIMIT %s"
                ).format(self.memories),
                (user_id, type, limit),
            )
            return [self._record(row) for row in curs.fetchall()]

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]:
        """Every item, active or not, of one user or of all, in id order."""
        where = SQL("WHERE user_id = %s") if user_id is not None else SQL("")
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL("SELECT " + self._COLUMNS + " FROM {} {} ORDER BY user_id, id").format(self.memories, where),
                (user_id,) if user_id is not None else (),
            )
            return [self._record(row) for row in curs.fetchall()]

    def search(
        self,
        user_id: str,
        vector: Sequence[float],
        types: Sequence[str],
        top_k: int,
        min_similarity: float,
    ) -> list[RecallHit]:
        # Exact distance over one user's rows (btree on user_id): exact and fast
        # for the hundreds of rows a user has; no ANN index to miss filtered rows.
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL(
                    "SELECT " + self._COLUMNS + ", 1 - (embedding <=> %s::vector) AS similarity "
                    "FROM {} WHERE user_id = %s AND type = ANY(%s) AND is_active "
                    "ORDER BY embedding <=> %s::vector, id LIMIT %s"
                ).format(self.memories),
                (vector_literal(vector), user_id, list(types), vector_literal(vector), top_k),
            )
            hits = [RecallHit(self._record(row), round(float(row["similarity"]), 6)) for row in curs.fetchall()]
        return [hit for hit in hits if hit.similarity >= min_similarity]

    def all_rows(self) -> list[dict[str, Any]]:
        """Every row, vectors as text, in id order: for comparing two builds."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL("SELECT *, embedding::text AS embedding FROM {} ORDER BY id").format(self.memories)
            )
            return [dict(row) for row in curs.fetchall()]


class MemoryProjection(Projection[MemoryView]):
    """Turns ``UserMemory`` events into ``memories`` rows."""

    name = "memories"

    def __init__(self, view: MemoryView, embedder: Embedder) -> None:
        super().__init__(view)
        self.embedder = embedder

    def texts_to_embed(self, events: Sequence[Any]) -> list[str]:
        """Texts of the rows these events create, to embed in one batch before writing."""
        return [
            e.text
            for e in events
            if isinstance(e, (UserMemory.FactObserved, UserMemory.PreferenceObserved))
        ]

    def process_event(self, domain_event: Any, tracking: Tracking) -> None:
        """Apply one event and its tracking position in one transaction."""
        texts = self.texts_to_embed([domain_event])
        vectors = dict(zip(texts, self.embedder.embed(texts), strict=True))
        with self.view.datastore.transaction(commit=True) as curs:
            self.apply(domain_event, curs, vectors)
            self.view.record_position(curs, tracking.application_name, tracking.notification_id)

    @singledispatchmethod
    def apply(self, event: Any, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        """Events without a row (messages, extractions, creation) change nothing."""

    @apply.register
    def _(self, e: UserMemory.FactObserved, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        self.view.insert(
            curs,
            item_id=e.fact_id,
            user_id=self._user_id(curs, e),
            type="fact",
            content=e.text,
            category=e.category,
            vector=vectors[e.text],
            metadata={
                "category": e.category,
                "confidence": e.confidence,
                "source_session": e.session_id,
                "source_message": e.message_id,
                "extractor_id": e.extractor_id,
                "first_seen": _iso(e.at),
                "last_confirmed": _iso(e.at),
                "times_mentioned": 1,
                "conflicts_with": e.conflicts_with,
            },
            importance=e.confidence,
            session_id=e.session_id,
            at=e.at,
        )

    @apply.register
    def _(self, e: UserMemory.FactConfirmed, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        self.view.update(
            curs,
            e.fact_id,
            {"times_mentioned": e.times_mentioned, "last_confirmed": _iso(e.last_confirmed)},
            e.last_confirmed,
            importance=e.importance,
        )

    @apply.register
    def _(self, e: UserMemory.FactInvalidated, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        self.view.update(
            curs,
            e.fact_id,
            {
                "invalidated_at": _iso(e.at),
                "invalidation_reason": e.reason,
                "invalidation_relation": e.relation,
                "superseded_by": e.superseded_by,
            },
            e.at,
            is_active=False,
        )

    @apply.register
    def _(self, e: UserMemory.PreferenceObserved, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        self.view.insert(
            curs,
            item_id=e.preference_id,
            user_id=self._user_id(curs, e),
            type="preference",
            content=e.text,
            category=e.category,
            vector=vectors[e.text],
            metadata={
                "category": e.category,
                "strength": e.strength,
                "evidence": list(e.evidence),
                "first_seen": _iso(e.at),
                "last_confirmed": _iso(e.at),
                "times_observed": 1,
                "source_session": e.session_id,
                "source_message": e.message_id,
                "extractor_id": e.extractor_id,
            },
            importance=e.strength,
            session_id=e.session_id,
            at=e.at,
        )

    @apply.register
    def _(self, e: UserMemory.PreferenceReinforced, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        self.view.update(
            curs,
            e.preference_id,
            {
                "strength": e.new_strength,
                "evidence": list(e.evidence),
                "last_confirmed": _iso(e.at),
                "times_observed": e.times_observed,
            },
            e.at,
            importance=e.new_strength,
        )

    @apply.register
    def _(self, e: UserMemory.Started, curs: Cursor[Any], vectors: dict[str, list[float]]) -> None:
        curs.execute(
            SQL(
                "INSERT INTO {} (originator_id, user_id) VALUES (%s, %s) ON CONFLICT DO NOTHING"
            ).format(self.view.users),
            (e.originator_id, e.user_id),
        )

    def _user_id(self, curs: Cursor[Any], e: Any) -> str:
        curs.execute(
            SQL("SELECT user_id FROM {} WHERE originator_id = %s").format(self.view.users),
            (e.originator_id,),
        )
        row = curs.fetchone()
        if row is None:
            raise LookupError(f"no Started event projected for memory {e.originator_id}")
        return row["user_id"]
