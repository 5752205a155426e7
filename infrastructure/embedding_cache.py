"""An ``Embedder`` that remembers: PostgreSQL table keyed by (embedder id, text hash).

Rebuilding the read model, or deciding on a user's facts again, recomputes no
vector it has seen. A small in-process map spares the round trip for hot texts.

The hash is an HMAC under the installation secret (a plain digest of a short
text such as a phone number is reversible by trying them all), and a second
table names the users each text was embedded for, so forgetting a user finds
every vector made from their words, recall queries included.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any

import attrs
import numpy as np
from eventsourcing.postgres import PostgresDatastore
from psycopg.sql import SQL, Composed, Identifier

from factledger.application.calls import current_call, saved_elsewhere
from factledger.application.ports import Embedder
from factledger.domain.memory import user_memory_id
from factledger.infrastructure.secret import InstallationSecret
from factledger.projections.vector_codec import BinaryVector, as_float32, bind_binary_vectors, vector_from_binary

MEMO_SIZE = 10_000
# users whose deferred vectors one thread holds for a save (a bulk group has at most 64)
MAX_DEFERRED_USERS = 256
HASH_PURPOSE = "embedding-text"
TABLE = "embedding_cache_v2"
OWNERS_TABLE = "embedding_cache_users"
# Version 1 keyed vectors by a plain sha256 of the text: dropped, not migrated.
UNKEYED_TABLE = "embedding_cache"

CacheKey = tuple[str, bytes]  # (embedder id, keyed text hash)


@attrs.define
class SharedEmbeddings:
    """The in-memory backend's stand-in for the two tables."""

    vectors: dict[CacheKey, np.ndarray] = attrs.Factory(dict)
    owners: dict[str, set[CacheKey]] = attrs.Factory(dict)

    def forget(self, user_id: str) -> int:
        keys = self.owners.pop(user_id, set())
        for key in keys:
            self.vectors.pop(key, None)
        return len(keys)


class CachedEmbedder:
    """Wraps an embedder with the shared PostgreSQL embedding cache."""

    def __init__(
        self,
        inner: Embedder,
        datastore: PostgresDatastore | None,
        secret: InstallationSecret,
        shared: SharedEmbeddings | None = None,
    ):
        self.inner = inner
        # None: no database; ``shared`` (the in-memory backend's store) plays the tables' part.
        self.datastore = datastore
        self.secret = secret
        self.shared = shared if shared is not None else SharedEmbeddings()
        self._memo: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._memo_lock = threading.Lock()
        # (user, key) pairs this process has written to the owners table already.
        self._owned: set[tuple[str, CacheKey]] = set()
        self.computed = 0
        # When set (``write_within_save`` is a save hook): what deciding embeds is written in the
        # save's transaction instead of two of its own (per thread, for the decision being made).
        self.defer_writes = False
        self._deferred = threading.local()
        if datastore is None:
            return
        self.table = Identifier(datastore.schema, TABLE)
        self.owners = Identifier(datastore.schema, OWNERS_TABLE)
        with datastore.transaction(commit=True) as curs:
            curs.execute(SQL("DROP TABLE IF EXISTS {}").format(Identifier(datastore.schema, UNKEYED_TABLE)))
            curs.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} ("
                    "embedder_id text NOT NULL, text_hash bytea NOT NULL, "
                    "embedding vector NOT NULL, PRIMARY KEY (embedder_id, text_hash))"
                ).format(self.table)
            )
            curs.execute(
                SQL(
                    "CREATE TABLE IF NOT EXISTS {} (user_id text NOT NULL, embedder_id text NOT NULL, "
                    "text_hash bytea NOT NULL, PRIMARY KEY (user_id, embedder_id, text_hash))"
                ).format(self.owners)
            )

    def text_hash(self, text: str) -> bytes:
        return self.secret.digest(HASH_PURPOSE, text)

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
        with self._memo_lock:  # threads share the memo (HTTP requests, a bulk import's workers)
            for text in texts:
                vector = self._memo.get((key, text))
                if vector is not None:
                    self._memo.move_to_end((key, text))
                    found[text] = vector
        wanted = list(dict.fromkeys(t for t in texts if t not in found))
        if wanted:
            if self._pending() is None or not getattr(self.inner, "computed_locally", False):
                found.update(self._stored(wanted))
            missing = [t for t in wanted if t not in found]
            if missing:
                vectors = [as_float32(v) for v in self.inner.embed(missing)]
                self.computed += len(missing)
                self._store(dict(zip(missing, vectors, strict=True)))
                found.update(zip(missing, vectors, strict=True))
            with self._memo_lock:
                for text in wanted:
                    self._memo[(key, text)] = found[text]
                while len(self._memo) > MEMO_SIZE:
                    self._memo.popitem(last=False)
        self._own(texts)
        return [found[t] for t in texts]

    def embed_query(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Vectors of texts asked about, not kept (a recall query): an embedder that computes here
        computes them again, cheaper than the two round trips of looking them up and recording
        them with their user (nothing of the user's words is stored then); any other goes through
        the cache as ``embed`` does."""
        if getattr(self.inner, "computed_locally", False):
            return [as_float32(v) for v in self.inner.embed(texts)]
        return self.embed(texts)

    def remembered(self, texts: Sequence[str]) -> dict[str, np.ndarray] | None:
        """The vectors of ``texts`` this process holds already, or None if any is missing
        (never a round trip or a call: for work done while holding a lock)."""
        key = self.embedder_id
        found = {}
        for text in texts:
            vector = self._memo.get((key, text))
            if vector is None:
                return None
            found[text] = vector
        return found

    def forget_texts(self, texts: Iterable[str]) -> None:
        """Drop these texts' vectors (a forgotten user's, met after the forget)."""
        dropped = set(texts)
        hashes = [self.text_hash(t) for t in dropped]
        with self._memo_lock:
            self._memo = OrderedDict((k, v) for k, v in self._memo.items() if k[1] not in dropped)
        if self.datastore is None:
            for digest in hashes:
                self.shared.vectors.pop((self.embedder_id, digest), None)
            return
        with self.datastore.transaction(commit=True) as curs:
            curs.execute(
                SQL("DELETE FROM {} WHERE embedder_id = %s AND text_hash = ANY(%s)").format(self.table),
                (self.embedder_id, hashes),
            )

    def _pending(self) -> tuple[dict[bytes, np.ndarray], set[tuple[str, bytes]]] | None:
        """The vectors and owners waiting for this thread's save, when deciding defers them: per
        user, since a bulk import's save takes many users' decisions (ADR 0022).

        A decision that never saved (nothing to write, a conflict decided again) leaves its
        pending rows behind: the next save of that user takes them, any other save drops them
        (the memo still has the vectors).
        """
        context = current_call.get()
        if (
            not self.defer_writes
            or self.datastore is None
            or context is None
            or context.purpose != "decide"
            or saved_elsewhere.get()
        ):
            return None
        by_user: dict[str, tuple[dict[bytes, np.ndarray], set[tuple[str, bytes]]]] | None = getattr(
            self._deferred, "by_user", None
        )
        if by_user is None:
            by_user = self._deferred.by_user = {}
        if context.user_id not in by_user and len(by_user) >= MAX_DEFERRED_USERS:
            del by_user[next(iter(by_user))]  # a thread that decides and never saves stays bounded
        return by_user.setdefault(context.user_id, ({}, set()))

    def write_within_save(self, stored_events: Sequence[Any]) -> list[tuple[Composed, list[Any]]]:
        """The statements writing the vectors and owners deciding deferred, in the save's
        transaction (a save hook): both commit with the events they were made for, or neither
        does. Those of users the save does not hold (decisions that saved nothing) are dropped."""
        by_user = getattr(self._deferred, "by_user", None) or {}
        self._deferred.by_user = {}
        saved = {e.originator_id for e in stored_events}
        vectors: dict[bytes, np.ndarray] = {}
        owners: set[tuple[str, bytes]] = set()
        for user, (user_vectors, user_owners) in by_user.items():
            if user_memory_id(user) in saved:
                vectors.update(user_vectors)
                owners.update(user_owners)
        statements: list[tuple[Composed, list[Any]]] = []
        if vectors:
            # The vectors as binary parameters (no text of 1,536 floats to format and parse; the
            # save's cursor sends ``BinaryVector``); a decision without new vectors writes owners only.
            rows = SQL(", ").join([SQL("(%s, %s, %s::vector)")] * len(vectors))
            statements.append(
                (
                    SQL("INSERT INTO {} (embedder_id, text_hash, embedding) VALUES {} ON CONFLICT DO NOTHING").format(
                        self.table, rows
                    ),
                    [v for h, vector in vectors.items() for v in (self.embedder_id, h, BinaryVector.of(vector))],
                )
            )
        if owners:
            statements.append(
                (
                    SQL(
                        "INSERT INTO {} SELECT u, %s, h FROM unnest(%s::text[], %s::bytea[]) AS o(u, h) "
                        "ON CONFLICT DO NOTHING"
                    ).format(self.owners),
                    [self.embedder_id, [u for u, _ in owners], [h for _, h in owners]],
                )
            )
        return statements

    def _own(self, texts: Sequence[str]) -> None:
        """Note that these texts were embedded for the current user (see the module's docstring)."""
        context = current_call.get()
        if context is None:
            return
        user = context.user_id
        pending = self._pending()
        if pending is not None:
            # Not marked as written: the save may still roll back.
            pending[1].update((user, self.text_hash(t)) for t in texts)
            return
        keys = {(self.embedder_id, self.text_hash(t)) for t in texts}
        new = [k for k in keys if (user, k) not in self._owned]
        if not new:
            return
        if self.datastore is None:
            self.shared.owners.setdefault(user, set()).update(new)
        else:
            with self.datastore.transaction(commit=True) as curs:
                curs.executemany(
                    SQL("INSERT INTO {} VALUES (%s, %s, %s) ON CONFLICT DO NOTHING").format(self.owners),
                    [(user, embedder_id, digest) for embedder_id, digest in new],
                )
        if len(self._owned) > MEMO_SIZE * 10:
            self._owned.clear()
        self._owned.update((user, k) for k in new)

    def _stored(self, texts: list[str]) -> dict[str, np.ndarray]:
        if self.datastore is None:
            hashes = {t: (self.embedder_id, self.text_hash(t)) for t in texts}
            return {t: self.shared.vectors[key] for t, key in hashes.items() if key in self.shared.vectors}
        by_hash = {self.text_hash(t): t for t in texts}
        with self.datastore.cursor() as curs:
            # Binary vectors: no text to format on the server or to parse here.
            curs.execute(
                SQL(
                    "SELECT text_hash, vector_send(embedding) AS v FROM {} "
                    "WHERE embedder_id = %s AND text_hash = ANY(%s)"
                ).format(self.table),
                (self.embedder_id, list(by_hash)),
            )
            return {by_hash[bytes(row["text_hash"])]: vector_from_binary(row["v"]) for row in curs.fetchall()}

    def _store(self, vectors: dict[str, np.ndarray]) -> None:
        pending = self._pending()
        if pending is not None:
            pending[0].update((self.text_hash(t), v) for t, v in vectors.items())
            return
        if self.datastore is None:
            self.shared.vectors.update({(self.embedder_id, self.text_hash(t)): v for t, v in vectors.items()})
            return
        with self.datastore.transaction(commit=True) as curs:
            bind_binary_vectors(curs)
            # Not waiting for the WAL flush: a vector lost in a crash is computed again, and the
            # owner rows that follow commit synchronously, flushing it (WAL is written in order),
            # so no vector outlives a crash without the owners forgetting needs.
            curs.execute("SELECT set_config('synchronous_commit', 'off', true)")
            for text, vector in vectors.items():
                curs.execute(
                    SQL(
                        "INSERT INTO {} (embedder_id, text_hash, embedding) VALUES (%s, %s, %s::vector) "
                        "ON CONFLICT DO NOTHING"
                    ).format(self.table),
                    (self.embedder_id, self.text_hash(text), BinaryVector.of(vector)),
                )
