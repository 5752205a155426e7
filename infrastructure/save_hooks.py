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

from factledger.projections.view import SaveProjection

# Given the events: the statements that write what the hook holds for them (cached vectors, call
# readings), each one INSERT with its parameters, whose results are never read. PostgreSQL's
# recorder sends them as CTEs of the save's own statement (or one by one with a large save);
# memory has nothing to write (None or empty).
WrittenInSave = Callable[[Sequence[StoredEvent]], Sequence[tuple[Any, Sequence[Any]]] | None]
# Given the connection (before the save's transaction) and the events: what the save's own
# statement writes besides them (``SaveProjection``: the inline projection's rows), or None.
# PostgreSQL's recorder only, for a save that fits one statement; else ``within_save`` runs.
ProjectedInSave = Callable[[Any, Sequence[StoredEvent]], SaveProjection | None]
# Given a cursor (None in memory), the events, their positions and what the checks read.
WithinSave = Callable[[Any, Sequence[StoredEvent], Sequence[int], Sequence[Any] | None], None]


@attrs.frozen
class SaveHooks:
    """The hooks of one recorder, each kind run in its order."""

    # Statements that only write (cached vectors, call readings): sent with the events.
    written_in_save: tuple[WrittenInSave, ...] = ()
    # Written by the save's own statement (the inline projection, ADR 0044).
    projected_in_save: tuple[ProjectedInSave, ...] = ()
    # Run after the events in the same transaction when they are not (the inline projection).
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
