"""Ports: what the application needs from the outside world, as protocols.

``infrastructure`` implements them (offline rules, OpenAI-compatible LLMs,
PostgreSQL); tests may pass their own. Every implementation names itself with a
stable id, recorded on each event it decided, so a replay knows who said what.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from factledger.domain.values import Extraction, RelationVerdict, Turn


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
