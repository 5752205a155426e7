"""``Ledger``: the calls every ledger a caller holds answers, with one signature.

``LedgerService`` (one ledger) and ``PartitionedLedger`` (users spread over
several) both implement it, and ``AsyncLedger`` offers the same calls as
coroutines; ``tests/test_ledger_protocol.py`` fails when one of them drifts
(a parameter's name, kind, default or type). Code that only reads and writes
users' memories takes a ``Ledger`` and works on either.

Calls about the whole store (``ledgers``, ``replay``, ``diff``, the read
model's ``catch_up`` …) are not part of it: a partitioned ledger answers them
once per partition (``{partition: answer}``), with the same parameters.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, Self

if TYPE_CHECKING:
    from factledger.application.errors import FactledgerError
    from factledger.application.ingestion import Incoming
    from factledger.application.outcomes import Outcome
    from factledger.application.ports import RecallHit, Tombstone
    from factledger.application.results import Explanation, HistoryPage, IngestResult, MemoryContext, Profile
    from factledger.domain.kinds import Clock, HistoryKind

__all__ = ["Ledger"]


class Ledger(Protocol):
    """Per-user memory: write messages and corrections, read it back, forget it.

    A user nothing was ever recorded for is not an error on a read: ``profile``
    answers ``known=False``, ``history`` an empty page with ``known=False``,
    ``recall`` nothing (ADR 0036). An item id the user does not have is
    ``NotFound`` (``why``, ``invalidate``), and so is ``export`` of nobody.
    """

    # ---- writing ---------------------------------------------------------------------------

    def ingest(
        self,
        user_id: str,
        message: str,
        session_id: str | None = None,
        context: Sequence[Any] | None = None,
        *,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> IngestResult:
        """Extract facts and preferences from one user message and record them (all or nothing)."""
        ...

    def ingest_many(self, messages: Sequence[Incoming]) -> list[IngestResult | FactledgerError]:
        """Many messages, in order; one outcome each (its result, or the error that kept it out)."""
        ...

    def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """Extract again every message whose extraction failed (all users, or one)."""
        ...

    def invalidate(
        self, user_id: str, fact_id: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> str:
        """An operator marks a fact wrong (a unique prefix will do); returns its full id."""
        ...

    def restate(
        self,
        user_id: str,
        text: str,
        category: str = "other",
        actor: str | None = None,
        confidence: float = 1.0,
        at: datetime | None = None,
    ) -> Outcome:
        """An operator records a fact that nothing automatic will override."""
        ...

    # ---- reading ---------------------------------------------------------------------------

    def knows(self, user_id: str) -> bool:
        """Whether anything is recorded for the user."""
        ...

    def profile(
        self,
        user_id: str,
        as_of: datetime | None = None,
        clock: Clock = "said",
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Profile:
        """A page of the active facts and preferences, most important first (``known``: ever recorded)."""
        ...

    def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float | None = None,
    ) -> list[RecallHit]:
        """The memories and messages that bear on ``query``, best first."""
        ...

    def memory_context(self, user_id: str, query: str, top_k: int = 5, language: str = "auto") -> MemoryContext:
        """The profile and the items relevant to ``query``; ``.text`` is a system-prompt block."""
        ...

    def why(self, user_id: str, item_id: str) -> Explanation:
        """The whole life of a fact or preference (a unique prefix will do)."""
        ...

    def history(
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
        """The user's events in recorded order, optionally filtered and paged."""
        ...

    # ---- a person's rights -----------------------------------------------------------------

    def export(self, user_id: str) -> dict[str, Any]:
        """The user's whole memory as JSON-ready data (for an access request)."""
        ...

    def forget(self, user_id: str, actor: str = "operator") -> Tombstone:
        """Remove every trace of the user's words; the returned tombstone holds no personal data."""
        ...

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        """Recorded forgets, newest first; with ``user_id``, whether (and when) it was forgotten."""
        ...

    # ---- lifetime --------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connections."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
