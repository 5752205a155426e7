"""Ingesting many messages at once (``ingest-file``, ``LedgerService.ingest_many``): one save,
one transaction, for a group of messages instead of one each (ADR 0022).

Each message is still extracted and decided on its own user's memory, in the
order given, exactly as one ``ingest`` after another would: a user's later
message sees the facts its earlier ones recorded. What is shared is the
bookkeeping around it: the message ids already recorded are read in one
statement, each user's memory is loaded once per group, and the group's events
(every user's) are saved together. A group records all its messages or none;
if its save meets a concurrent writer, or deciding needed a service that did
not answer, nothing of it is kept and its messages go through ``ingest`` one
by one, with what the extractor already said (no extraction is paid twice for
a message that was decided before the failure).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, TypeAlias

import attrs
from eventsourcing.persistence import IntegrityError

from factledger.application.errors import (
    FactledgerError,
    InvalidInput,
    MessageAlreadyRecorded,
    StoreBusy,
    WriteConflict,
)
from factledger.application.ingestion import DecisionsUnavailable, Incoming, Ingestion, Prepared, Said, known_facts
from factledger.application.results import IngestResult
from factledger.application.writing import MemoryWriter, NothingToWrite
from factledger.domain.memory import UserMemory

logger = logging.getLogger(__name__)

#: messages saved together: small enough that a group's events go in one pipelined round trip
GROUP_MESSAGES = 64

Outcome: TypeAlias = IngestResult | FactledgerError


@attrs.define
class BulkIngestion:
    """``ingest_many``: groups of messages, one save each."""

    ingestion: Ingestion
    writer: MemoryWriter
    group_messages: int = GROUP_MESSAGES

    def ingest_many(self, messages: Sequence[Incoming]) -> list[Outcome]:
        """One outcome per message, in order: its result, or the error that kept it out
        (``InvalidInput`` for a message that is not valid; ``WriteConflict`` or ``StoreBusy``
        when its save kept failing). A bad message never keeps the others out."""
        outcomes: list[Outcome | None] = [None] * len(messages)
        prepared: list[tuple[int, Prepared]] = []
        for n, incoming in enumerate(messages):
            try:
                prepared.append((n, self.ingestion.prepare(incoming)))
            except InvalidInput as exc:
                outcomes[n] = exc
        ledger = self.ingestion.ledger
        recorded = ledger.recorded_among([(m.user_id, m.message_id) for _, m in prepared if m.given_id])
        todo = []
        for n, message in prepared:
            if (message.user_id, message.message_id) in recorded:
                outcomes[n] = self.ingestion.already_done(message.user_id, message.message_id)
            else:
                todo.append((n, message))
        for start in range(0, len(todo), self.group_messages):
            self._group(todo[start : start + self.group_messages], outcomes)
        return [outcome for outcome in outcomes if outcome is not None]

    def _group(self, group: list[tuple[int, Prepared]], outcomes: list[Outcome | None]) -> None:
        ledger = self.ingestion.ledger
        extracted: dict[int, tuple[Said, Sequence[str]]] = {}
        decided: dict[int, tuple[IngestResult, Any, int]] = {}  # result, its memory, version after it
        message_ids = []
        try:
            loaded = ledger.find_memories([message.user_id for _, message in group])
            memories = {user: UserMemory.start(user) if found is None else found for user, found in loaded.items()}
            for n, message in group:
                memory = memories[message.user_id]
                shown = known_facts(memory)
                said = self.ingestion.extract(message.user_id, message.message_id, message.text, message.turns, shown)
                extracted[n] = (said, shown)
                try:
                    result = self.ingestion.recording(message, said, shown)(memory)
                except NothingToWrite as done:  # the same message twice in the group
                    outcomes[n] = done.value
                    continue
                message_ids.append((memory.id, message.message_id))
                decided[n] = (result, memory.id, memory.version)
            recordings = ledger.save(*memories.values(), message_ids=message_ids)
        except (DecisionsUnavailable, MessageAlreadyRecorded, IntegrityError, StoreBusy) as exc:
            # Nothing of the group was kept; the memories changed here are dropped with it.
            logger.info("a group of %d messages goes one by one (%s)", len(group), exc)
            for n, message in group:
                outcomes[n] = self._one(message, extracted.get(n))
            return
        positions = {
            (r.domain_event.originator_id, r.domain_event.originator_version): r.notification.id for r in recordings
        }
        for n, (result, memory_id, version) in decided.items():
            outcomes[n] = attrs.evolve(result, notification_id=positions.get((memory_id, version)))
        self.writer.after_save()

    def _one(self, message: Prepared, extracted: tuple[Said, Sequence[str]] | None) -> Outcome:
        try:
            return self.ingestion.ingest_prepared(message, extracted)
        except (InvalidInput, WriteConflict, StoreBusy) as exc:
            return exc
