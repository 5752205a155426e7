"""Which of a user's items are similar to a new one, at a cost that does not grow with history.

Deciding on a new fact compares it with every active fact of the user. The
vectors of those facts are kept between messages, per user and kind, in a
matrix that grows by appending (spare capacity, so no copy) and forgets a
retired item by marking its row dead (compacted once half the rows are dead).
One matrix product then scores them all; rows stay in the order the items
were added, which is the order of the user's items, so ties keep that order.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import NDArray

from factledger.application.ports import Embedder

#: bytes of vectors kept across users (least recently used users go first); a backend whose
#: active users hold more rebuilds a user's matrix on a miss, at a cost that grows with their
#: facts. 128 MiB keeps ~130,000 rows of the offline embedder's 256 dimensions (issue 24: a
#: 100,000-line import over 1,000 users), ~22,000 of 1,536.
BYTES_KEPT = 128 * 1024 * 1024


class _Rows:
    """One user's item vectors: a float32 buffer with spare capacity, and which rows are alive."""

    def __init__(self, dimension: int) -> None:
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.buffer: NDArray[np.float32] = np.empty((8, dimension), dtype=np.float32)
        self.alive: NDArray[np.bool_] = np.zeros(8, dtype=bool)
        self.dead = 0

    def sync(self, candidates: Sequence[tuple[str, str]], embed: Embedder) -> None:
        """Make the live rows exactly ``candidates`` (new ones appended, missing ones dead)."""
        wanted = {item_id for item_id, _ in candidates}
        for item_id in [i for i in self.row_of if i not in wanted]:
            self.alive[self.row_of.pop(item_id)] = False
            self.dead += 1
        new = [(item_id, text) for item_id, text in candidates if item_id not in self.row_of]
        if new:
            vectors = np.asarray(embed.embed([text for _, text in new]), dtype=np.float32)
            start = len(self.ids)
            self._reserve(start + len(new))
            self.buffer[start : start + len(new)] = vectors.reshape(len(new), -1)
            self.alive[start : start + len(new)] = True
            for offset, (item_id, _) in enumerate(new):
                self.ids.append(item_id)
                self.row_of[item_id] = start + offset
        if self.dead > len(self.row_of):
            self._compact()

    def _reserve(self, rows: int) -> None:
        if rows <= len(self.buffer):
            return
        capacity = max(rows, 2 * len(self.buffer))
        buffer = np.empty((capacity, self.buffer.shape[1]), dtype=np.float32)
        buffer[: len(self.ids)] = self.buffer[: len(self.ids)]
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self.ids)] = self.alive[: len(self.ids)]
        self.buffer, self.alive = buffer, alive

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[: len(self.ids)])
        self.ids = [self.ids[i] for i in keep]
        self.row_of = {item_id: row for row, item_id in enumerate(self.ids)}
        self.buffer[: len(keep)] = self.buffer[keep]
        self.alive[:] = False
        self.alive[: len(keep)] = True
        self.dead = 0


class CandidateIndex:
    """Scores a query against a user's current items, remembering their vectors between calls."""

    def __init__(self, embedder: Embedder, bytes_kept: int = BYTES_KEPT) -> None:
        self.embedder = embedder
        self.bytes_kept = bytes_kept
        self._rows: OrderedDict[Hashable, _Rows] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def ranked(self, key: Hashable, query: str, candidates: Sequence[tuple[str, str]]) -> list[tuple[float, str]]:
        """(similarity, id) of every candidate, most similar first; ties keep the candidates' order.

        ``candidates`` are (id, text) of the user's items now, in their order;
        ``key`` names the user and kind.
        """
        if not candidates:
            return []
        query_vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float64)
        with self._lock:  # a user's rows change in place: one decider thread at a time per index
            kept = self._rows.pop(key, None)
            before = 0 if kept is None else kept.buffer.nbytes
            rows = kept or _Rows(self.embedder.dimension)
            self._rows[key] = rows  # the most recently used, last
            rows.sync(candidates, self.embedder)
            self._bytes += rows.buffer.nbytes - before
            while self._bytes > self.bytes_kept and len(self._rows) > 1:
                self._bytes -= self._rows.popitem(last=False)[1].buffer.nbytes
            count = len(rows.ids)
            # float64 products of the float32 vectors: the same scores however many rows there are.
            scores = np.round(rows.buffer[:count].astype(np.float64) @ query_vector, 6)
            alive = rows.alive[:count]
            order = [i for i in np.argsort(-scores, kind="stable") if alive[i]]
            return [(float(scores[i]), rows.ids[i]) for i in order]

    def similar(
        self, key: Hashable, query: str, candidates: Sequence[tuple[str, str]], threshold: float, best: int
    ) -> list[tuple[float, str]]:
        """At most ``best`` of ``ranked``, those at or above ``threshold``."""
        return [pair for pair in self.ranked(key, query, candidates)[:best] if pair[0] >= threshold]
