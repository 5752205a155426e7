"""Ports: what the application needs from the outside world, as protocols.

``infrastructure`` implements them (offline rules, OpenAI-compatible LLMs,
PostgreSQL); tests may pass their own. Every implementation names itself with a
stable id, recorded on each event it decided, so a replay knows who said what.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import attrs

from factledger.application.errors import ExtractionFailure, LLMUnavailable, MessageAlreadyRecorded, StoreBusy
from factledger.domain.values import Extraction, RelationVerdict, Turn

__all__ = [
    "Embedder", "ExtractionFailure", "Extractor", "LLMUnavailable", "MemoryReadModel", "MemoryRecord",
    "MessageAlreadyRecorded", "MessageIndex", "ReadModelUpdater", "RecallHit", "RelationJudge", "StoreBusy",
]


@runtime_checkable
class Extractor(Protocol):
    """Reads one user message and states the facts and preferences in it."""

    @property
    def extractor_id(self) -> str:
        """Stable id, e.g. ``offline-rules/1`` or ``openai:gpt-4o-mini/seed@ab12cd``."""
        ...

    def extract(
        self,
        message: str,
        context: Sequence[Turn] = (),
        known_facts: Sequence[str] = (),
    ) -> Extraction:
        """Facts (third person) and preferences stated in ``message``.

        ``context`` holds earlier turns, oldest first; ``known_facts`` the
        user's active facts, so an extractor can avoid restating them.
        Never raises on odd input: an empty ``Extraction`` means nothing found.
        """
        ...


@runtime_checkable
class RelationJudge(Protocol):
    """Decides how a new fact relates to a similar existing one."""

    @property
    def judge_id(self) -> str:
        ...

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        """duplicate / update / conflict / different, with the raw answer."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension."""

    @property
    def embedder_id(self) -> str:
        """Stable id; it keys the embedding cache, so change it when vectors change."""
        ...

    @property
    def dimension(self) -> int:
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order."""
        ...


@attrs.frozen
class MemoryRecord:
    """One row of the read model: a fact or a preference as last projected."""

    id: str
    user_id: str
    type: str  # "fact" | "preference"
    content: str
    category: str
    metadata: dict[str, Any]
    importance: float
    is_active: bool
    session_id: str | None
    created_at: datetime
    updated_at: datetime


@attrs.frozen
class RecallHit:
    """A memory found by ``recall``, with its cosine similarity to the query."""

    record: MemoryRecord
    similarity: float


class MemoryReadModel(Protocol):
    """The projected read model the queries use."""

    def items(self, user_id: str, type: str, limit: int) -> list[MemoryRecord]:
        """Active items of one type, most important first."""
        ...

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]:
        """Every item, active or not, of one user (or all users)."""
        ...

    def search(
        self,
        user_id: str,
        vector: Sequence[float],
        types: Sequence[str],
        top_k: int,
        min_similarity: float,
    ) -> list[RecallHit]:
        """Active items closest to ``vector``, best first."""
        ...


class ReadModelUpdater(Protocol):
    """Brings the read model up to the head of the event log."""

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project every pending event; return how many were processed."""
        ...

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project every event again into a new read model and swap it in when complete."""
        ...

    def status(self) -> Any:
        """Position of the read model against the head of the log."""
        ...

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        """Events the read model could not store, with their errors."""
        ...

    def follow(
        self, stop: threading.Event, poll_interval: float = 1.0, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Catch up whenever events arrive, until ``stop`` is set."""
        ...


@runtime_checkable
class MessageIndex(Protocol):
    """A store that remembers every message id of every user (not only a recent window)."""

    def has_message(self, originator_id: Any, message_id: str) -> bool:
        ...
