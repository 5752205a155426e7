"""Checks on everything a caller hands the service, before anything is recorded.

Every limit has a stated, configurable default (``InputLimits``); a value
outside it raises ``InvalidInput`` naming the field and the limit, and nothing
is written. Ids must be exact: no surrounding spaces (``" u1"`` would silently
be another user), nothing invisible (control and format characters: TAB, a
zero-width space, a bidi override would make two ids that print alike), and
they are normalised to NFC, so ``"Café"`` typed precomposed or with a combining
accent is one user. Free text is cleaned instead of refused: terminal escape
sequences, control characters and unpaired surrogates (which PostgreSQL cannot
store, or which drive a terminal) are removed.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs

from factledger.application.errors import InvalidInput, NotFound
from factledger.domain.values import Turn, invisible_characters, storable_text

# Chat logs older than this are not plausible; later than now + skew is a clock error.
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
CLOCK_SKEW = timedelta(days=1)


@attrs.frozen
class InputLimits:
    """Bounds on what one call may carry (config keys ``max_*``, env ``FACTLEDGER_MAX_*``)."""

    message_chars: int = 16_000
    context_turns: int = 50
    context_chars: int = 32_000
    id_chars: int = 256
    query_chars: int = 2_000
    top_k: int = 100
    profile_limit: int = 1_000


DEFAULT_LIMITS = InputLimits()


def _shown(value: str, limit: int = 40) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


def require_id(name: str, value: object, limits: InputLimits = DEFAULT_LIMITS) -> str:
    """An identifier (user, message, session, actor): a non-empty string of visible characters,
    normalised to NFC (the form the id is recorded and looked up in), otherwise kept as given."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    _require_length(name, value, limits)  # before anything reads a huge value whole
    if invisible := invisible_characters(value):
        raise InvalidInput(f"{name} {_shown(value)} contains {_described(invisible[0])}; ids must be visible text")
    if value != value.strip():
        raise InvalidInput(
            f"{name} {_shown(value)} has leading or trailing whitespace; ids are compared exactly, so strip it first"
        )
    value = unicodedata.normalize("NFC", value)
    _require_length(name, value, limits)  # NFC lengthens a few characters (U+0958 becomes two)
    return value


def _require_length(name: str, value: str, limits: InputLimits) -> None:
    if len(value) > limits.id_chars:
        raise InvalidInput(f"{name} is {len(value)} characters long; the limit is {limits.id_chars} (max_id_chars)")


_KINDS = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "an unpaired surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}


def _described(char: str) -> str:
    """``U+200B ZERO WIDTH SPACE, an invisible format character``."""
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}{' ' + name if name else ''}, {_KINDS[unicodedata.category(char)]}"


def user_id_as_recorded(value: object, limits: InputLimits, is_recorded: Callable[[str], bool]) -> str:
    """``require_id`` for a user id, still reaching a user recorded before ids were normalised
    (ADR 0027): an id given in a form other than NFC, under which a user is recorded while
    none is under its NFC form, is that user. ``is_recorded`` is asked only for such an id."""
    nfc = require_id("user_id", value, limits)
    if isinstance(value, str) and value != nfc and not is_recorded(nfc) and is_recorded(value):
        return value
    return nfc


def optional_id(name: str, value: object, limits: InputLimits = DEFAULT_LIMITS) -> str | None:
    return None if value is None else require_id(name, value, limits)


def clean_text(name: str, value: object, max_chars: int, setting: str) -> str:
    """Free text: a non-empty string, control characters removed, at most ``max_chars`` long."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if len(value) > max_chars:
        raise InvalidInput(f"{name} is {len(value)} characters long; the limit is {max_chars} ({setting})")
    text = storable_text(value)
    if not text.strip():
        raise InvalidInput(f"{name} must not be empty")
    return text


def context_turns(context: Iterable[Any] | None, limits: InputLimits = DEFAULT_LIMITS) -> list[Turn]:
    """Earlier turns as ``Turn``s: a list of ``{"role": str, "content": str}``, within the limits."""
    if context is None:
        return []
    if not isinstance(context, (list, tuple)):
        raise InvalidInput(f"context must be a list of {{role, content}} turns, got {type(context).__name__}")
    if len(context) > limits.context_turns:
        raise InvalidInput(f"context has {len(context)} turns; the limit is {limits.context_turns} (max_context_turns)")
    turns: list[Turn] = []
    total = 0
    for position, turn in enumerate(context):
        if not isinstance(turn, Turn):
            try:
                turn = Turn.from_dict(turn)
            except ValueError as exc:
                raise InvalidInput(f"context[{position}]: {exc}") from None
        if len(turn.role) > limits.id_chars:
            raise InvalidInput(f"context[{position}]: role is longer than {limits.id_chars} characters (max_id_chars)")
        total += len(turn.content)
        if total > limits.context_chars:
            raise InvalidInput(
                f"context holds more than {limits.context_chars} characters of content (max_context_chars)"
            )
        turns.append(turn)
    return turns


def utc(at: datetime | None) -> datetime:
    """``at`` with a time zone (naive means UTC); now when None."""
    if at is None:
        return datetime.now(UTC)
    if not isinstance(at, datetime):
        raise InvalidInput(f"timestamp must be a datetime, got {type(at).__name__}")
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def message_time(at: datetime | None) -> datetime:
    """A message's time: now by default, else a plausible one (1970 to tomorrow)."""
    when = utc(at)
    latest = datetime.now(UTC) + CLOCK_SKEW
    if not EARLIEST <= when <= latest:
        raise InvalidInput(
            f"timestamp {when.isoformat()} is outside the plausible range "
            f"{EARLIEST.date().isoformat()} .. {latest.date().isoformat()}"
        )
    return when


def require_top_k(top_k: object, limits: InputLimits = DEFAULT_LIMITS) -> int:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= limits.top_k:
        raise InvalidInput(f"top_k must be an integer from 1 to {limits.top_k} (max_top_k), got {top_k!r}")
    return top_k


def require_page(limit: object, offset: object, limits: InputLimits = DEFAULT_LIMITS) -> tuple[int | None, int]:
    """A page of a list: ``limit`` items (None: the list's own default) from ``offset`` (0: the first)."""
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= limits.profile_limit
    ):
        raise InvalidInput(
            f"limit must be an integer from 1 to {limits.profile_limit} (max_profile_limit), got {limit!r}"
        )
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput(f"offset must be an integer from 0 up, got {offset!r}")
    return limit, offset


def require_unit(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"{name} must be a number in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def resolve_prefix(prefix: object, ids: Iterable[str], kind: str) -> str:
    """The one id starting with ``prefix``; a clear error when none or several do."""
    if not isinstance(prefix, str) or not prefix.strip():
        raise InvalidInput(f"{kind} id must be a non-empty string")
    prefix = prefix.strip()
    matches = [i for i in ids if i.startswith(prefix)]
    if not matches:
        raise NotFound(f"no {kind} id starts with {prefix!r}")
    if len(matches) > 1:
        raise InvalidInput(f"{kind} id prefix {prefix!r} is ambiguous: {', '.join(m[:12] for m in matches[:5])}")
    return matches[0]
