"""What a row stores is the same however fast it is made: the rebuild's faster term positions,
tsvector bytes and relative-time pre-check against the straightforward forms they replaced."""

from __future__ import annotations

import random
import struct
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import pytest

from factledger.application.lexical import MAX_POSITION, MAX_POSITIONS_PER_TERM, term_positions, terms
from factledger.domain import relative_time
from factledger.domain.relative_time import _EN_CUES, _EN_UNITS, time_refs
from factledger.projections import tsvector
from factledger.projections.tsvector import tsvector_binary, tsvector_from_binary

WORDS = [
    "hiking", "sister", "yesterday", "today", "ago", "in", "3", "weeks", "days", "month", "next", "last",
    "o'neil", "back\\slash", "café", "杭州", "我在杭州工作", "上周", "三天前", "猫", "😀", "a", "the", "week",
    "tomorrow", "tonight", "morning", "this", "year", "night", "ok", "x" * 50, "Ünïcode", "明天", "去年",
]  # fmt: skip


def _old_term_positions(text: str) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for at, term in enumerate(terms(text)[:MAX_POSITION], 1):
        held = positions.setdefault(term, [])
        if len(held) < MAX_POSITIONS_PER_TERM:
            held.append(at)
    return positions


def _old_tsvector_binary(positions: Mapping[str, Sequence[int]]) -> bytes:
    parts = [struct.pack("!i", len(positions))]
    for term, where in positions.items():
        parts.append(term.encode() + b"\x00" + struct.pack(f"!H{len(where)}H", len(where), *where))
    return b"".join(parts)


def _old_english_may_hold(lowered: str) -> bool:
    return any(c in lowered for c in _EN_CUES) or (" in " in lowered and any(u in lowered for u in _EN_UNITS))


def _texts(count: int) -> list[str]:
    rng = random.Random(26)
    texts = ["", "   ", "ok", "the the the", "猫猫猫猫", *_EN_CUES, *(f"in 3{u}s" for u in _EN_UNITS)]
    for _ in range(count):
        texts.append(rng.choice([" ", "", "\n", ", "]).join(rng.choice(WORDS) for _ in range(rng.randint(1, 30))))
    return texts


@pytest.mark.parametrize("text", _texts(400))
def test_terms_positions_and_bytes_are_those_of_the_plain_forms(text: str) -> None:
    positions = term_positions(text)
    assert positions == _old_term_positions(text)
    assert tsvector_binary(positions) == _old_tsvector_binary(positions)
    assert tsvector_from_binary(tsvector_binary(positions)) == positions
    lowered = text.lower()
    assert relative_time._english_may_hold(lowered) == _old_english_may_hold(lowered)


def test_a_term_said_over_256_times_and_a_text_past_the_last_position_are_cut_as_before() -> None:
    text = "hike " * 300 + " ".join(f"w{i}" for i in range(MAX_POSITION + 10))
    positions = term_positions(text)
    assert positions == _old_term_positions(text)
    assert len(positions["hik"]) == MAX_POSITIONS_PER_TERM
    assert max(at for where in positions.values() for at in where) == MAX_POSITION
    assert tsvector_binary(positions) == _old_tsvector_binary(positions)


def test_the_kept_term_bytes_stay_bounded_and_right_after_being_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tsvector, "TERM_HEADS_KEPT", 5)
    monkeypatch.setattr(tsvector, "_TERM_HEADS", {})
    for text in _texts(50):
        positions = term_positions(text)
        assert tsvector_binary(positions) == _old_tsvector_binary(positions)
        assert len(tsvector._TERM_HEADS) <= 5


def test_every_english_cue_still_passes_the_pre_check() -> None:
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    for cue in _EN_CUES:
        assert relative_time._english_may_hold(f"we met {cue} there")
    assert time_refs("We went there 3 days ago", said)
    assert time_refs("The move is in two weeks", said)
    assert not relative_time._english_may_hold("i like green tea")
