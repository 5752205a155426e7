"""Changing one user's memory: load, decide, save in one transaction, again on a conflict.

Every write of the service goes through ``MemoryWriter.write``: ingesting,
retrying a failed extraction, and an operator's corrections.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Generic, TypeVar

import attrs
from eventsourcing.persistence import IntegrityError

from factledger.application.errors import MessageAlreadyRecorded, NotFound, StoreBusy, WriteConflict
from factledger.application.ledger import MemoryLedger
from factledger.domain.memory import UserMemory

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Enough for 8 writers on one user (tested); the pauses grow to MAX_PAUSE_S, jittered.
WRITE_ATTEMPTS = 40
FIRST_PAUSE_S = 0.005
MAX_PAUSE_S = 0.5


class NothingToWrite(Exception, Generic[T]):
    """Raised by a change to say: record nothing, return this value instead."""

    def __init__(self, value: T) -> None:
        super().__init__()
        self.value = value


@attrs.define
class MemoryWriter:
    """Applies changes to users' memories, one transaction each, retried on conflicts."""

    ledger: MemoryLedger
    after_save: Callable[[], None] = lambda: None
    attempts: int = WRITE_ATTEMPTS

    def write(
        self,
        user_id: str,
        change: Callable[[UserMemory], T],
        *,
        create: bool = True,
        loaded: UserMemory | None = None,
        looked_up: bool = False,
        new_message_id: str | None = None,
        new_message_hash: str | None = None,
        on_duplicate: Callable[[], T] | None = None,
    ) -> tuple[T, int | None]:
        """Apply ``change`` to the user's memory and save its events; return its value
        and the position of the last event saved (None when nothing was).

        A concurrent write to the same user makes the save fail: after a jittered,
        growing pause the memory is loaded again and ``change`` decides again on
        the fresh state, up to ``attempts`` times, then ``WriteConflict``.
        ``new_message_id``: the message this write records, kept in the store's
        message-id index in the same transaction (with ``new_message_hash``, the hash of its
        text); if the store already holds it, ``on_duplicate()`` is returned instead.
        ``looked_up``: ``loaded`` is what the caller found, None included (no such memory).
        """
        for attempt in range(1, self.attempts + 1):
            # The caller's copy (``memory_to_write``: maybe not read again) saves a load on the
            # first attempt; if it went stale, the save fails and the next attempt reloads.
            first = attempt == 1 and (loaded is not None or looked_up)
            memory = loaded if first else self.ledger.find_memory(user_id)
            if memory is None:
                if not create:
                    raise NotFound(f"nothing is recorded for user {user_id!r}")
                memory = UserMemory.start(user_id)
            unread = first and self.ledger.saved_here(memory)
            try:
                value = change(memory)
            except NothingToWrite as done:
                return done.value, None
            message_ids = [(memory.id, new_message_id, new_message_hash)] if new_message_id is not None else []
            try:
                recordings = self.ledger.save(memory, message_ids=message_ids)
            except MessageAlreadyRecorded:
                if on_duplicate is None:
                    raise
                return on_duplicate(), None
            except (IntegrityError, StoreBusy) as exc:  # a stale version, or a lock wait that timed out
                if attempt == self.attempts:
                    raise WriteConflict(user_id, attempt) from exc
                if unread and isinstance(exc, IntegrityError):
                    continue  # the copy this process saved last was stale: reload at once
                pause = random.uniform(0, min(MAX_PAUSE_S, FIRST_PAUSE_S * 2 ** (attempt - 1)))
                logger.info("concurrent write for %r, deciding again in %.3fs (%d)", user_id, pause, attempt)
                time.sleep(pause)
                continue
            self.after_save()
            return value, (recordings[-1].notification.id if recordings else None)
        raise AssertionError("unreachable")


def require_memory(ledger: MemoryLedger, user_id: str) -> UserMemory:
    memory = ledger.find_memory(user_id)
    if memory is None:
        raise NotFound(f"nothing is recorded for user {user_id!r}")
    return memory
