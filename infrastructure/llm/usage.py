"""The ``llm_calls`` table: one row per LLM or embedding call, and the usage report.

Each row says who the call was for (user, message, purpose: read from
``factledger.application.calls.current_call``, which the service sets), what
it cost (tokens, latency) and whether the response cache answered it. A
message the signal detector let through without any call gets a ``gated``
row, so the report shows it with zero calls rather than not at all.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Composed, Identifier

from factledger.application.calls import CallContext, current_call, saved_elsewhere

logger = logging.getLogger(__name__)


@attrs.frozen
class CallRecord:
    kind: str  # chat | embedding | gated
    model: str
    prompt_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0
    cached: bool = False
    ok: bool = True
    attempts: int = 1
    error: str | None = None
    # the response-cache key of a chat request: what forgetting its user removes from the cache
    input_hash: bytes | None = None


_TOTALS = """
    count(*) FILTER (WHERE kind = 'chat' AND NOT cached) AS calls,
    count(*) FILTER (WHERE kind = 'embedding' AND NOT cached) AS embedding_calls,
    count(*) FILTER (WHERE cached) AS cache_hits,
    count(*) FILTER (WHERE kind = 'gated') AS gated,
    count(*) FILTER (WHERE NOT ok) AS failed,
    coalesce(sum(input_tokens), 0) AS input_tokens,
    coalesce(sum(output_tokens), 0) AS output_tokens,
    coalesce(sum(latency_ms), 0) AS latency_ms
"""
_COLUMNS = (
    "ledger, user_id, message_id, purpose, kind, model, prompt_id, input_tokens, "
    "output_tokens, latency_ms, cached, ok, attempts, error, input_hash"
)
_ROW = SQL(
    "(%s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::int, "
    "%s::int, %s::int, %s::bool, %s::bool, %s::int, %s::text, %s::bytea)"
)
# Readings of these purposes belong to a message on its way to a save.
_HELD_PURPOSES = frozenset({"extract", "decide"})
# More than a message ever makes: a path that never saves cannot grow the list without bound.
MAX_HELD = 64
_NUMBERS = ("calls", "embedding_calls", "cache_hits", "gated", "failed", "input_tokens", "output_tokens", "latency_ms")


class UsageLog:
    """Records calls and reports them per message."""

    # Every log of the process, so that ``settle`` finds what a thread holds in any of them
    # (a replay's extractor meters into its own log, not the target ledger's).
    _logs: ClassVar[weakref.WeakSet[UsageLog]] = weakref.WeakSet()
    _logs_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self, datastore: PostgresDatastore, schema: str | None = None, table: str = "llm_calls", *, hold: bool = False
    ):
        self.datastore = datastore
        self.hold = hold
        self._local = threading.local()
        with UsageLog._logs_lock:
            UsageLog._logs.add(self)
        # One log in the base schema for every named ledger; each row names its ledger's schema.
        self.table = Identifier(schema or datastore.schema, table)
        self.ledger = datastore.schema
        with datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), "
                    "ledger text NOT NULL, user_id text, message_id text, purpose text, kind text NOT NULL, "
                    "model text NOT NULL, prompt_id text, "
                    "input_tokens integer NOT NULL DEFAULT 0, output_tokens integer NOT NULL DEFAULT 0, "
                    "latency_ms integer NOT NULL DEFAULT 0, cached boolean NOT NULL DEFAULT false, "
                    "ok boolean NOT NULL DEFAULT true, attempts integer NOT NULL DEFAULT 1, error text)"
                ).format(self.table)
            )
            curs.execute(SQL("ALTER TABLE {} ADD COLUMN IF NOT EXISTS input_hash bytea").format(self.table))
            curs.execute(
                SQL("CREATE INDEX IF NOT EXISTS {} ON {} (user_id, message_id)").format(
                    Identifier(f"{table}_user_message"), self.table
                )
            )

    def record(self, call: CallRecord) -> None:
        """Store one call, attributed to the current user and message. Never raises:
        losing a meter reading must not lose the answer it metered.

        Held for the message's save when ``hold`` is set and a message is being extracted or
        decided; otherwise committed at once, without waiting for the WAL flush
        (``synchronous_commit`` off for that transaction only): a reading is best-effort
        already, and a database crash can lose only the last fraction of a second of them,
        never an event (ADR 0020)."""
        context = current_call.get()
        row = self._row(call, context)
        if (
            self.hold
            and context is not None
            and context.message_id is not None
            and context.purpose in _HELD_PURPOSES
            and not saved_elsewhere.get()
        ):
            key = (context.ledger, context.user_id, context.message_id)
            held = self._held()
            if held and getattr(self._local, "key", None) != key:
                self._flush()  # left by a message no save took
                held = self._held()
            self._local.key = key
            held.append(row)
            if len(held) >= MAX_HELD:
                self._flush()
            return
        self._write_now([row])

    def write_within_save(self, *_: Any) -> list[tuple[Composed, list[Any]]]:
        """The statement writing the held readings in a save's transaction (a save hook): they
        commit with the events, or stay held for the next attempt (``committed`` lets them go)."""
        held = self._held()
        self._local.written = len(held)
        if not held:
            return []
        return [(self._insert(len(held), asynchronous=False), [v for row in held for v in row])]

    def committed(self) -> None:
        """The save whose transaction wrote the held readings committed (an after-commit hook)."""
        written = getattr(self._local, "written", 0)
        if written:
            del self._held()[:written]
            self._local.written = 0

    def settle(self) -> None:
        """Write what this thread holds in any log of the process (a message is done: whatever
        no save took, a duplicate or a failed write, must not wait for the next message)."""
        with UsageLog._logs_lock:
            logs = list(UsageLog._logs)
        for log in logs:
            log._flush()

    def _held(self) -> list[tuple[Any, ...]]:
        held: list[tuple[Any, ...]] | None = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = []
        return held

    def _flush(self) -> None:
        held = self._held()
        if held:
            rows = list(held)
            held.clear()
            self._local.written = 0
            self._write_now(rows)

    def _row(self, call: CallRecord, context: CallContext | None) -> tuple[Any, ...]:
        return (
            (context.ledger if context and context.ledger else self.ledger),
            context.user_id if context else None,
            context.message_id if context else None,
            context.purpose if context else None,
            call.kind,
            call.model,
            call.prompt_id,
            call.input_tokens,
            call.output_tokens,
            call.latency_ms,
            call.cached,
            call.ok,
            call.attempts,
            call.error,
            call.input_hash,
        )

    def _insert(self, rows: int, *, asynchronous: bool) -> Composed:
        values = SQL(", ").join([_ROW] * rows)
        if not asynchronous:
            return SQL("INSERT INTO {} (" + _COLUMNS + ") VALUES {}").format(self.table, values)
        # Asynchronous for this transaction only: never inside a save, whose commit must wait.
        return SQL(
            "INSERT INTO {} (" + _COLUMNS + ") SELECT v.* FROM (VALUES {}) AS v "
            "CROSS JOIN (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous"
        ).format(self.table, values)

    def _write_now(self, rows: Sequence[tuple[Any, ...]]) -> None:
        try:
            with self.datastore.transaction(commit=True) as curs:
                curs.execute(self._insert(len(rows), asynchronous=True), [v for row in rows for v in row])
        except Exception:
            logger.exception("could not record %d LLM call(s) in %s", len(rows), self.table)

    def totals(self) -> dict[str, int]:
        """The ledger's totals only (cheap: for metrics)."""
        with self.datastore.cursor() as curs:
            curs.execute(SQL("SELECT " + _TOTALS + " FROM {} WHERE ledger = %s").format(self.table), (self.ledger,))
            row = curs.fetchone()
        return {key: int(row[key]) if row else 0 for key in _NUMBERS}

    def daily(self, days: int = 30) -> list[dict[str, Any]]:
        """This ledger's calls per UTC day of the last ``days`` days (an operator's chart)."""
        with self.datastore.cursor() as curs:
            curs.execute(
                SQL(
                    "SELECT (at AT TIME ZONE 'UTC')::date AS day, " + _TOTALS + " FROM {} "
                    "WHERE ledger = %s AND at >= now() - make_interval(days => %s) GROUP BY 1 ORDER BY 1"
                ).format(self.table),
                (self.ledger, days),
            )
            rows = curs.fetchall()
        return [{"day": row["day"].isoformat(), **{key: int(row[key]) for key in _NUMBERS}} for row in rows]

    def report(self, user_id: str | None = None, ledger: str | None = None) -> dict[str, Any]:
        """Calls, tokens, latency and cache hits per message, oldest first, and totals.

        ``calls`` counts chat completions actually sent (cache hits excluded),
        ``embedding_calls`` embedding requests; calls made for no message
        (recall queries, projection) are under ``unattributed``. Only calls
        made for ``ledger`` (default: the one this log was opened on) count.
        """
        ledger = ledger or self.ledger
        where = SQL("WHERE ledger = %s AND user_id = %s") if user_id else SQL("WHERE ledger = %s")
        params = (ledger, user_id) if user_id else (ledger,)
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL(
                    "SELECT user_id, message_id, min(at) AS first_at, " + _TOTALS + " FROM {} {} "
                    "GROUP BY user_id, message_id ORDER BY min(at)"
                ).format(self.table, where),
                params,
            )
            rows = curs.fetchall()
            curs.execute(SQL("SELECT " + _TOTALS + " FROM {} {}").format(self.table, where), params)
            totals = curs.fetchone()
        messages = []
        unattributed = {key: 0 for key in _NUMBERS}
        for row in rows:
            numbers = {key: int(row[key]) for key in _NUMBERS}
            if row["message_id"] is None:
                for key in _NUMBERS:
                    unattributed[key] += numbers[key]
                continue
            messages.append({"message_id": row["message_id"], "user_id": row["user_id"], **numbers})
        summary = {key: int(totals[key]) for key in _NUMBERS} if totals else {key: 0 for key in _NUMBERS}
        summary["messages"] = len(messages)
        return {"messages": messages, "unattributed": unattributed, "totals": summary}
