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


current_call: ContextVar[CallContext | None] = ContextVar("factledger_current_call", default=None)


@contextmanager
def calls_for(user_id: str, message_id: str | None, purpose: str) -> Iterator[CallContext]:
    """Attribute every call made inside the block to this user, message and purpose."""
    context = CallContext(user_id, message_id, purpose)
    token = current_call.set(context)
    try:
        yield context
    finally:
        current_call.reset(token)
