"""``AsyncLedger``: a ``Ledger`` for asyncio backends, never blocking their event loop.

It offers the ``Ledger`` protocol's calls as coroutines, with the same signatures
(``tests/test_ledger_protocol.py``), over a ``LedgerService`` or a ``PartitionedLedger``.
Each call runs the synchronous ledger in a worker thread (``asyncio.to_thread``),
so a slow database or LLM call holds a thread, not the loop. The service is
thread-safe: concurrent calls for one user are serialised by its optimistic
writes (a conflicting save re-decides), never interleaved half-way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from factledger.application.decisions import Outcome
from factledger.application.errors import FactledgerError
from factledger.application.ingestion import Incoming
from factledger.application.ledger_protocol import Ledger
from factledger.application.ports import RecallHit, Tombstone
from factledger.application.results import Explanation, HistoryPage, IngestResult, MemoryContext, Profile
from factledger.domain.kinds import Clock, HistoryKind


class AsyncLedger:
    """The ``Ledger`` calls, awaitable (``close`` is ``aclose``). ``AsyncLedger(open_ledger())``."""

    def __init__(self, service: Ledger) -> None:
        self.service = service

    async def ingest(
        self,
        user_id: str,
        message: str,
        session_id: str | None = None,
        context: Sequence[Any] | None = None,
        *,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> IngestResult:
        """See ``LedgerService.ingest``."""
        return await asyncio.to_thread(
            self.service.ingest, user_id, message, session_id, context, message_id=message_id, timestamp=timestamp
        )

    async def ingest_many(self, messages: Sequence[Incoming]) -> list[IngestResult | FactledgerError]:
        """See ``LedgerService.ingest_many``."""
        return await asyncio.to_thread(self.service.ingest_many, messages)

    async def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """See ``LedgerService.retry_failed`` (``progress`` is called from the worker thread)."""
        return await asyncio.to_thread(self.service.retry_failed, user_id, progress)

    async def knows(self, user_id: str) -> bool:
        return await asyncio.to_thread(self.service.knows, user_id)

    async def profile(
        self,
        user_id: str,
        as_of: datetime | None = None,
        clock: Clock = "said",
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Profile:
        """See ``LedgerService.profile``: one page, ``limit`` and ``offset``."""
        return await asyncio.to_thread(self.service.profile, user_id, as_of, clock, limit=limit, offset=offset)

    async def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float | None = None,
    ) -> list[RecallHit]:
        return await asyncio.to_thread(self.service.recall, user_id, query, types, top_k, min_similarity)

    async def memory_context(self, user_id: str, query: str, top_k: int = 5, language: str = "auto") -> MemoryContext:
        """See ``LedgerService.memory_context``: ``.text`` is a system-prompt block."""
        return await asyncio.to_thread(self.service.memory_context, user_id, query, top_k, language)

    async def why(self, user_id: str, item_id: str) -> Explanation:
        return await asyncio.to_thread(self.service.why, user_id, item_id)

    async def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: HistoryKind | None = None,
        *,
        offset: int = 0,
        limit: int | None = None,
        clock: Clock = "said",
    ) -> HistoryPage:
        return await asyncio.to_thread(
            self.service.history, user_id, since, until, kind, offset=offset, limit=limit, clock=clock
        )

    async def invalidate(
        self, user_id: str, fact_id: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> str:
        return await asyncio.to_thread(self.service.invalidate, user_id, fact_id, reason, actor, at)

    async def restate(
        self,
        user_id: str,
        text: str,
        category: str = "other",
        actor: str | None = None,
        confidence: float = 1.0,
        at: datetime | None = None,
    ) -> Outcome:
        return await asyncio.to_thread(self.service.restate, user_id, text, category, actor, confidence, at)

    async def forget(self, user_id: str, actor: str = "operator") -> Tombstone:
        return await asyncio.to_thread(self.service.forget, user_id, actor)

    async def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        return await asyncio.to_thread(self.service.tombstones, user_id)

    async def export(self, user_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self.service.export, user_id)

    async def aclose(self) -> None:
        await asyncio.to_thread(self.service.close)

    async def __aenter__(self) -> AsyncLedger:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
