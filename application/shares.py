"""Users split into shares by a stable hash: the share of a bulk job (import, replay) a user belongs to.

One user's work stays in one share, in order (each message is decided on the memory the
earlier ones left); different users never see each other's memories, so shares can run in
different processes (ADR 0034, ADR 0041).
"""

from __future__ import annotations

import unicodedata
import zlib

from factledger.application.errors import InvalidInput

#: (index, count): the share ``index`` of ``count``, 0 ≤ index < count
Share = tuple[int, int]


def share_of(user_id: object, processes: int) -> int:
    """The share a user's messages go to: a hash stable across runs and processes. The id is
    NFC-normalised first, so every spelling that could be one user goes to one share."""
    key = unicodedata.normalize("NFC", user_id) if isinstance(user_id, str) else repr(user_id)
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % processes


def check_share(share: Share) -> Share:
    """``share`` as given, or ``InvalidInput`` naming what is wrong with it."""
    index, count = share if isinstance(share, tuple) and len(share) == 2 else (None, None)
    if not isinstance(count, int) or not isinstance(index, int) or count < 1 or not 0 <= index < count:
        raise InvalidInput(f"share must be (index, count) with 0 ≤ index < count and count ≥ 1, not {share!r}")
    return index, count
