"""Comparing two ledgers' memories of the same users."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from factledger.application.ports import MemoryRecord
from factledger.application.results import UserDiff

MATCH_SIMILARITY = 0.9
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    """Case, width, spaces and punctuation do not make two memories different."""
    return _NOISE.sub("", unicodedata.normalize("NFKC", text).lower())


def _value(record: MemoryRecord) -> dict[str, Any]:
    score = "confidence" if record.type == "fact" else "strength"
    return {
        "is_active": record.is_active,
        score: record.metadata.get(score),
        "category": record.category,
    }


def _summary(record: MemoryRecord) -> dict[str, Any]:
    return {"id": record.id, "type": record.type, "content": record.content, **_value(record)}


def _representatives(records: Sequence[MemoryRecord]) -> dict[tuple[str, str], MemoryRecord]:
    """One record per (type, normalised text); the active one wins over invalidated copies."""
    chosen: dict[tuple[str, str], MemoryRecord] = {}
    for r in sorted(records, key=lambda r: (r.is_active, r.updated_at, r.id)):
        chosen[(r.type, normalise(r.content))] = r
    return chosen


def diff_user(
    user_id: str,
    a: Sequence[MemoryRecord],
    b: Sequence[MemoryRecord],
    similarity: Callable[[str, str], float],
) -> UserDiff:
    """Items only in A, only in B, and in both with another validity, score or category.

    Items match by normalised text first, then by embedding similarity ≥ 0.9
    (same type), best pairs first.
    """
    left, right = _representatives(a), _representatives(b)
    pairs = [(left.pop(k), right.pop(k)) for k in list(left) if k in right]
    candidates = sorted(
        (
            (similarity(ra.content, rb.content), ka, kb)
            for ka, ra in left.items()
            for kb, rb in right.items()
            if ka[0] == kb[0]
        ),
        key=lambda c: -c[0],
    )
    for score, ka, kb in candidates:
        if score < MATCH_SIMILARITY:
            break
        if ka in left and kb in right:
            pairs.append((left.pop(ka), right.pop(kb)))
    changed = []
    same = 0
    for ra, rb in pairs:
        va, vb = _value(ra), _value(rb)
        changes = {k: [va[k], vb[k]] for k in va if va[k] != vb[k]}
        if ra.content != rb.content:
            changes["content"] = [ra.content, rb.content]
        if changes:
            changed.append({"a": _summary(ra), "b": _summary(rb), "changes": changes})
        else:
            same += 1
    return UserDiff(
        user_id=user_id,
        only_in_a=tuple(_summary(r) for r in left.values()),
        only_in_b=tuple(_summary(r) for r in right.values()),
        changed=tuple(changed),
        same=same,
    )
