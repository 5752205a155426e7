"""The closed vocabularies of the ledger, named once: what an item is, what deciding did to it,
what became of a message, and which of the two clocks a question is asked on.

Each is a ``Literal`` of the very strings the JSON and the stored events have always held (so
nothing written changes), and a tuple of its values for the places that check or list them:
mypy refuses a misspelt value where a function or record takes one of these.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

#: what a fact or preference is (``Outcome.kind``, ``Explanation.kind``)
ItemKind = Literal["fact", "preference"]
ITEM_KINDS: Final[tuple[ItemKind, ...]] = get_args(ItemKind)

#: what a user's history may be narrowed to: the items, or the messages that said them
HistoryKind = Literal["message", "fact", "preference"]
HISTORY_KINDS: Final[tuple[HistoryKind, ...]] = get_args(HistoryKind)

#: what deciding did with one extracted item (``Outcome.action``): seen for the first time, said
#: again, replacing known ones, repeated (a preference), kept but challenged, said before a later
#: statement that replaces it (ADR 0025), or taken back
OutcomeAction = Literal["observed", "confirmed", "superseded", "reinforced", "contested", "historical", "retracted"]
OUTCOME_ACTIONS: Final[tuple[OutcomeAction, ...]] = get_args(OutcomeAction)

#: what became of one message: recorded, a retried delivery (nothing written), or recorded with
#: its extraction pending (``retry-failed``)
IngestStatus = Literal["recorded", "duplicate", "extraction_failed"]
INGEST_STATUSES: Final[tuple[IngestStatus, ...]] = get_args(IngestStatus)

#: the two clocks of a user's timeline (ADR 0014): when a thing was said, or when the ledger recorded it
Clock = Literal["said", "recorded"]
CLOCKS: Final[tuple[Clock, ...]] = get_args(Clock)
