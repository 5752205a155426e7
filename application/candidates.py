"""Which of a user's items are similar to a new one, at a cost that does not grow with history.

Deciding on a new fact compares it with every active fact of the user. The
vectors of those facts are kept between messages as one matrix per user
(and kind), so the next message reuses it: rows of facts still active are
kept, rows of new ones are added, and one matrix product scores them all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence

import attrs
import numpy as np

from factledger.application.ports import Embedder

# Users whose matrices are kept; a backend with more active users rebuilds on a miss.
USERS_KEPT = 64


@attrs.frozen
class _Matrix:
    ids: tuple[str, ...]
    rows: np.ndarray  # len(ids) × dimension, float64


class CandidateIndex:
    """Scores a query against a user's current items, remembering their vectors between calls."""

    def __init__(self, embedder: Embedder, users_kept: int = USERS_KEPT) -> None:
        self.embedder = embedder
        self.users_kept = users_kept
        self._matrices: OrderedDict[Hashable, _Matrix] = OrderedDict()
        self._lock = threading.Lock()

    def similar(
        self, key: Hashable, query: str, candidates: Sequence[tuple[str, str]], threshold: float, best: int
    ) -> list[tuple[float, str]]:
        """(similarity, id) of at most ``best`` candidates at or above ``threshold``, best first.

        ``candidates`` are (id, text) of the user's items now; ``key`` names the
        user and kind. Ties keep the candidates' order.
        """
        if not candidates:
            return []
        matrix = self._matrix(key, candidates)
        query_vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float64)
        scores = np.round(matrix.rows @ query_vector, 6)
        order = np.argsort(-scores, kind="stable")[:best]
        return [(float(scores[i]), matrix.ids[i]) for i in order if scores[i] >= threshold]

    def _matrix(self, key: Hashable, candidates: Sequence[tuple[str, str]]) -> _Matrix:
        ids = tuple(item_id for item_id, _ in candidates)
        with self._lock:
            known = self._matrices.get(key)
        if known is not None and known.ids == ids:
            return known
        if known is not None and ids[: len(known.ids)] == known.ids:
            # The common case: the user's last message added items, retired none.
            added = self._vectors([text for _, text in candidates[len(known.ids):]])
            matrix = _Matrix(ids, np.vstack([known.rows, added]))
        else:
            old_rows = {item_id: row for row, item_id in enumerate(known.ids)} if known is not None else {}
            rows = np.empty((len(ids), self.embedder.dimension), dtype=np.float64)
            kept = [(pos, old_rows[item_id]) for pos, item_id in enumerate(ids) if item_id in old_rows]
            if kept and known is not None:
                rows[[pos for pos, _ in kept]] = known.rows[[source for _, source in kept]]
            missing = [(pos, text) for pos, (item_id, text) in enumerate(candidates) if item_id not in old_rows]
            if missing:
                rows[[pos for pos, _ in missing]] = self._vectors([text for _, text in missing])
            matrix = _Matrix(ids, rows)
        with self._lock:
            self._matrices[key] = matrix
            self._matrices.move_to_end(key)
            while len(self._matrices) > self.users_kept:
                self._matrices.popitem(last=False)
        return matrix

    def _vectors(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed(texts), dtype=np.float64).reshape(len(texts), self.embedder.dimension)
