"""An ``Embedder`` that remembers: PostgreSQL table keyed by (embedder id, text hash).

Rebuilding the read model, or deciding on a user's facts again, recomputes no
vector it has seen. A small in-process map spares the round trip for hot texts.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Identifier

from factledger.application.ports import Embedder, Vector

MEMO_SIZE = 10_000


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def as_float32(vector: Vector) -> np.ndarray:
    """The float32 that pgvector stores, so fresh and cached vectors agree exactly.

    An array, not a list: deciding stacks a user's vectors into one matrix,
    and arrays stack without converting every float.
    """
    array = np.asarray(vector, dtype=np.float32)
    array.flags.writeable = False  # shared by every caller of the memo
    return array


def vector_literal(vector: Iterable[float]) -> str:
    """pgvector's text form; cast with ``%s::vector`` (ADR 0005: no global type registration)."""
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


class CachedEmbedder:
    """Wraps an embedder with the shared PostgreSQL embedding cache."""

    def __init__(
        self,
        inner: Embedder,
        datastore: PostgresDatastore | None,
        table: str = "embedding_cache",
        shared: dict[tuple[str, bytes], np.ndarray] | None = None,
    ):
        self.inner = inner
        # None: no database; ``shared`` (the in-memory backend's store) plays the table's part.
        self.datastore = datastore
        self.shared = shared if shared is not None else {}
        self._memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self.computed = 0
        if datastore is None:
            return
        self.table = Identifier(datastore.schema, table)
        with datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "embedder_id text NOT NULL, text_hash bytea NOT NULL, "
                    "embedding vector NOT NULL, PRIMARY KEY (embedder_id, text_hash))"
                ).format(self.table)
            )

    @property
    def embedder_id(self) -> str:
        return self.inner.embedder_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def recall_threshold(self) -> float:
        return self.inner.recall_threshold

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        key = self.embedder_id
        found: dict[str, np.ndarray] = {}
        for text in texts:
            if (key, text) in self._memo:
                self._memo.move_to_end((key, text))
                found[text] = self._memo[(key, text)]
        wanted = list(dict.fromkeys(t for t in texts if t not in found))
        if wanted:
            found.update(self._stored(wanted))
            missing = [t for t in wanted if t not in found]
            if missing:
                vectors = [as_float32(v) for v in self.inner.embed(missing)]
                self.computed += len(missing)
                self._store(dict(zip(missing, vectors, strict=True)))
                found.update(zip(missing, vectors, strict=True))
            for text in wanted:
                self._memo[(key, text)] = found[text]
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return [found[t] for t in texts]

    def _stored(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.datastore is None:
            hashes = {t: (self.embedder_id, text_hash(t)) for t in texts}
            return {t: self.shared[key] for t, key in hashes.items() if key in self.shared}
        by_hash = {text_hash(t): t for t in texts}
        with self.datastore.transaction(commit=False) as curs:
            curs.execute(
                SQL(
                    "SELECT text_hash, embedding::text AS v FROM {} WHERE embedder_id = %s AND text_hash = ANY(%s)"
                ).format(self.table),
                (self.embedder_id, list(by_hash)),
            )
            return {by_hash[bytes(row["text_hash"])]: as_float32(json.loads(row["v"])) for row in curs.fetchall()}

    def _store(self, vectors: dict[str, np.ndarray]) -> None:
        if self.datastore is None:
            self.shared.update({(self.embedder_id, text_hash(t)): v for t, v in vectors.items()})
            return
        with self.datastore.transaction(commit=True) as curs:
            for text, vector in vectors.items():
                curs.execute(
                    SQL(
                        "INSERT INTO {} (embedder_id, text_hash, embedding) VALUES (%s, %s, %s::vector) "
                        "ON CONFLICT DO NOTHING"
                    ).format(self.table),
                    (self.embedder_id, text_hash(text), vector_literal(vector)),
                )
