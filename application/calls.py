"""Which user and message an outgoing call (LLM, embedding) is made for.

The service sets it around extraction and decisions; infrastructure that
meters calls (tokens, latency) reads it to attribute each call, without the
ports having to carry bookkeeping arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import attrs


@attrs.frozen
class CallContext:
    user_id: str
    message_id: str | None
    purpose: str  # "extract" | "decide" | "recall" | "project" | "replay" ...
    # Where the ledger that makes the call stores its events (a replay's calls
    # belong to the target ledger, not to the one the extractor was built on).
    ledger: str | None = None


current_call: ContextVar[CallContext | None] = ContextVar("factledger_current_call", default=None)


@contextmanager
def calls_for(user_id: str, message_id: str | None, purpose: str, ledger: str | None = None) -> Iterator[CallContext]:
    """Attribute every call made inside the block to this user, message, purpose and ledger."""
    context = CallContext(user_id, message_id, purpose, ledger)
    token = current_call.set(context)
    try:
        yield context
    finally:
        current_call.reset(token)


# True on a thread that extracts and decides for a save that another thread makes (a bulk
# import's workers, ADR 0024): what the calls would hold for the save is written at once,
# since the saving thread cannot see what this one holds.
saved_elsewhere: ContextVar[bool] = ContextVar("factledger_saved_elsewhere", default=False)


@contextmanager
def for_a_save_elsewhere() -> Iterator[None]:
    """Within the block, calls leave nothing held for a save on this thread."""
    token = saved_elsewhere.set(True)
    try:
        yield
    finally:
        saved_elsewhere.reset(token)
