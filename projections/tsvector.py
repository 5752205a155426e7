"""A text's terms (``application.lexical``) as a PostgreSQL ``tsvector``: binary for COPY, text for INSERT.

The application makes the terms (PostgreSQL's parsers know no Chinese), so the
value is built here, never by ``to_tsvector``: what is stored is exactly what
the in-memory view counts. Binary form as ``tsvectorrecv`` reads it: the
number of lexemes (int32), then per lexeme its UTF-8 text ending in a zero
byte, its number of positions (uint16) and each position (uint16, weight D).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence

from factledger.application.lexical import MAX_POSITION, term_positions


def lexemes_of(text: str) -> tuple[dict[str, list[int]], int]:
    """The text's terms with their positions, and how many positions in all (its length)."""
    positions = term_positions(text)
    return positions, sum(map(len, positions.values()))


_COUNT = struct.Struct("!i").pack
# A lexeme held at one position, as its binary tail (count 1, the position), for every position a
# tsvector keeps: most terms of a message are there once, and a list lookup beats a pack.
_ONE_POSITION = [struct.pack("!HH", 1, at) for at in range(MAX_POSITION + 1)]
# A term's UTF-8 text and its ending zero byte, for the terms seen lately (words recur from one
# message to the next; cleared when full, so it stays bounded).
_TERM_HEADS: dict[str, bytes] = {}
TERM_HEADS_KEPT = 100_000


def tsvector_binary(positions: Mapping[str, Sequence[int]]) -> bytes:
    parts = [_COUNT(len(positions))]
    heads, one = _TERM_HEADS, _ONE_POSITION
    for term, where in positions.items():
        head = heads.get(term)
        if head is None:
            if len(heads) >= TERM_HEADS_KEPT:
                heads.clear()
            head = heads[term] = term.encode() + b"\x00"
        if len(where) == 1:
            parts.append(head + one[where[0]])
        else:
            parts.append(head + struct.pack(f"!H{len(where)}H", len(where), *where))
    return b"".join(parts)


def tsvector_from_binary(data: bytes) -> dict[str, list[int]]:
    """``tsvector_binary`` read back (the INSERT path gets the COPY row's value)."""
    (count,) = struct.unpack_from("!i", data)
    at, positions = 4, {}
    for _ in range(count):
        end = data.index(b"\x00", at)
        term = data[at:end].decode()
        (n,) = struct.unpack_from("!H", data, end + 1)
        positions[term] = list(struct.unpack_from(f"!{n}H", data, end + 3))
        at = end + 3 + 2 * n
    return positions


def tsvector_literal(positions: Mapping[str, Sequence[int]]) -> str:
    """The text form: ``'term':1,4 'other':2`` (quotes and backslashes doubled)."""
    quoted = (term.replace("\\", "\\\\").replace("'", "''") for term in positions)
    return " ".join(f"'{q}':{','.join(map(str, where))}" for q, where in zip(quoted, positions.values(), strict=True))


def tsquery_any(terms: Sequence[str]) -> str:
    """A query matching a row that holds any of ``terms``."""
    return " | ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "'" for t in terms)
