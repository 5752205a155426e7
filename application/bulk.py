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

With an LLM, a group's users are extracted and decided on worker threads
(``workers``, ADR 0024): each user's messages still one after another, on
that user's memory, while other users' calls are in flight. Users do not see
each other's memories, so the decisions are those of one thread; the save
stays one, on the calling thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import attrs
from eventsourcing.persistence import IntegrityError

from factledger.application.at_once import each_at_once
from factledger.application.calls import for_a_save_elsewhere
from factledger.application.errors import (
    FactledgerError,
    InvalidInput,
    MessageAlreadyRecorded,
    MessageIdReused,
    StoreBusy,
    WriteConflict,
)
from factledger.application.ingestion import (
    DecisionsUnavailable,
    Incoming,
    Ingestion,
    Prepared,
    Said,
    known_facts,
    known_preferences,
)
from factledger.application.results import IngestResult
from factledger.application.writing import MemoryWriter, NothingToWrite
from factledger.domain.memory import UserMemory

logger = logging.getLogger(__name__)

#: messages saved together: small enough that a group's events go in one pipelined round trip
GROUP_MESSAGES = 64
_NEVER = threading.Event()  # the stop of a chain run on the calling thread

Outcome: TypeAlias = IngestResult | FactledgerError


@attrs.define
class BulkIngestion:
    """``ingest_many``: groups of messages, one save each."""

    ingestion: Ingestion
    writer: MemoryWriter
    group_messages: int = GROUP_MESSAGES
    #: threads extracting and deciding for different users of a group at once (1: the caller's only)
    workers: int = 1

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
        recorded = ledger.recorded_text_hashes([(m.user_id, m.message_id) for _, m in prepared if m.given_id])
        todo = []
        for n, message in prepared:
            if (message.user_id, message.message_id) in recorded:
                outcomes[n] = self._repeated(message, recorded[(message.user_id, message.message_id)])
            else:
                todo.append((n, message))
        if self.workers > 1:
            todo = _users_taking_turns(todo)
        for start in range(0, len(todo), self.group_messages):
            self._group(todo[start : start + self.group_messages], outcomes, first=start == 0)
        return [outcome for outcome in outcomes if outcome is not None]

    def _group(self, group: list[tuple[int, Prepared]], outcomes: list[Outcome | None], first: bool) -> None:
        ledger = self.ingestion.ledger
        extracted: dict[int, tuple[Said, Sequence[str]]] = {}
        try:
            loaded = ledger.find_memories([message.user_id for _, message in group])
            memories = {user: UserMemory.start(user) if found is None else found for user, found in loaded.items()}
            chains: dict[str, list[tuple[int, Prepared]]] = {}
            for n, message in group:
                chains.setdefault(message.user_id, []).append((n, message))

            def decide(chain: list[tuple[int, Prepared]], stop: threading.Event) -> list[_Decided]:
                return self._decide_chain(chain, memories[chain[0][1].user_id], extracted, outcomes, stop)

            decided = sorted(
                (d for chain_decided in self._each(decide, list(chains.values()), first) for d in chain_decided),
                key=lambda d: d.n,
            )
            recordings = ledger.save(
                *memories.values(), message_ids=[(d.memory_id, d.message_id, d.text_hash) for d in decided]
            )
        except (DecisionsUnavailable, MessageAlreadyRecorded, IntegrityError, StoreBusy) as exc:
            # Nothing of the group was kept; the memories changed here are dropped with it.
            logger.info("a group of %d messages goes one by one (%s)", len(group), exc)
            for n, message in group:
                outcomes[n] = self._one(message, extracted.get(n))
            return
        positions = {
            (r.domain_event.originator_id, r.domain_event.originator_version): r.notification.id for r in recordings
        }
        for d in decided:
            outcomes[d.n] = attrs.evolve(d.result, notification_id=positions.get((d.memory_id, d.version)))
        self.writer.after_save()

    def _decide_chain(
        self,
        chain: list[tuple[int, Prepared]],
        memory: UserMemory,
        extracted: dict[int, tuple[Said, Sequence[str]]],
        outcomes: list[Outcome | None],
        stop: threading.Event,
    ) -> list[_Decided]:
        """One user's messages of a group, in order, on that user's memory (until ``stop``: the
        group is not saved then, another chain's error is raised)."""
        decided = []
        for n, message in chain:
            if stop.is_set():
                break
            shown = known_facts(memory, message.at)
            tastes = known_preferences(memory, message.at)
            said = self.ingestion.extract(
                message.user_id, message.message_id, message.text, message.turns, shown, tastes, message.at
            )
            extracted[n] = (said, shown)
            try:
                result = self.ingestion.recording(message, said, shown)(memory)
            except NothingToWrite as done:  # the same message twice in the group
                outcomes[n] = done.value
                continue
            except MessageIdReused as exc:  # recorded meanwhile with another text
                outcomes[n] = exc
                continue
            text_hash = self.ingestion.ledger.text_hash(message.text)
            decided.append(_Decided(n, result, memory.id, message.message_id, memory.version, text_hash))
        return decided

    def _each(
        self,
        decide: Callable[[list[tuple[int, Prepared]], threading.Event], list[_Decided]],
        chains: list[list[tuple[int, Prepared]]],
        first_alone: bool,
    ) -> list[list[_Decided]]:
        """``decide`` for every user's chain: here, or on worker threads when there are several.
        Every chain has ended when this returns or raises (the first chain's error)."""
        if self.workers <= 1 or len(chains) <= 1:
            return [decide(chain, _NEVER) for chain in chains]
        done = []
        if first_alone:
            # An import's first calls go alone: a wrong key, or a format the endpoint refuses, is met once.
            done.append(decide(chains[0], _NEVER))
            chains = chains[1:]

        def apart(chain: list[tuple[int, Prepared]], stop: threading.Event) -> list[_Decided]:
            with for_a_save_elsewhere():
                return decide(chain, stop)

        return done + each_at_once(apart, chains, self.workers)

    def _one(self, message: Prepared, extracted: tuple[Said, Sequence[str]] | None) -> Outcome:
        try:
            return self.ingestion.ingest_prepared(message, extracted)
        except (InvalidInput, MessageIdReused, WriteConflict, StoreBusy) as exc:
            return exc

    def _repeated(self, message: Prepared, recorded_hash: str | None) -> Outcome:
        """A message whose id is recorded: a duplicate, or ``MessageIdReused`` for another text."""
        if recorded_hash is not None and recorded_hash != self.ingestion.ledger.text_hash(message.text):
            return MessageIdReused(message.user_id, message.message_id)
        return self.ingestion.already_done(message.user_id, message.message_id)


@attrs.frozen
class _Decided:
    n: int  # the message's place in the call
    result: IngestResult
    memory_id: Any
    message_id: str
    version: int  # the memory's version after the message
    text_hash: str  # kept beside the message id (a retry with another text is refused)


def _users_taking_turns(todo: list[tuple[int, Prepared]]) -> list[tuple[int, Prepared]]:
    """``todo`` reordered so that a group holds as many users as it can (a log sorted by user
    would otherwise give a group one user, and workers nothing to share); each user's
    messages keep their order, and users never see each other's memories."""
    chains: dict[str, list[tuple[int, Prepared]]] = {}
    for item in todo:
        chains.setdefault(item[1].user_id, []).append(item)
    taking_turns: list[tuple[int, Prepared]] = []
    for turn in range(max((len(c) for c in chains.values()), default=0)):
        taking_turns.extend(chain[turn] for chain in chains.values() if turn < len(chain))
    return taking_turns
