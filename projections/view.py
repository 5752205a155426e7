"""What a ``memories`` view offers the projector, whatever stores it (PostgreSQL, memory).

A view is the read model (``MemoryReadModel``: items, search, rows) plus its
write side in the style of the eventsourcing library's tracking recorders:
``apply_with_tracking`` writes a batch of row changes and the position they
bring the view to, together, exactly once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol
from uuid import UUID

import attrs

from factledger.application.ports import MemoryRecord, RecallHit, Vector
from factledger.projections.rows import RowChange


@attrs.frozen
class Entry:
    """One event of a batch: its position and the row changes it makes, or why it cannot be read."""

    position: int
    originator_id: UUID
    topic: str
    changes: Sequence[RowChange] | Exception


@attrs.frozen
class SaveProjection:
    """A save's own rows and the view's new position, written by the save's own statement
    (ADR 0044): data-modifying CTEs (each ``name AS (…)``; they read the save's events from its
    CTE ``inserted``), their parameters in order, an SQL expression answering whether they
    wrote, and what to do once that answer and the events' positions are known."""

    ctes: Sequence[Any]
    parameters: Sequence[Any]
    projected: Any
    done: Callable[[bool, Sequence[int]], None]


class MemoryView(Protocol):
    """The ``memories`` read model, written by ``Projector``."""

    embedder_id: str
    dimension: int

    # ---- reads (MemoryReadModel) ----

    def page(self, user_id: str, type: str, limit: int, offset: int = 0) -> tuple[list[MemoryRecord], int]: ...

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]: ...

    def search(
        self, user_id: str, vector: Vector, types: Sequence[str], top_k: int, min_similarity: float
    ) -> list[RecallHit]: ...

    def all_rows(self) -> list[dict[str, Any]]: ...

    # ---- writes ----

    def position(self) -> int:
        """The position of the last event applied."""
        ...

    def apply_with_tracking(
        self,
        entries: Sequence[Entry],
        vectors: Mapping[str, Vector],
        expected: int,
        on_erased: Callable[[Sequence[Entry]], None] | None = None,
    ) -> bool:
        """If the view is still at ``expected``, apply ``entries`` and move to the last one's
        position, all together; an entry that cannot be applied is quarantined, the others
        are. False (and nothing written) when another projector moved the view meanwhile.

        Entries whose events were erased since they were read (their user was
        forgotten meanwhile) are skipped and, once the batch is written, handed
        to ``on_erased``: the projector drops the vectors it made for them."""
        ...

    def quarantine_count(self) -> int: ...

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]: ...

    def rebuilding(self) -> AbstractContextManager[MemoryView]:
        """An empty view to build; when the block ends normally it replaces this one
        atomically, otherwise it is discarded and this one serves unchanged."""
        ...

    def listening(self) -> AbstractContextManager[Callable[[float], None]]:
        """A function that waits up to its timeout for new events to be announced."""
        ...
