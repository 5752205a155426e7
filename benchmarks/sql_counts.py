"""Counting what a piece of code asks of PostgreSQL: statements, commits, and by what (issue 29, item 1).

``counting()`` wraps psycopg's cursor (``execute``, ``executemany``: one per
parameter set, ``copy``) and the connection's internal commands (BEGIN,
COMMIT, ROLLBACK, SAVEPOINT) for as long as it is open, in this process and
every thread of it. A statement is anything sent through a cursor (BEGIN,
SET LOCAL and SAVEPOINT included when they are: they are statements the
server runs); a commit is a COMMIT sent; a transaction is a commit or a
statement run outside a transaction on an autocommit connection (the server
runs each such statement as a transaction of its own: what
``pg_stat_database.xact_commit`` counts). A round trip is a statement or
command sent outside a pipeline, or a pipeline. Statements are also counted by
their first words, the schema left out, so a report can say where they come
from.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import psycopg
from psycopg import pq
from psycopg._connection_base import BaseConnection


@attrs.define
class SqlCounts:
    statements: int = 0
    commits: int = 0
    rollbacks: int = 0
    autocommitted: int = 0  # statements run as transactions of their own
    round_trips: int = 0
    kinds: Counter[str] = attrs.field(factory=Counter)
    lock: threading.Lock = attrs.field(factory=threading.Lock)

    def statement(self, conn: Any, query: Any, times: int = 1) -> None:
        text = _text(conn, query)
        if text.strip().upper() in ("COMMIT", "ROLLBACK"):  # sent as a statement, counted as what it is
            self.command(conn, text)
            return
        alone = conn is not None and conn.autocommit and conn.info.transaction_status == pq.TransactionStatus.IDLE
        with self.lock:
            self.statements += times
            self.kinds[_kind(text)] += times
            self.autocommitted += times * (alone and not text.lstrip().upper().startswith("BEGIN"))
            self.round_trips += times * (conn is None or conn._pipeline is None)

    def command(self, conn: Any, text: str) -> None:
        word = text.split(None, 1)[0].upper() if text.strip() else ""
        with self.lock:
            self.commits += word == "COMMIT"
            self.rollbacks += word == "ROLLBACK"
            self.round_trips += conn._pipeline is None

    def pipeline(self) -> None:
        with self.lock:
            self.round_trips += 1

    @property
    def transactions(self) -> int:
        return self.commits + self.autocommitted


def _text(conn: Any, query: Any) -> str:
    if isinstance(query, bytes):
        return query.decode("utf-8", "replace")
    if isinstance(query, str):
        return query
    try:
        return str(query.as_string(conn))
    except Exception:
        return repr(query)


def _kind(text: str) -> str:
    """A statement's first words, its identifiers' schema left out: where it comes from."""
    words = re.sub(r'"[^"]*"\.', "", " ".join(text.split()))
    return " ".join(words.split()[:6])[:90]


@contextmanager
def counting() -> Iterator[SqlCounts]:
    """Count every statement and commit psycopg sends while the block runs."""
    counts = SqlCounts()
    cursor = psycopg.Cursor
    connection = psycopg.Connection
    saved = (cursor.execute, cursor.executemany, cursor.copy, BaseConnection._exec_command, connection.pipeline)
    execute, executemany, copy, exec_command, pipeline = saved

    def counted_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counts.statement(self.connection, query)
        return execute(self, query, *args, **kwargs)

    def counted_executemany(self: Any, query: Any, params_seq: Any, *args: Any, **kwargs: Any) -> Any:
        params = list(params_seq)
        counts.statement(self.connection, query, len(params))
        return executemany(self, query, params, *args, **kwargs)

    def counted_copy(self: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
        counts.statement(self.connection, statement)
        return copy(self, statement, *args, **kwargs)

    def counted_command(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
        counts.command(self, _text(self, command))
        return (yield from exec_command(self, command, *args, **kwargs))

    def counted_pipeline(self: Any) -> Any:
        counts.pipeline()
        return pipeline(self)

    cursor.execute, cursor.executemany, cursor.copy = counted_execute, counted_executemany, counted_copy  # type: ignore[method-assign,assignment]
    BaseConnection._exec_command = counted_command  # type: ignore[method-assign,assignment]
    connection.pipeline = counted_pipeline  # type: ignore[method-assign,assignment]
    try:
        yield counts
    finally:
        cursor.execute, cursor.executemany, cursor.copy, BaseConnection._exec_command, connection.pipeline = saved  # type: ignore[method-assign]
