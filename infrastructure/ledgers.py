"""Named ledgers: each one a PostgreSQL schema with its own events and read model.

The catalog (table ``factledger_ledgers`` in the base schema) maps names to schemas. The
ledger named ``live`` is the one every command uses by default; promoting a
replayed ledger swaps the names in one transaction, so readers see either the
old live ledger or the new one, and the old one is kept under another name.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg.sql import SQL, Identifier

from factledger.application.errors import InvalidInput, NotFound
from factledger.application.ports import LedgerInfo

LIVE = "live"
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,29}$")


class LedgerError(InvalidInput):
    """A ledger name that is taken or not allowed, or a replay resumed with other settings."""


class UnknownLedger(LedgerError, NotFound):
    """No ledger has this name."""


def check_ledger_name(name: str) -> str:
    """``name`` if a replay may create a ledger by that name, else ``LedgerError`` saying why."""
    if not NAME_PATTERN.match(name) or name == LIVE:
        raise LedgerError(
            f"ledger name {name!r} must be lower-case letters, digits and _ (start with a letter, ≤ 30), not 'live'"
        )
    return name


class LedgerCatalog:
    """The ``factledger_ledgers`` table of a base schema."""

    def __init__(self, uri: str, base_schema: str, options: str = "") -> None:
        self.uri = uri
        self.base = base_schema
        self.table = Identifier(base_schema, "factledger_ledgers")
        self.shares = Identifier(base_schema, "factledger_replay_shares")
        self.options = options

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        return psycopg.connect(self.uri, row_factory=dict_row, options=self.options, connect_timeout=10)

    def ensure(self) -> None:
        """Create the catalog, with the base schema registered as ``live``, if missing."""
        with self._connect() as conn:
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, schema_name text UNIQUE NOT NULL, "
                    "extractor_id text, source text, created_at timestamptz NOT NULL DEFAULT now(), "
                    "replay_position bigint NOT NULL DEFAULT 0)"
                ).format(self.table)
            )
            conn.execute(SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS replay_users text").format(self.table))
            # replay --processes N: each share's position (ADR 0041), by the ledger's schema (a
            # promote renames ledgers, never their schemas)
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (schema_name text NOT NULL, shares int NOT NULL, "
                    "share int NOT NULL, position bigint NOT NULL, PRIMARY KEY (schema_name, shares, share))"
                ).format(self.shares)
            )
            conn.execute(
                SQL("INSERT INTO {} (name, schema_name) VALUES (%s, %s) ON CONFLICT DO NOTHING").format(self.table),
                (LIVE, self.base),
            )

    def entries(self) -> list[LedgerInfo]:
        with self._connect() as conn:
            rows = conn.execute(SQL("SELECT * FROM {} ORDER BY created_at, name").format(self.table)).fetchall()
        return [self._entry(row) for row in rows]

    def entry(self, name: str) -> LedgerInfo:
        with self._connect() as conn:
            row = conn.execute(SQL("SELECT * FROM {} WHERE name = %s").format(self.table), (name,)).fetchone()
        if row is None:
            known = ", ".join(e.name for e in self.entries())
            raise UnknownLedger(f"no ledger named {name!r} (ledgers: {known})")
        return self._entry(row)

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None = None) -> LedgerInfo:
        """Register a new ledger in a schema of its own, or return the existing one.

        An existing ledger is only resumed with the extractor and the user
        filter it was started with: its position means nothing for another.
        """
        check_ledger_name(name)
        wanted_users = json.dumps(sorted(users)) if users else None
        with self._connect() as conn:
            row = conn.execute(SQL("SELECT * FROM {} WHERE name = %s").format(self.table), (name,)).fetchone()
            if row is None:
                # A random suffix: after a promote, the live ledger may own "<base>__<name>" already.
                schema = f"{self.base}__{name}_{uuid.uuid4().hex[:6]}"
                conn.execute(SQL("CREATE SCHEMA {}").format(Identifier(schema)))
                conn.execute(
                    SQL(
                        "INSERT INTO {} (name, schema_name, extractor_id, source, replay_users) "
                        "VALUES (%s, %s, %s, %s, %s)"
                    ).format(self.table),
                    (name, schema, extractor_id, source, wanted_users),
                )
                created = conn.execute(SQL("SELECT * FROM {} WHERE name = %s").format(self.table), (name,)).fetchone()
                assert created is not None  # inserted just above, in this transaction
                return self._entry(created)
        entry = self._entry(row)
        if entry.extractor_id is not None and entry.extractor_id != extractor_id:
            raise LedgerError(
                f"ledger {name!r} was replayed with {entry.extractor_id}, not {extractor_id}; choose another name"
            )
        if entry.replay_position and row["replay_users"] != wanted_users:
            raise LedgerError(
                f"ledger {name!r} was replayed for users {row['replay_users'] or 'all'}, not "
                f"{wanted_users or 'all'}; resume it with the same users or choose another name"
            )
        return entry

    def max_position(self, schema: str) -> int:
        """The highest notification id in a ledger's event table (0 when it has none yet)."""
        with self._connect() as conn:
            table = conn.execute("SELECT to_regclass(%s) AS t", (f'"{schema}"."factledger_events"',)).fetchone()
            if table is None or table["t"] is None:
                return 0
            row = conn.execute(
                SQL("SELECT coalesce(max(notification_id), 0) AS n FROM {}").format(
                    Identifier(schema, "factledger_events")
                )
            ).fetchone()
        return int(row["n"]) if row else 0

    def set_position(self, name: str, position: int, share: tuple[int, int] | None = None) -> None:
        with self._connect() as conn:
            if share is not None:
                self._set_share_position(conn, name, position, share)
                return
            conn.execute(
                SQL("UPDATE {} SET replay_position = GREATEST(replay_position, %s) WHERE name = %s").format(self.table),
                (position, name),
            )

    def _set_share_position(
        self, conn: psycopg.Connection[dict[str, Any]], name: str, position: int, share: tuple[int, int]
    ) -> None:
        """The share's position forward, then the ledger's to the lowest of the shares' once every
        share has one (in one transaction: the ledger's never passes a share's)."""
        index, count = share
        schema = SQL("(SELECT schema_name FROM {} WHERE name = %s)").format(self.table)
        conn.execute(
            SQL(
                "INSERT INTO {shares} (schema_name, shares, share, position) VALUES ({schema}, %s, %s, %s) "
                "ON CONFLICT (schema_name, shares, share) DO UPDATE "
                "SET position = GREATEST({shares}.position, excluded.position)"
            ).format(shares=self.shares, schema=schema),
            (name, count, index, position),
        )
        conn.execute(
            SQL(
                "UPDATE {table} SET replay_position = GREATEST(replay_position, (SELECT min(position) FROM {shares} "
                "WHERE schema_name = {table}.schema_name AND shares = %s HAVING count(*) = %s)) WHERE name = %s"
            ).format(table=self.table, shares=self.shares),
            (count, count, name),
        )

    def share_position(self, name: str, share: tuple[int, int]) -> int:
        index, count = share
        with self._connect() as conn:
            row = conn.execute(
                SQL(
                    "SELECT GREATEST(l.replay_position, s.position) AS position FROM {} l LEFT JOIN {} s "
                    "ON s.schema_name = l.schema_name AND s.shares = %s AND s.share = %s WHERE l.name = %s"
                ).format(self.table, self.shares),
                (count, index, name),
            ).fetchone()
        if row is None:
            raise UnknownLedger(f"no ledger named {name!r}")
        return int(row["position"])

    def promote(self, name: str) -> str:
        """Make ``name`` the live ledger; return the name the old live ledger now has."""
        if name == LIVE:
            raise LedgerError("'live' is already the live ledger")
        kept = f"previous_{datetime.now(UTC):%Y%m%d%H%M%S%f}"
        with self._connect() as conn, conn.transaction():
            # Serialise promotions; readers resolving names see before or after, never between.
            conn.execute(SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(self.table))
            if conn.execute(SQL("SELECT 1 FROM {} WHERE name = %s").format(self.table), (name,)).fetchone() is None:
                raise UnknownLedger(f"no ledger named {name!r}")
            conn.execute(SQL("UPDATE {} SET name = %s WHERE name = %s").format(self.table), (kept, LIVE))
            conn.execute(SQL("UPDATE {} SET name = %s WHERE name = %s").format(self.table), (LIVE, name))
        return kept

    @staticmethod
    def _entry(row: dict[str, Any]) -> LedgerInfo:
        return LedgerInfo(
            name=row["name"],
            schema=row["schema_name"],
            extractor_id=row["extractor_id"],
            source=row["source"],
            created_at=row["created_at"],
            replay_position=row["replay_position"],
            replay_users=tuple(json.loads(row["replay_users"])) if row.get("replay_users") else None,
        )
