"""The ``llm_calls`` table: one row per LLM or embedding call, and the usage report.

Each row says who the call was for (user, message, purpose: read from
``factledger.application.calls.current_call``, which the service sets), what
it cost (tokens, latency) and whether the response cache answered it. A
message the signal detector let through without any call gets a ``gated``
row, so the report shows it with zero calls rather than not at all.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Identifier

from factledger.application.calls import current_call

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
_NUMBERS = ("calls", "embedding_calls", "cache_hits", "gated", "failed", "input_tokens", "output_tokens", "latency_ms")


class UsageLog:
    """Records calls and reports them per message."""

    def __init__(self, datastore: PostgresDatastore, schema: str | None = None, table: str = "llm_calls"):
        self.datastore = datastore
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

        Committed without waiting for the WAL flush (``synchronous_commit`` off for this
        transaction only): a reading is best-effort already, and a database crash can lose
        only the last fraction of a second of them, never an event; the wait was most of
        what a call's bookkeeping cost (ADR 0020)."""
        context = current_call.get()
        try:
            with self.datastore.transaction(commit=True) as curs:
                curs.execute(
                    SQL(
                        "INSERT INTO {} (ledger, user_id, message_id, purpose, kind, model, prompt_id, input_tokens, "
                        "output_tokens, latency_ms, cached, ok, attempts, error, input_hash) "
                        "SELECT %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::text, %s::int, "
                        "%s::int, %s::int, %s::bool, %s::bool, %s::int, %s::text, %s::bytea "
                        "FROM (SELECT set_config('synchronous_commit', 'off', true)) AS asynchronous"
                    ).format(self.table),
                    (
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
                    ),
                )
        except Exception:
            logger.exception("could not record an LLM call in %s", self.table)

    def totals(self) -> dict[str, int]:
        """The ledger's totals only (cheap: for metrics)."""
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(SQL("SELECT " + _TOTALS + " FROM {} WHERE ledger = %s").format(self.table), (self.ledger,))
            row = curs.fetchone()
        return {key: int(row[key]) if row else 0 for key in _NUMBERS}

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
