"""The ``memories`` view in process memory: for fast tests, and for trying factledger without a database.

Same contract as the PostgreSQL view (one contract test suite runs against
both): rows and position change together under a lock, an event that cannot
be applied is quarantined, a rebuild swaps in a complete new copy.
"""

from __future__ import annotations

import threading
import time
from collections import ChainMap
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import numpy as np

from factledger.application.errors import EmbedderMismatch, RebuildRunning
from factledger.application.lexical import bm25, term_counts
from factledger.application.ports import LexicalHit, MemoryRecord, RecallHit, RecallQuery, Vector, fused_recall
from factledger.projections.rows import EMBEDDED_TYPES, ItemAdded, ItemChanged, RowChange, UserNamed
from factledger.projections.view import Entry


class ViewState:
    """What one ledger's read model holds; shared by every service opened on that ledger."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.rebuild = threading.Lock()
        self.embedder_id: str | None = None
        self.rows: dict[str, dict[str, Any]] = {}
        self.users: dict[Any, str] = {}
        self.quarantine: dict[int, dict[str, Any]] = {}
        self.position = 0
        # A forgotten memory -> the log's head when it was forgotten: its events
        # up to there, read before the forget, are not applied after it.
        self.forgotten: dict[Any, int] = {}

    def forget(self, originator_id: Any, user_id: str, head: int) -> int:
        """Remove the user's rows, name and quarantined events; return how many rows."""
        with self.lock:
            doomed = [key for key, row in self.rows.items() if row["user_id"] == user_id]
            for key in doomed:
                del self.rows[key]
            self.users.pop(originator_id, None)
            self.quarantine = {k: q for k, q in self.quarantine.items() if q["originator_id"] != originator_id}
            self.forgotten[originator_id] = head
            return len(doomed)


class InMemoryMemoryView:
    """Rows, user names, quarantine and position in dicts (a ``ViewState``)."""

    def __init__(self, state: ViewState | None = None, *, embedder_id: str, dimension: int) -> None:
        self.state = state or ViewState()
        self.embedder_id = embedder_id
        self.dimension = dimension

    def claim(self, check_embedder: bool = True) -> None:
        """Like the database view's table creation: the first embedder claims the rows."""
        with self.state.lock:
            if self.state.embedder_id is None:
                self.state.embedder_id = self.embedder_id
            elif check_embedder and self.state.embedder_id != self.embedder_id:
                raise EmbedderMismatch(
                    f"the read model holds vectors from embedder {self.state.embedder_id!r} but the active "
                    f"embedder is {self.embedder_id!r}; run `factledger projection rebuild` to re-embed it"
                )

    @property
    def _lock(self) -> threading.RLock:
        return self.state.lock

    # ---- writes -----------------------------------------------------------------------

    def position(self) -> int:
        with self._lock:
            return self.state.position

    def apply_with_tracking(
        self,
        entries: Sequence[Entry],
        vectors: Mapping[str, Vector],
        expected: int,
        on_erased: Callable[[Sequence[Entry]], None] | None = None,
    ) -> bool:
        erased: list[Entry] = []
        with self._lock:
            if self.state.position != expected:
                return False
            for entry in entries:
                if entry.position <= self.state.forgotten.get(entry.originator_id, 0):
                    erased.append(entry)
                    continue
                # Writes go to the first map: an event that fails leaves the rows untouched.
                rows, users = ChainMap({}, self.state.rows), ChainMap({}, self.state.users)
                try:
                    if isinstance(entry.changes, Exception):
                        raise entry.changes
                    for change in entry.changes:
                        self._apply(change, vectors, rows, users)
                except Exception as exc:
                    self.state.quarantine[entry.position] = {
                        "notification_id": entry.position,
                        "originator_id": entry.originator_id,
                        "topic": entry.topic,
                        "error": f"{type(exc).__name__}: {exc}",
                        "quarantined_at": datetime.now(UTC),
                    }
                else:
                    self.state.rows.update(rows.maps[0])
                    self.state.users.update(users.maps[0])
            self.state.position = entries[-1].position
        if erased and on_erased is not None:
            on_erased(erased)
        return True

    @staticmethod
    def _apply(
        change: RowChange,
        vectors: Mapping[str, Vector],
        rows: MutableMapping[str, dict[str, Any]],
        users: MutableMapping[Any, str],
    ) -> None:
        if isinstance(change, UserNamed):
            users.setdefault(change.originator_id, change.user_id)
        elif isinstance(change, ItemAdded):
            if change.originator_id not in users:
                raise LookupError(f"no Started event projected for memory {change.originator_id}")
            if change.id in rows:
                raise KeyError(f"a row {change.id} exists already")
            rows[change.id] = {
                "id": change.id,
                "user_id": users[change.originator_id],
                "type": change.type,
                "content": change.content,
                "category": change.category,
                "metadata": dict(change.metadata),
                "importance": change.importance,
                "is_active": True,
                "session_id": change.session_id,
                "created_at": change.at,
                "updated_at": change.at,
                "embedding": (
                    np.asarray(vectors[change.content], dtype=np.float32)
                    if change.type in EMBEDDED_TYPES
                    else None  # a message: found by its words (ADR 0030)
                ),
                "terms": term_counts(change.indexed_text),
            }
        elif isinstance(change, ItemChanged) and change.id in rows:
            row = dict(rows[change.id])
            row["metadata"] = {**row["metadata"], **change.metadata}
            if change.importance is not None:
                row["importance"] = change.importance
            if change.is_active is not None:
                row["is_active"] = change.is_active
            row["updated_at"] = max(row["updated_at"], change.at)
            rows[change.id] = row

    def quarantined(self, limit: int = 100) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(q) for _, q in sorted(self.state.quarantine.items())[:limit]]

    def quarantine_count(self) -> int:
        with self._lock:
            return len(self.state.quarantine)

    @contextmanager
    def rebuilding(self) -> Iterator[InMemoryMemoryView]:
        if not self.state.rebuild.acquire(blocking=False):
            raise RebuildRunning("another rebuild of this read model is running")
        try:
            fresh = InMemoryMemoryView(embedder_id=self.embedder_id, dimension=self.dimension)
            yield fresh
            with self._lock:
                self.state.rows, self.state.users = fresh.state.rows, fresh.state.users
                self.state.quarantine, self.state.position = fresh.state.quarantine, fresh.state.position
                self.state.embedder_id = self.embedder_id
        finally:
            self.state.rebuild.release()

    @contextmanager
    def listening(self) -> Iterator[Callable[[float], None]]:
        yield time.sleep  # nothing announces events in memory: poll

    # ---- reads --------------------------------------------------------------------------

    @staticmethod
    def _record(row: dict[str, Any]) -> MemoryRecord:
        return MemoryRecord(**{k: v for k, v in row.items() if k not in ("embedding", "terms")})

    def page(self, user_id: str, type: str, limit: int, offset: int = 0) -> tuple[list[MemoryRecord], int]:
        with self._lock:
            rows = [
                r for r in self.state.rows.values() if r["user_id"] == user_id and r["type"] == type and r["is_active"]
            ]
        rows.sort(key=lambda r: (-r["importance"], r["created_at"], r["id"]))
        return [self._record(r) for r in rows[offset : offset + limit]], len(rows)

    def all_items(self, user_id: str | None = None) -> list[MemoryRecord]:
        with self._lock:
            rows = [
                r
                for r in self.state.rows.values()
                if (user_id is None or r["user_id"] == user_id) and r["type"] != "message"
            ]
        return [self._record(r) for r in sorted(rows, key=lambda r: (r["user_id"], r["id"]))]

    def search(
        self, user_id: str, vector: Vector, types: Sequence[str], top_k: int, min_similarity: float
    ) -> list[RecallHit]:
        with self._lock:
            rows = [
                r
                for r in self.state.rows.values()
                if r["user_id"] == user_id and r["type"] in types and r["is_active"] and r["embedding"] is not None
            ]
        if not rows:
            return []
        query = np.asarray(vector, dtype=np.float64)
        matrix = np.stack([r["embedding"] for r in rows]).astype(np.float64)
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
        similarity = (matrix @ query) / np.where(norms == 0, 1.0, norms)
        ranked = sorted(zip(similarity, rows, strict=False), key=lambda pair: (-pair[0], pair[1]["id"]))[:top_k]
        return [
            RecallHit(self._record(row), round(float(score), 6))
            for score, row in ranked
            if round(float(score), 6) >= min_similarity
        ]

    def search_words(
        self, user_id: str, terms: Sequence[str], types: Sequence[str], top_k: int, vector: Vector | None = None
    ) -> list[LexicalHit]:
        """BM25 over the user's active rows of ``types`` (the PostgreSQL view's SQL, in Python)."""
        with self._lock:
            rows = [
                r for r in self.state.rows.values() if r["user_id"] == user_id and r["type"] in types and r["is_active"]
            ]
        if not rows or not terms:
            return []
        average = sum(r["terms"][1] for r in rows) / len(rows)
        matching = {r["id"]: r for r in rows if any(t in r["terms"][0] for t in terms)}
        scores = bm25(
            terms, {k: r["terms"] for k, r in matching.items()}, corpus_size=len(rows), average_length=average
        )
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:top_k]
        return [
            LexicalHit(self._record(matching[k]), score, _cosine(matching[k]["embedding"], vector))
            for k, score in ranked
        ]

    def recall(self, query: RecallQuery) -> list[RecallHit]:
        return fused_recall(self, query)

    def all_rows(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = sorted(self.state.rows.values(), key=lambda r: r["id"])
        return [
            {
                **{k: v for k, v in r.items() if k != "terms"},
                "embedding": None if r["embedding"] is None else tuple(float(x) for x in r["embedding"]),
                "terms_count": r["terms"][1],
            }
            for r in rows
        ]


def _cosine(embedding: Any, vector: Vector | None) -> float | None:
    if embedding is None or vector is None:
        return None
    query = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(embedding) * np.linalg.norm(query))
    return round(float(np.dot(embedding.astype(np.float64), query)) / norm, 6) if norm else 0.0
