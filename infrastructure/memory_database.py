"""What the in-memory backend has instead of a database server: one object that holds its data.

A ``Settings`` carries one (``memory_database``) as it carries a ``database_url`` for PostgreSQL:
every ``open_ledger`` of those settings, or of settings evolved from them (a tenant's, a named
ledger's), sees the same ledgers and keys; settings made apart (``Settings(...)`` twice,
``Settings.load()`` in another command) start empty. Nothing is shared through the module: a
test, a server or a script owns its data by owning its settings.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class InMemoryDatabase:
    """The in-memory 'server': its ledger stores and key stores, each by (home, schema)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str, str], Any] = {}

    def held(self, kind: str, home: str, schema: str, make: Callable[[], T]) -> T:
        """The ``kind`` of data (``ledgers``, ``keys``) of an installation, made on first use."""
        key = (kind, home, schema)
        with self._lock:
            if key not in self._held:
                self._held[key] = make()
            found: T = self._held[key]
            return found

    def __reduce__(self) -> tuple[type[InMemoryDatabase], tuple[()]]:
        # Settings sent to another process (spawned workers) arrive with an empty database there:
        # in-memory data never leaves its process.
        return (InMemoryDatabase, ())

    def __repr__(self) -> str:
        return f"<InMemoryDatabase holding {len(self._held)}>"
