"""Ports: everything the application needs from the outside world, as protocols.

``infrastructure`` implements them twice: on PostgreSQL (and an LLM endpoint
or the offline rules), and in memory for fast tests (``open_ledger(backend=
"memory")``); one contract test suite runs against both. Every implementation
of a deciding part names itself with a stable id, recorded on each event it
decided, so a replay knows who said what.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from uuid import UUID

import attrs
import numpy as np
from numpy.typing import NDArray

from factledger.application.errors import ExtractionFailure, LLMUnavailable, MessageAlreadyRecorded, StoreBusy
from factledger.application.json_values import iso, json_ready
from factledger.application.lexical import fuse
from factledger.domain.values import Extraction, RelationVerdict, Turn

if TYPE_CHECKING:
    from eventsourcing.persistence import StoredEvent

    from factledger.application.service import LedgerService

# A vector: a list of floats, or a numpy array (the embedding cache hands out float32 arrays).
Vector = Sequence[float] | NDArray[np.floating[Any]]

__all__ = [
    "ComparesKnownFacts",
    "CostEstimator",
    "Embedder",
    "Eraser",
    "ExtractionFailure",
    "Extractor",
    "HearsWhenSaid",
    "LLMUnavailable",
    "LedgerDirectory",
    "LedgerInfo",
    "MemoryReadModel",
    "MemoryRecord",
    "MessageAlreadyRecorded",
    "MessageIndex",
    "NamesReplacedFacts",
    "ProjectionStatus",
    "ReadModelUpdater",
    "RecallHit",
    "RelationJudge",
    "StoreBusy",
    "StreamsReader",
    "Tombstone",
    "UsageReport",
    "Vector",
]


# ---- deciding -----------------------------------------------------------------------------


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
        user's active facts, so an extractor can avoid restating them. Raises
        ``ExtractionFailure`` (or ``LLMUnavailable``) when it cannot answer;
        never on odd input: an empty ``Extraction`` means nothing found.
        """
        ...


@runtime_checkable
class CostEstimator(Protocol):
    """An extractor that calls a paid model says what a message would cost (replay estimates)."""

    def estimate_cost(
        self, message: str, context: Sequence[Turn] = (), said_at: datetime | None = None
    ) -> tuple[int, int]:
        """(calls, input tokens) extracting ``message`` (said at ``said_at``) would cost at most."""
        ...


@runtime_checkable
class ReadsKnownPreferences(Protocol):
    """An extractor shown the user's known preferences with a message, which names in each new
    preference's ``replaces`` the known ones it replaces (a taste that changed)."""

    def extract_knowing_preferences(
        self,
        message: str,
        context: Sequence[Turn],
        known_facts: Sequence[str],
        known_preferences: Sequence[str],
    ) -> Extraction:
        """As ``Extractor.extract``, shown ``known_preferences`` (the user's, oldest first) too."""
        ...


@runtime_checkable
class HearsWhenSaid(Protocol):
    """An extractor told when a message was said, so that relative time in it ("last week", 上个月)
    is written as the dates it means; a message said before others gets its own time (ADR 0025)."""

    def extract_said_at(
        self,
        message: str,
        context: Sequence[Turn],
        known_facts: Sequence[str],
        known_preferences: Sequence[str],
        said_at: datetime | None,
    ) -> Extraction:
        """As ``ReadsKnownPreferences.extract_knowing_preferences``, for a message said at ``said_at``
        (with the time zone it was recorded with; None: not known)."""
        ...


@runtime_checkable
class ComparesKnownFacts(Protocol):
    """An extractor whose answer is also the relation check for the known facts it was shown (ADR 0019).

    Each new fact's ``conflicts_with`` names the known fact it contradicts or
    corrects; a known fact it names for no new fact does not conflict with any.
    """

    def comparison_prompt_id(self, said: Extraction) -> str | None:
        """The id of the prompt that answered ``said`` so (with what was asked beside it, such as
        the memories' language), recorded on the verdicts it stands for; None when this
        extractor's answers do not (then a judge decides, as for any extractor)."""
        ...


@runtime_checkable
class NamesReplacedFacts(Protocol):
    """An extractor that reads a change in the message itself ("上礼拜入职顺丰了", "wait, wrong firm")
    and names the known fact it replaces in ``conflicts_with``, where a judge shown only the two
    facts may see nothing in common: its word stands where the judge finds them different; every
    other candidate is judged as for any extractor (ADR 0010, addendum 11)."""

    @property
    def names_replaced_facts(self) -> bool:
        """True when this extractor's ``conflicts_with`` is to be taken as a replacement."""
        ...


@runtime_checkable
class RelationJudge(Protocol):
    """Decides how a new fact relates to a similar existing one."""

    @property
    def judge_id(self) -> str: ...

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        """duplicate / update / conflict / different, with the raw answer."""
        ...


@runtime_checkable
class JudgesPreferences(Protocol):
    """A judge with its own check for preferences (the relation check speaks of facts only)."""

    def judge_preference(self, old_preference: str, new_text: str) -> RelationVerdict:
        """How ``new_text`` (a preference, or a fact that may say the taste changed) relates to
        ``old_preference``: duplicate / update / conflict / different."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors of a fixed dimension."""

    @property
    def embedder_id(self) -> str:
        """Stable id; it keys the embedding cache, so change it when vectors change."""
        ...

    @property
    def dimension(self) -> int: ...

    @property
    def recall_threshold(self) -> float:
        """The cosine similarity below which a recalled item is unrelated, for this embedder."""
        ...

    def embed(self, texts: Sequence[str]) -> Sequence[Vector]:
        """One L2-normalised vector per text, in order."""
        ...


# ---- the read model ---------------------------------------------------------------------


@attrs.frozen
class MemoryRecord:
    """One row of the read model: a fact or a preference as last projected."""

    id: str
    user_id: str
    type: str  # "fact" | "preference" | "message" (what the user said, as said)
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
    """An item found by ``recall``: its cosine similarity to the query (None for a message, which
    is found by its words and has no vector) and ``score``, the rank fusion that ordered it
    (ADR 0030; 0 when only one ranking was asked for)."""

    record: MemoryRecord
    similarity: float | None
    score: float = 0.0

    # The JSON's keys as attributes too (``hit.content`` as ``to_dict()["content"]``): a caller who
    # read the HTTP or MCP answer should not have to learn that the library nests them in ``record``.
    @property
    def id(self) -> str:
        return self.record.id

    @property
    def type(self) -> str:
        return self.record.type

    @property
    def content(self) -> str:
        return self.record.content

    @property
    def category(self) -> str:
        return self.record.category

    @property
    def importance(self) -> float:
        return self.record.importance

    @property
    def said_at(self) -> Any:
        """When a message was said (its ``metadata["said_at"]``); None for a fact or preference."""
        return self.record.metadata.get("said_at") if self.record.type == "message" else None

    @property
    def metadata(self) -> dict[str, Any]:
        return self.record.metadata

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "type": r.type,
            "content": r.content,
            "category": r.category,
            "similarity": self.similarity,
            "score": self.score,
            "importance": r.importance,
            "said_at": self.said_at,
            "metadata": json_ready(r.metadata),
        }


@attrs.frozen
class LexicalHit:
    """A row that shares words with the query: its BM25 score among the user's rows searched and,
    when it has a vector, its cosine similarity to the query's."""

    record: MemoryRecord
    score: float
    similarity: float | None


@attrs.frozen
class RecallQuery:
    """One ``recall`` as the read model runs it (ADR 0030): two rankings over exactly the user's
    active rows, fused by weighted reciprocal rank.

    By meaning: rows of ``embedded_types`` closest to ``vector`` (the first ``depth``, those at
    ``threshold`` or nearer). By words: rows of ``types`` with BM25 over ``terms`` (the first
    ``depth``; with ``strict``, only those at ``threshold`` or nearer in meaning). Each row's
    score: the sum over the rankings it is in of weight / (``rank_constant`` + its rank); the
    ``top_k`` best, then by id.
    """

    user_id: str
    vector: Vector | None
    terms: tuple[str, ...]
    types: tuple[str, ...]
    embedded_types: tuple[str, ...]
    top_k: int
    threshold: float
    strict: bool = False
    depth: int = 50
    meaning_weight: float = 0.25
    words_weight: float = 1.0
    rank_constant: int = 60


def fused_recall(read_model: MemoryReadModel, query: RecallQuery) -> list[RecallHit]:
    """``RecallQuery`` run as two searches and a fusion here: the in-memory view's recall, and the
    reference the PostgreSQL view's single statement is checked against."""
    q = query
    near: Sequence[RecallHit] = []
    if q.vector is not None and q.embedded_types:
        near = read_model.search(q.user_id, q.vector, q.embedded_types, q.depth, q.threshold)
    worded = read_model.search_words(q.user_id, q.terms, q.types, q.depth, q.vector)
    if q.strict:
        worded = [h for h in worded if h.similarity is not None and h.similarity >= q.threshold]
    records = {h.record.id: (h.record, h.similarity) for h in worded}
    records.update({h.record.id: (h.record, h.similarity) for h in near})
    rankings = [([h.record.id for h in near], q.meaning_weight), ([h.record.id for h in worded], q.words_weight)]
    fused = fuse(rankings, q.rank_constant)
    best = sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[: q.top_k]
    return [RecallHit(records[key][0], records[key][1], round(score, 6)) for key, score in best]


class MemoryReadModel(Protocol):
    """The projected read model the queries use."""

    def page(self, user_id: str, type: str, limit: int, offset: int = 0) -> tuple[list[MemoryRecord], int]:
        """Active items of one type, most important first (importance descending, then
        ``created_at``, then id): the ``limit`` from ``offset`` on, and how many there are
        in all (read together, so the two agree)."""
        ...

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]:
        """Every fact and preference, active or not, of one user (or all users), by user and id
        (messages are recall items only)."""
        ...

    def search(
        self,
        user_id: str,
        vector: Vector,
        types: Sequence[str],
        top_k: int,
        min_similarity: float,
    ) -> list[RecallHit]:
        """Active items closest to ``vector``, best first (rows without a vector: never)."""
        ...

    def search_words(
        self, user_id: str, terms: Sequence[str], types: Sequence[str], top_k: int, vector: Vector | None = None
    ) -> list[LexicalHit]:
        """Active items of ``types`` sharing a term with ``terms`` (``lexical.terms``), best BM25
        first (then id), over exactly the user's rows; each with its cosine to ``vector`` if given."""
        ...

    def recall(self, query: RecallQuery) -> list[RecallHit]:
        """``query`` run: the same hits, scores and order as ``fused_recall`` gives."""
        ...

    def all_rows(self) -> list[dict[str, Any]]:
        """Every row with every column (vectors as text), by id: to compare two builds."""
        ...


@attrs.frozen
class ProjectionStatus:
    """Where the read model stands against the head of the event log."""

    position: int
    head: int
    embedder_id: str
    quarantined: int = 0

    @property
    def lag(self) -> int:
        return max(0, self.head - self.position)

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "head": self.head,
            "lag": self.lag,
            "embedder_id": self.embedder_id,
            "quarantined": self.quarantined,
        }


class ReadModelUpdater(Protocol):
    """Brings the read model up to the head of the event log."""

    def catch_up(self, progress: Callable[[int, int], None] | None = None, most: int | None = None) -> int:
        """Project every pending event (``most``: stop after the batch that reaches it); return how many."""
        ...

    def catch_up_after_save(self) -> int:
        """``catch_up`` after a save of this thread, unless that save projected its events already."""
        ...

    def rebuild(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project every event again into a new read model and swap it in when complete."""
        ...

    def status(self) -> ProjectionStatus: ...

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        """Events the read model could not store, with their errors."""
        ...

    def follow(
        self, stop: threading.Event, poll_interval: float = 1.0, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Catch up whenever events arrive, until ``stop`` is set."""
        ...


# ---- the event store --------------------------------------------------------------------


@runtime_checkable
class MessageIndex(Protocol):
    """A store that remembers every message id of every user (not only a recent window)."""

    def has_message(self, originator_id: UUID, message_id: str) -> bool: ...

    def text_hash_of(self, originator_id: UUID, message_id: str) -> str | None:
        """The hash of the text recorded under the message id (None: not recorded, or recorded
        before hashes were kept)."""
        ...

    def recorded_among(self, pairs: Sequence[tuple[UUID, str]]) -> set[tuple[UUID, str]]:
        """Those of the (memory id, message id) pairs already recorded (one read for a batch)."""
        ...

    def text_hashes_among(self, pairs: Sequence[tuple[UUID, str]]) -> dict[tuple[UUID, str], str | None]:
        """Those of the pairs already recorded, each with the hash of its text (None: recorded
        before hashes were kept), in one read."""
        ...


@runtime_checkable
class StreamsReader(Protocol):
    """A store that reads the newest events of many memories in one statement."""

    def select_events_from(self, versions: Mapping[UUID, int]) -> dict[UUID, list[StoredEvent]]:
        """Each memory's events from the given version on, oldest first (none: not stored)."""
        ...


# ---- named ledgers, usage ---------------------------------------------------------------------


@attrs.frozen
class LedgerInfo:
    """One named ledger: where it lives, what filled it, how far a replay into it got."""

    name: str
    schema: str
    extractor_id: str | None
    source: str | None
    created_at: datetime
    replay_position: int
    replay_users: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "schema": self.schema,
            "extractor_id": self.extractor_id,
            "source": self.source,
            "created_at": iso(self.created_at),
            "replay_position": self.replay_position,
            "replay_users": list(self.replay_users) if self.replay_users is not None else None,
        }


class LedgerDirectory(Protocol):
    """Named ledgers in one store: what replay, diff and promote need."""

    def entries(self) -> list[LedgerInfo]: ...

    def event_count(self, name: str) -> int:
        """How many events the ledger holds."""
        ...

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None = None) -> LedgerInfo:
        """Register (or find) a ledger. Refuses to resume a ledger with another
        extractor or another user filter."""
        ...

    def set_position(self, name: str, position: int, share: tuple[int, int] | None = None) -> None:
        """Move the replay's position forward (never back); with ``share`` (index, count), that
        share's own, and the ledger's to the lowest of its ``count`` shares' once all have one."""
        ...

    def share_position(self, name: str, share: tuple[int, int]) -> int:
        """Where a replay of ``share`` resumes: its own position, or the ledger's if that is further."""
        ...

    def promote(self, name: str) -> str:
        """Make ``name`` live; return the new name of the previous live ledger."""
        ...

    def open(
        self,
        name: str,
        extractor: Extractor | None = None,
        judge: RelationJudge | None = None,
        inline_projection: bool = True,
    ) -> LedgerService: ...

    def extractor(self, name: str | None, rules: str | None = None, prompts: str | None = None) -> Extractor:
        """An extractor by name (``offline``, ``llm``) with an optional rules or prompts file."""
        ...


class UsageReport(Protocol):
    """What LLM and embedding calls cost, per message (the ``llm_calls`` log)."""

    def report(self, user_id: str | None = None) -> dict[str, Any]: ...

    def daily(self, days: int = 30) -> list[dict[str, Any]]:
        """Calls, tokens and failures per UTC day (``day``: an ISO date) of the last ``days``, oldest first."""
        ...

    def totals(self) -> dict[str, int]:
        """Calls, tokens, cache hits of the whole ledger (no per-message rows)."""
        ...

    def settle(self) -> None:
        """A message is done: store the readings its calls left waiting for a save that did not come."""
        ...


# ---- forgetting ----------------------------------------------------------------------------


@attrs.frozen
class Tombstone:
    """That a user was forgotten, and when, holding nothing about them.

    ``user_key`` is a keyed hash of the user id (the installation secret): it
    tells whether a given id was forgotten, and cannot be turned back into one.
    ``counts``: how many events, rows and cache entries each place lost.
    """

    user_key: str
    forgotten_at: datetime
    actor: str
    counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_key": self.user_key,
            "forgotten_at": self.forgotten_at.isoformat(),
            "actor": self.actor,
            "counts": dict(self.counts),
        }


class Eraser(Protocol):
    """Removes every trace of a user from every ledger of a store (ADR 0015)."""

    def forget(self, user_id: str, actor: str) -> Tombstone:
        """Delete the user's events, snapshots, message ids, read-model rows, cached vectors
        and LLM answers and calls, in every ledger, in one transaction; record a tombstone."""
        ...

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        """Every tombstone, newest first, or only those of ``user_id``."""
        ...
