"""What runs with a save of events: inside its transaction, and once it committed (ADR 0020).

One ``SaveHooks`` value, built by the bootstrap for every backend alike (``save_hooks``), is given
to the event recorder once (``attach``): PostgreSQL's ``LedgerRecorder`` and the in-memory
recorder run the same hooks at the same points. Immutable: no one appends a hook to a recorder
that is already saving.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from eventsourcing.persistence import StoredEvent

# Given a cursor (None in memory) and the events: statements whose results are never read.
WrittenInSave = Callable[[Any, Sequence[StoredEvent]], None]
# A check read under the table lock before the events go in: a SELECT of one row and its
# parameters (None: nothing to check). PostgreSQL's recorder reads it in the save's own
# statement, so it sees the table as it was before the save; the in-memory one checks nothing.
CheckedInSave = Callable[[], tuple[Any, Sequence[Any]] | None]
# Given a cursor (None in memory), the events, their positions and what the checks read.
WithinSave = Callable[[Any, Sequence[StoredEvent], Sequence[int], Sequence[Any] | None], None]


@attrs.frozen
class SaveHooks:
    """The hooks of one recorder, each kind run in its order."""

    # Statements that only write (cached vectors, call readings): sent with the events.
    written_in_save: tuple[WrittenInSave, ...] = ()
    # Checks read under the table lock before the events go in (the inline projection's).
    checked_in_save: tuple[CheckedInSave, ...] = ()
    # Run after those in the same transaction (the inline projection).
    within_save: tuple[WithinSave, ...] = ()
    # Run once the transaction committed (what a hook wrote is then kept for good).
    after_commit: tuple[Callable[[], None], ...] = ()


NO_HOOKS = SaveHooks()


class HookedRecorder:
    """The part of a recorder that holds its ``SaveHooks``: given once, before the first save."""

    hooks: SaveHooks = NO_HOOKS

    def attach(self, hooks: SaveHooks) -> None:
        """Give the recorder its hooks; a second call is a wiring error, not a way to add more."""
        if self.hooks is not NO_HOOKS:
            raise RuntimeError("this recorder has its save hooks already")
        self.hooks = hooks
