"""API keys kept hashed: in PostgreSQL (table ``factledger_api_keys`` of the base schema) or in memory."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg.rows import dict_row
from psycopg.sql import SQL, Identifier
from psycopg_pool import ConnectionPool

from factledger.application.access import (
    KEY_PREFIX,
    ApiKey,
    IssuedKey,
    NotAuthenticated,
    Scope,
    check_tenant,
    new_key_parts,
    parse_key,
    secret_hash,
    secrets_match,
    unknown_key,
)

TABLE = "factledger_api_keys"
# ``last_used_at`` is a hint for operators; writing it on every request would double the load.
LAST_USED_RESOLUTION = timedelta(minutes=1)
INVALID = "the API key is not valid"
REVOKED = "the API key was revoked"


def _token(key_id: str, secret: str) -> str:
    return f"{KEY_PREFIX}_{key_id}_{secret}"


def _key(row: dict[str, Any]) -> ApiKey:
    return ApiKey(
        key_id=row["key_id"],
        tenant=row["tenant"],
        scope=Scope.parse(row["scope"]),
        label=row["label"],
        created_at=row["created_at"],
        revoked_at=row["revoked_at"],
        last_used_at=row["last_used_at"],
    )


def _active(row: dict[str, Any] | None) -> ApiKey:
    """The key of ``row`` unless it is gone or revoked."""
    if row is None:
        raise NotAuthenticated(INVALID)
    if row["revoked_at"] is not None:
        raise NotAuthenticated(REVOKED)
    return _key(row)


class PostgresKeyStore:
    """``KeyStore`` on a table of the base schema, shared by every server process."""

    def __init__(self, uri: str, schema: str, options: str = "") -> None:
        self.table = Identifier(schema, TABLE)
        self.pool: ConnectionPool[Any] = ConnectionPool(
            uri, min_size=1, max_size=4, kwargs={"options": options, "row_factory": dict_row}, open=True
        )
        with self.pool.connection() as conn:
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (key_id text PRIMARY KEY, tenant text NOT NULL, "
                    "scope text NOT NULL, secret_hash text NOT NULL, label text NOT NULL DEFAULT '', "
                    "created_at timestamptz NOT NULL DEFAULT now(), revoked_at timestamptz, "
                    "last_used_at timestamptz)"
                ).format(self.table)
            )

    def create(self, tenant: str, scope: Scope, label: str = "") -> IssuedKey:
        check_tenant(tenant)
        key_id, secret = new_key_parts()
        with self.pool.connection() as conn:
            row = conn.execute(
                SQL(
                    "INSERT INTO {} (key_id, tenant, scope, secret_hash, label) VALUES (%s, %s, %s, %s, %s) RETURNING *"
                ).format(self.table),
                (key_id, tenant, scope.label, secret_hash(secret), label),
            ).fetchone()
        assert row is not None  # RETURNING of an INSERT
        return IssuedKey(_key(row), _token(key_id, secret))

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        with self.pool.connection() as conn:
            rows = conn.execute(
                SQL("SELECT * FROM {} WHERE %s::text IS NULL OR tenant = %s ORDER BY created_at DESC").format(
                    self.table
                ),
                (tenant, tenant),
            ).fetchall()
        return [_key(row) for row in rows]

    def revoke(self, key_id: str) -> ApiKey:
        with self.pool.connection() as conn:
            row = conn.execute(
                SQL("UPDATE {} SET revoked_at = coalesce(revoked_at, now()) WHERE key_id = %s RETURNING *").format(
                    self.table
                ),
                (key_id,),
            ).fetchone()
        if row is None:
            raise unknown_key(key_id)
        return _key(row)

    def authenticate(self, token: str) -> ApiKey:
        key_id, secret = parse_key(token)
        with self.pool.connection() as conn:
            row = conn.execute(SQL("SELECT * FROM {} WHERE key_id = %s").format(self.table), (key_id,)).fetchone()
            if row is None or not secrets_match(secret, row["secret_hash"]):
                raise NotAuthenticated(INVALID)
            if row["revoked_at"] is not None:
                raise NotAuthenticated(REVOKED)
            now = datetime.now(UTC)
            if row["last_used_at"] is None or now - row["last_used_at"] > LAST_USED_RESOLUTION:
                conn.execute(SQL("UPDATE {} SET last_used_at = %s WHERE key_id = %s").format(self.table), (now, key_id))
        return _key(row)

    def active(self, key_id: str) -> ApiKey:
        with self.pool.connection() as conn:
            row = conn.execute(SQL("SELECT * FROM {} WHERE key_id = %s").format(self.table), (key_id,)).fetchone()
        return _active(row)

    def ping(self) -> None:
        """Raise unless the database answers (for readiness checks)."""
        with self.pool.connection(timeout=5) as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        self.pool.close()


class InMemoryKeyStore:
    """``KeyStore`` for the in-memory backend: keys live as long as the process."""

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def create(self, tenant: str, scope: Scope, label: str = "") -> IssuedKey:
        check_tenant(tenant)
        key_id, secret = new_key_parts()
        row = {
            "key_id": key_id,
            "tenant": tenant,
            "scope": scope.label,
            "secret_hash": secret_hash(secret),
            "label": label,
            "created_at": datetime.now(UTC),
            "revoked_at": None,
            "last_used_at": None,
        }
        with self._lock:
            self._rows[key_id] = row
        return IssuedKey(_key(row), _token(key_id, secret))

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        with self._lock:
            rows = [dict(r) for r in self._rows.values() if tenant is None or r["tenant"] == tenant]
        return sorted((_key(r) for r in rows), key=lambda k: k.created_at, reverse=True)

    def revoke(self, key_id: str) -> ApiKey:
        with self._lock:
            row = self._rows.get(key_id)
            if row is None:
                raise unknown_key(key_id)
            row["revoked_at"] = row["revoked_at"] or datetime.now(UTC)
            return _key(dict(row))

    def authenticate(self, token: str) -> ApiKey:
        key_id, secret = parse_key(token)
        with self._lock:
            row = self._rows.get(key_id)
            if row is None or not secrets_match(secret, row["secret_hash"]):
                raise NotAuthenticated(INVALID)
            if row["revoked_at"] is not None:
                raise NotAuthenticated(REVOKED)
            row["last_used_at"] = datetime.now(UTC)
            return _key(dict(row))

    def active(self, key_id: str) -> ApiKey:
        with self._lock:
            row = self._rows.get(key_id)
            return _active(None if row is None else dict(row))

    def ping(self) -> None:
        return None

    def close(self) -> None:
        return None
