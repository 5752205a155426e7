"""What the server processes of one installation share, in tables of its base schema (ADR 0039).

``factledger serve --workers N`` runs N processes; a request may reach any of
them. So the state a request changes and a later one reads lives here, not in
a process: the rate limits' token buckets (per key and per client address),
the replays' jobs (state and progress) and the console's signed-in sessions.
Each change is one atomic statement (``INSERT … ON CONFLICT … RETURNING`` or
``UPDATE … RETURNING``): two processes charging one bucket at once queue on its
row, so N requests over a limit get their 429s at the same total as on one
process. The database's clock is the one clock of every process.

The buckets are an UNLOGGED table written with ``synchronous_commit = off``:
a crash of the database may forget a few seconds of spending (buckets then
start full), which costs no correctness, and a request does not wait for a
disk flush to be counted.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.sql import SQL, Composable, Identifier
from psycopg_pool import ConnectionPool

from factledger.infrastructure.bootstrap import database_uri, prepare_database, startup_lock
from factledger.infrastructure.config import Settings
from factledger.infrastructure.event_store import connection_options

BUCKETS = "factledger_rate_buckets"
REPLAY_JOBS = "factledger_replay_jobs"
SESSIONS = "factledger_console_sessions"
#: a running replay whose process wrote nothing for this long is taken as dead (its process was killed)
REPLAY_STALE_S = 30.0
#: how often idle (refilled) buckets are deleted, per process
PRUNE_EVERY_S = 60.0


def open_server_state(settings: Settings) -> ServerState | None:
    """The shared tables of an installation on PostgreSQL (None on the in-memory backend, whose
    data lives in one process anyway)."""
    if settings.backend == "memory":
        return None
    options = connection_options(settings.statement_timeout, settings.lock_timeout)
    uri = database_uri(settings)
    with startup_lock(uri) as conn:  # the tables created once, whoever starts first
        prepare_database(conn, settings.schema)
        return ServerState(uri, settings.schema, options)


def worker_name() -> str:
    """This process, as a replay job names the process running it."""
    return f"{socket.gethostname()}:{os.getpid()}"


class ServerState:
    """The shared tables, on a pool of their own (created on first use, whoever starts first)."""

    def __init__(self, uri: str, schema: str, options: str = "") -> None:
        self.schema = schema
        self.pool: ConnectionPool[Any] = ConnectionPool(
            uri,
            min_size=1,
            max_size=8,
            kwargs={"options": f"{options} -c synchronous_commit=off", "row_factory": dict_row, "autocommit": True},
            open=True,
        )
        with self.pool.connection() as conn:
            conn.execute(
                SQL(
                    "CREATE UNLOGGED TABLE IF NOT EXISTS {} (bucket text PRIMARY KEY, "
                    "tokens double precision NOT NULL, refreshed_at timestamptz NOT NULL, granted boolean NOT NULL)"
                ).format(self.table(BUCKETS))
            )
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (tenant text NOT NULL, ledger text NOT NULL, state text NOT NULL, "
                    "processed bigint NOT NULL DEFAULT 0, total bigint NOT NULL DEFAULT 0, "
                    "started_at double precision NOT NULL, report jsonb, error jsonb, worker text NOT NULL, "
                    "heartbeat_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant, ledger))"
                ).format(self.table(REPLAY_JOBS))
            )
            conn.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (session_hash text PRIMARY KEY, key_id text NOT NULL, "
                    "csrf text NOT NULL, expires_at timestamptz NOT NULL)"
                ).format(self.table(SESSIONS))
            )

    def table(self, name: str) -> Identifier:
        return Identifier(self.schema, name)

    def execute(self, query: Composable, params: Any = None) -> list[dict[str, Any]]:
        """One statement in its own transaction; the rows it returned."""
        with self.pool.connection() as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def close(self) -> None:
        self.pool.close()


class SharedRateLimiter:
    """``RateLimiter``'s token buckets in the database: one budget however many processes serve.

    ``kind`` keeps buckets of different limits apart (``key`` and ``address`` share the table).
    """

    def __init__(self, state: ServerState, per_minute: int, kind: str) -> None:
        self.state = state
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.kind = kind
        self._pruned_at = time.monotonic()

    def _level(self) -> str:
        # What the bucket holds now: refilled since it was last touched, never over capacity.
        return (
            "least(%(capacity)s::float8, b.tokens + "
            "greatest(0, extract(epoch FROM now() - b.refreshed_at))::float8 * %(rate)s::float8)"
        )

    def charge(self, key_id: str, cost: float = 1.0) -> float:
        """0 when the request (``cost`` requests' worth) may go ahead, else the seconds until it may."""
        if self.capacity <= 0:
            return 0.0
        level = self._level()
        query = (
            "INSERT INTO {} AS b (bucket, tokens, refreshed_at, granted) VALUES (%(bucket)s, "
            "CASE WHEN %(capacity)s::float8 >= %(cost)s::float8 THEN %(capacity)s::float8 - %(cost)s::float8 "
            "ELSE %(capacity)s::float8 END, now(), %(capacity)s::float8 >= %(cost)s::float8) "
            "ON CONFLICT (bucket) DO UPDATE SET "
            f"tokens = CASE WHEN {level} >= %(cost)s::float8 THEN {level} - %(cost)s::float8 ELSE {level} END, "
            f"granted = {level} >= %(cost)s::float8, refreshed_at = greatest(b.refreshed_at, now()) "
            "RETURNING tokens, granted"
        )
        params = {"bucket": self._bucket(key_id), "capacity": self.capacity, "rate": self.rate, "cost": float(cost)}
        [row] = self.state.execute(SQL(query).format(self.state.table(BUCKETS)), params)
        self._prune_now_and_then()
        return 0.0 if row["granted"] else (cost - row["tokens"]) / self.rate

    def wait(self, key_id: str) -> float:
        """0 when one more request may go ahead now, else the seconds until it may (nothing taken)."""
        if self.capacity <= 0:
            return 0.0
        query = f"SELECT {self._level()} AS tokens FROM {{}} AS b WHERE bucket = %(bucket)s"
        params = {"bucket": self._bucket(key_id), "capacity": self.capacity, "rate": self.rate}
        rows = self.state.execute(SQL(query).format(self.state.table(BUCKETS)), params)
        tokens = rows[0]["tokens"] if rows else self.capacity
        return 0.0 if tokens >= 1 else (1 - tokens) / self.rate

    def tracked(self) -> int:
        """How many buckets of this kind exist."""
        rows = self.state.execute(
            SQL("SELECT count(*) AS n FROM {} WHERE bucket LIKE %s").format(self.state.table(BUCKETS)),
            (f"{self.kind}:%",),
        )
        return int(rows[0]["n"])

    def forget_idle(self, holding: float | None = None) -> None:
        """Delete the buckets holding at least ``holding`` tokens now (default: the refilled ones)."""
        threshold = self.capacity if holding is None else holding
        query = f"DELETE FROM {{}} AS b WHERE bucket LIKE %(kind)s AND {self._level()} >= %(threshold)s::float8"
        params = {"kind": f"{self.kind}:%", "capacity": self.capacity, "rate": self.rate, "threshold": threshold}
        self.state.execute(SQL(query).format(self.state.table(BUCKETS)), params)

    def _bucket(self, key_id: str) -> str:
        return f"{self.kind}:{key_id}"

    def _prune_now_and_then(self) -> None:
        """A refilled bucket means the same as none: drop them once a minute (per process)."""
        if time.monotonic() - self._pruned_at >= PRUNE_EVERY_S:
            self._pruned_at = time.monotonic()
            self.forget_idle()


class SharedReplayJobs:
    """The replays' state and progress, by (tenant, ledger), readable by every process.

    A job is claimed atomically (one running replay per ledger, whichever process asked);
    the process running it writes its progress and a heartbeat; a job whose heartbeat is
    older than ``REPLAY_STALE_S`` lost its process and may be started again (it resumes).
    """

    def __init__(self, state: ServerState, stale_s: float = REPLAY_STALE_S) -> None:
        self.state = state
        self.stale_s = stale_s

    def claim(self, tenant: str, ledger: str) -> dict[str, Any] | None:
        """The new running job, or None when one is running (and alive) already."""
        rows = self.state.execute(
            SQL(
                "INSERT INTO {0} AS j (tenant, ledger, state, started_at, worker, heartbeat_at) "
                "VALUES (%(tenant)s, %(ledger)s, 'running', %(started)s, %(worker)s, now()) "
                "ON CONFLICT (tenant, ledger) DO UPDATE SET state = 'running', processed = 0, total = 0, "
                "started_at = excluded.started_at, report = NULL, error = NULL, worker = excluded.worker, "
                "heartbeat_at = now() "
                "WHERE j.state <> 'running' OR j.heartbeat_at < now() - make_interval(secs => %(stale)s) "
                "RETURNING *"
            ).format(self.state.table(REPLAY_JOBS)),
            {
                "tenant": tenant,
                "ledger": ledger,
                "started": time.time(),
                "worker": worker_name(),
                "stale": self.stale_s,
            },
        )
        return self._job(rows[0]) if rows else None

    def record(self, tenant: str, ledger: str, **fields: Any) -> None:
        """Write the job's progress (or its end) and beat its heart."""
        values = {k: json.dumps(v) if k in ("report", "error") else v for k, v in fields.items()}
        assignments = SQL(", ").join(SQL("{} = %({})s").format(Identifier(k), SQL(k)) for k in values)
        self.state.execute(
            SQL("UPDATE {} SET {}, heartbeat_at = now() WHERE tenant = %(tenant)s AND ledger = %(ledger)s").format(
                self.state.table(REPLAY_JOBS), assignments
            ),
            {**values, "tenant": tenant, "ledger": ledger},
        )

    def get(self, tenant: str, ledger: str) -> dict[str, Any] | None:
        rows = self.state.execute(
            SQL("SELECT *, heartbeat_at < now() - make_interval(secs => %s) AS stale FROM {} WHERE tenant = %s "
                "AND ledger = %s").format(self.state.table(REPLAY_JOBS)),
            (self.stale_s, tenant, ledger),
        )  # fmt: skip
        return self._job(rows[0]) if rows else None

    @staticmethod
    def _job(row: dict[str, Any]) -> dict[str, Any]:
        state = row["state"]
        if state == "running" and row.get("stale"):
            state = "interrupted"  # its process ended without a word (kill -9): start it again to resume
        return {
            "ledger": row["ledger"],
            "state": state,
            "processed": row["processed"],
            "total": row["total"],
            "started_at": row["started_at"],
            "report": row["report"],
            "error": row["error"],
        }


class SharedSessions:
    """The console's signed-in sessions: the hash of the cookie's id, the key it stands for (its
    id, never its secret), the CSRF token and when it expires (renewed by each request)."""

    def __init__(self, state: ServerState, ttl: float, capacity: int) -> None:
        self.state = state
        self.ttl = ttl
        self.capacity = capacity

    def open(self, session_hash: str, key_id: str, csrf: str) -> None:
        table = self.state.table(SESSIONS)
        self.state.execute(SQL("DELETE FROM {} WHERE expires_at < now()").format(table))
        # Over capacity, the sessions closest to expiring go first (as the oldest do in one process).
        self.state.execute(
            SQL(
                "DELETE FROM {0} WHERE session_hash IN (SELECT session_hash FROM {0} ORDER BY expires_at "
                "LIMIT greatest(0, (SELECT count(*) FROM {0}) - %s + 1))"
            ).format(table),
            (self.capacity,),
        )
        self.state.execute(
            SQL(
                "INSERT INTO {} (session_hash, key_id, csrf, expires_at) "
                "VALUES (%s, %s, %s, now() + make_interval(secs => %s))"
            ).format(table),
            (session_hash, key_id, csrf, self.ttl),
        )

    def find(self, session_hash: str) -> tuple[str, str, datetime] | None:
        """(key id, CSRF token, expiry) of a live session, its expiry renewed; None if none."""
        rows = self.state.execute(
            SQL(
                "UPDATE {} SET expires_at = now() + make_interval(secs => %s) "
                "WHERE session_hash = %s AND expires_at >= now() RETURNING key_id, csrf, expires_at"
            ).format(self.state.table(SESSIONS)),
            (self.ttl, session_hash),
        )
        return (rows[0]["key_id"], rows[0]["csrf"], rows[0]["expires_at"]) if rows else None

    def close(self, session_hash: str) -> None:
        self.state.execute(
            SQL("DELETE FROM {} WHERE session_hash = %s").format(self.state.table(SESSIONS)), (session_hash,)
        )
