"""Forgetting a user on PostgreSQL: one transaction over every ledger of the database (ADR 0015).

In every ledger's schema (live, replayed, ``previous_*``): the user's events,
snapshots and message ids, their read-model rows, name and quarantined
events, and the cached vectors of every text of theirs (the item texts of
their events, and whatever was embedded for them: recall queries). In the
base schema: the LLM calls made for them, the cached answers to those calls,
their id in a replay's user filter. Then a tombstone, holding a keyed hash of
the user id, the time, the actor and the counts.

Writers, projections and rebuilds are held off while it runs: the events
table lock (a save in flight either commits before, and is deleted, or after,
and finds its stream gone), the view's write lock (a batch read before is
checked after) and its rebuild lock (a rebuild running makes the forget wait,
then fail with ``StoreBusy``: it would copy the rows back).
"""

from __future__ import annotations

import json
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import psycopg
from eventsourcing.persistence import Mapper, StoredEvent
from psycopg.rows import dict_row
from psycopg.sql import SQL, Composable, Identifier

from factledger.application.errors import StoreBusy
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import Tombstone
from factledger.domain.memory import user_memory_id
from factledger.infrastructure.embedding_cache import HASH_PURPOSE, OWNERS_TABLE
from factledger.infrastructure.embedding_cache import TABLE as EMBEDDING_TABLE
from factledger.infrastructure.ledgers import LedgerCatalog
from factledger.infrastructure.llm.cache import TABLE as RESPONSE_TABLE
from factledger.infrastructure.secret import InstallationSecret
from factledger.projections.rows import row_changes, texts_to_embed

TOMBSTONES = "factledger_forgotten"
USER_KEY_PURPOSE = "forgotten-user"


class PostgresEraser:
    """``Eraser`` over every ledger in a base schema's catalog."""

    def __init__(
        self,
        uri: str,
        catalog: LedgerCatalog,
        secret: InstallationSecret,
        mapper_env: dict[str, str],
        options: str = "",
    ) -> None:
        self.uri = uri
        self.catalog = catalog
        self.base = catalog.base
        self.secret = secret
        self.options = options
        # Decodes events as every ledger of this database does (the same transcodings and cipher).
        self.mapper: Mapper[UUID] = MemoryLedger(env=mapper_env).mapper
        self.tombstone_table = Identifier(self.base, TOMBSTONES)

    def user_key(self, user_id: str) -> str:
        return self.secret.hexdigest(USER_KEY_PURPOSE, user_id)

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        try:
            conn = psycopg.connect(self.uri, row_factory=dict_row, options=self.options, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise StoreBusy(f"cannot connect to PostgreSQL: {exc}") from exc
        try:
            with conn, conn.transaction(), conn.cursor() as curs:
                self._ensure(curs)
                yield curs
        except (psycopg.errors.LockNotAvailable, psycopg.errors.QueryCanceled) as exc:
            raise StoreBusy(
                f"could not forget now ({exc.diag.message_primary}): a projection rebuild or a long write "
                "holds the ledger; nothing was deleted, try again"
            ) from exc

    def _ensure(self, curs: psycopg.Cursor[dict[str, Any]]) -> None:
        curs.execute(
            SQL(
                "CREATE TABLE IF NOT EXISTS {} (id bigserial PRIMARY KEY, user_key text NOT NULL, "
                "forgotten_at timestamptz NOT NULL DEFAULT now(), actor text NOT NULL, counts jsonb NOT NULL)"
            ).format(self.tombstone_table)
        )

    def forget(self, user_id: str, actor: str) -> Tombstone:
        originator_id = user_memory_id(user_id)
        counts: Counter[str] = Counter()
        ledgers = self.catalog.entries()
        with self._transaction() as curs:
            schemas = [e.schema for e in ledgers if _exists(curs, e.schema, "factledger_events")]
            for schema in schemas:
                self._hold(curs, schema)
            for schema in schemas:
                texts = self._texts(curs, schema, originator_id)
                self._erase_ledger(curs, schema, originator_id, user_id, texts, counts)
            self._erase_calls(curs, user_id, counts)
            for entry in ledgers:
                if entry.replay_users and user_id in entry.replay_users:
                    remaining = sorted(u for u in entry.replay_users if u != user_id)
                    curs.execute(
                        SQL("UPDATE {} SET replay_users = %s WHERE name = %s").format(self.catalog.table),
                        (json.dumps(remaining), entry.name),
                    )
                    counts["replay_filters"] += 1
            recorded = {key: int(value) for key, value in sorted(counts.items())}
            curs.execute(
                SQL("INSERT INTO {} (user_key, actor, counts) VALUES (%s, %s, %s) RETURNING forgotten_at").format(
                    self.tombstone_table
                ),
                (self.user_key(user_id), actor, json.dumps(recorded)),
            )
            row = curs.fetchone()
        forgotten_at = row["forgotten_at"] if row else datetime.now(UTC)
        return Tombstone(self.user_key(user_id), forgotten_at, actor, recorded)

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        with self._transaction() as curs:
            where: Composable = SQL("WHERE user_key = %s") if user_id is not None else SQL("")
            params = (self.user_key(user_id),) if user_id is not None else ()
            curs.execute(
                SQL("SELECT user_key, forgotten_at, actor, counts FROM {} {} ORDER BY id DESC").format(
                    self.tombstone_table, where
                ),
                params,
            )
            return [
                Tombstone(row["user_key"], row["forgotten_at"], row["actor"], dict(sorted(row["counts"].items())))
                for row in curs.fetchall()
            ]

    # ---- one ledger -----------------------------------------------------------------------

    def _hold(self, curs: psycopg.Cursor[dict[str, Any]], schema: str) -> None:
        """Keep writers, the projection and any rebuild of this ledger off until commit."""
        view_lock = zlib.crc32(f"{schema}.memories".encode())
        curs.execute("SELECT pg_advisory_xact_lock(%s), pg_advisory_xact_lock(%s)", (view_lock + 1, view_lock))
        curs.execute(SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(Identifier(schema, "factledger_events")))

    def _texts(self, curs: psycopg.Cursor[dict[str, Any]], schema: str, originator_id: UUID) -> set[str]:
        """Every text of the user's items in this ledger: their vectors are cached under them."""
        curs.execute(
            SQL("SELECT originator_id, originator_version, topic, state FROM {} WHERE originator_id = %s").format(
                Identifier(schema, "factledger_events")
            ),
            (originator_id,),
        )
        texts: set[str] = set()
        for row in curs.fetchall():
            stored = StoredEvent(row["originator_id"], row["originator_version"], row["topic"], bytes(row["state"]))
            try:
                event = self.mapper.to_domain_event(stored)
            except Exception:  # an event this version cannot read holds no text it could have embedded
                continue
            texts.update(texts_to_embed(row_changes(event)))
        return texts

    def _erase_ledger(
        self,
        curs: psycopg.Cursor[dict[str, Any]],
        schema: str,
        originator_id: UUID,
        user_id: str,
        texts: set[str],
        counts: Counter[str],
    ) -> None:
        by_originator = {
            "events": "factledger_events",
            "snapshots": "factledger_snapshots",
            "message_ids": "factledger_message_ids",
            "read_model_names": "memories_users",
            "quarantined_events": "memories_quarantine",
        }
        for counted, table in by_originator.items():
            if _exists(curs, schema, table):
                curs.execute(
                    SQL("DELETE FROM {} WHERE originator_id = %s").format(Identifier(schema, table)), (originator_id,)
                )
                counts[counted] += curs.rowcount
        if _exists(curs, schema, "memories"):
            curs.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(Identifier(schema, "memories")), (user_id,))
            counts["read_model_rows"] += curs.rowcount
        if _exists(curs, schema, EMBEDDING_TABLE):
            cache = Identifier(schema, EMBEDDING_TABLE)
            hashes = [self.secret.digest(HASH_PURPOSE, text) for text in texts]
            curs.execute(SQL("DELETE FROM {} WHERE text_hash = ANY(%s)").format(cache), (hashes,))
            counts["cached_vectors"] += curs.rowcount
            if _exists(curs, schema, OWNERS_TABLE):
                owners = Identifier(schema, OWNERS_TABLE)
                curs.execute(
                    SQL(
                        "DELETE FROM {} c USING {} o WHERE o.user_id = %s "
                        "AND c.embedder_id = o.embedder_id AND c.text_hash = o.text_hash"
                    ).format(cache, owners),
                    (user_id,),
                )
                counts["cached_vectors"] += curs.rowcount
                curs.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(owners), (user_id,))

    def _erase_calls(self, curs: psycopg.Cursor[dict[str, Any]], user_id: str, counts: Counter[str]) -> None:
        if not _exists(curs, self.base, "llm_calls"):
            return
        calls = Identifier(self.base, "llm_calls")
        if _exists(curs, self.base, RESPONSE_TABLE):
            curs.execute(
                SQL(
                    "DELETE FROM {} r USING {} c WHERE c.user_id = %s AND c.input_hash IS NOT NULL "
                    "AND r.model = c.model AND r.prompt_id = c.prompt_id AND r.input_hash = c.input_hash"
                ).format(Identifier(self.base, RESPONSE_TABLE), calls),
                (user_id,),
            )
            counts["cached_answers"] += curs.rowcount
        curs.execute(SQL("DELETE FROM {} WHERE user_id = %s").format(calls), (user_id,))
        counts["llm_calls"] += curs.rowcount


def _exists(curs: psycopg.Cursor[dict[str, Any]], schema: str, table: str) -> bool:
    curs.execute("SELECT to_regclass(%s) AS t", (f'"{schema}"."{table}"',))
    row = curs.fetchone()
    return row is not None and row["t"] is not None
