"""pgvector's wire forms for vectors: text (``vector_literal``) and binary (``vector_binary``,
``BinaryVector`` parameters), and the float32 arrays both read back as.

Kept in ``projections`` because the PostgreSQL read model writes and queries vectors in these
forms; the embedding cache (infrastructure) uses them too, importing inward.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from typing import Any

import attrs
import numpy as np
from psycopg import Cursor
from psycopg.adapt import Dumper
from psycopg.pq import Format

from factledger.application.ports import Vector


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


# pgvector's binary form (``vector_send`` / ``vector_recv``): dimension and an unused
# int16, then the components as big-endian float4.
_VECTOR_HEADER = struct.Struct(">HH")


def vector_binary(vector: Iterable[float] | np.ndarray) -> bytes:
    """pgvector's binary form: what COPY … (FORMAT BINARY) takes for a vector column, and
    what ``BinaryVector`` sends as a ``%s::vector`` parameter. The server checks it as it
    checks the text form (dimension, NaN, infinity); float32 components go over exactly."""
    array = np.asarray(vector if isinstance(vector, np.ndarray) else list(vector), dtype=">f4")
    if array.ndim != 1:
        raise ValueError(f"a vector has one dimension, not {array.ndim}")
    return _VECTOR_HEADER.pack(array.shape[0], 0) + array.tobytes()


def vector_from_binary(data: bytes | memoryview) -> np.ndarray:
    """A vector read back in binary (``SELECT vector_send(embedding)``), as ``as_float32`` makes it."""
    dimension, _ = _VECTOR_HEADER.unpack_from(data)
    return as_float32(np.frombuffer(data, dtype=">f4", count=dimension, offset=_VECTOR_HEADER.size))


@attrs.frozen
class BinaryVector:
    """A query parameter sent in pgvector's binary form; write it as ``%s::vector`` in a cursor
    that ``bind_binary_vectors`` prepared."""

    data: bytes

    @classmethod
    def of(cls, vector: Iterable[float] | np.ndarray) -> BinaryVector:
        return cls(vector_binary(vector))


class _BinaryVectorDumper(Dumper):
    format = Format.BINARY
    # No type oid (the vector type's differs between databases): the statement's ``::vector``
    # cast tells the server the parameter's type, and it reads the bytes with ``vector_recv``.
    oid = 0

    def dump(self, obj: BinaryVector) -> bytes:
        return obj.data


def bind_binary_vectors(curs: Cursor[Any]) -> Cursor[Any]:
    """Let this cursor send ``BinaryVector`` parameters (its own adapters: no global registration)."""
    curs.adapters.register_dumper(BinaryVector, _BinaryVectorDumper)
    return curs
