"""Ingesting a message, and extracting again what failed: one pipeline for both.

extract (outside any transaction: it may call an LLM) → record the message →
record what the extractor said → decide on every item → save, all in one
transaction (``MemoryWriter``). When the extractor, or a service the
decisions need, is down, the message is recorded with its extraction
pending, for ``retry_failed``.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import attrs

from factledger.application.calls import calls_for
from factledger.application.decisions import Decider, KnownFactsCompared
from factledger.application.errors import ExtractionFailure, LLMUnavailable, MessageIdReused
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import (
    ComparesKnownFacts,
    Extractor,
    HearsWhenSaid,
    NamesReplacedFacts,
    ReadsKnownPreferences,
)
from factledger.application.results import IngestResult
from factledger.application.screening import DEFAULT_POLICIES, screen
from factledger.application.sensitive import Kind, Policy
from factledger.application.validation import (
    InputLimits,
    clean_text,
    context_turns,
    message_time,
    optional_id,
)
from factledger.application.writing import MemoryWriter, NothingToWrite, require_memory
from factledger.domain.memory import UserMemory
from factledger.domain.values import Extraction, Turn

logger = logging.getLogger(__name__)

# The spec: an LLM extractor sees the user's 20 most recent active facts.
KNOWN_FACTS_FOR_EXTRACTOR = 20

Said = Extraction | ExtractionFailure


class DecisionsUnavailable(Exception):
    """Deciding on an extraction needed an outside service (embeddings, a judge) that did not answer."""

    def __init__(self, extraction: Extraction, cause: LLMUnavailable) -> None:
        super().__init__(str(cause))
        self.extraction = extraction
        self.cause = cause

    def as_failure(self) -> ExtractionFailure:
        """The message's extraction, marked pending, so ``retry_failed`` decides it later."""
        return ExtractionFailure(
            f"deciding needs a service that did not answer: {self.cause}",
            extractor_id=self.extraction.extractor_id,
            raw_output=self.extraction.raw_output,
            prompt_id=self.extraction.prompt_id,
        )


def known_facts(memory: UserMemory | None, at: datetime | None = None) -> list[str]:
    """The facts an extractor is shown with a message: the latest active ones, or, for a message
    said before what the memory holds, those that held when it was said (ADR 0025)."""
    if memory is None:
        return []
    if at is not None and memory.said_before(at):
        return [span.text for span in memory.facts_around(at)[0]][-KNOWN_FACTS_FOR_EXTRACTOR:]
    return [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:]


def known_preferences(memory: UserMemory | None, at: datetime | None = None) -> list[str]:
    """The preferences an extractor that reads them is shown with a message, as ``known_facts``:
    the latest active ones, or those that held when a message said before them was said."""
    if memory is None:
        return []
    if at is not None and memory.said_before(at):
        return [span.text for span in memory.preferences_around(at)[0]][-KNOWN_FACTS_FOR_EXTRACTOR:]
    return [p.text for p in memory.all_preferences()][-KNOWN_FACTS_FOR_EXTRACTOR:]


@attrs.frozen
class Incoming:
    """One message as a caller gives it (``LedgerService.ingest``'s arguments)."""

    user_id: str
    message: str
    session_id: str | None = None
    context: Sequence[Any] | None = None
    message_id: str | None = None
    timestamp: datetime | None = None


@attrs.frozen
class Prepared:
    """A message validated and screened: what is recorded of it."""

    user_id: str
    message_id: str
    given_id: bool  # False: made here, so never recorded before
    text: str
    turns: tuple[Turn, ...]
    session_id: str | None
    at: datetime
    redacted: dict[str, int]


@attrs.define
class Ingestion:
    """``ingest`` and ``retry_failed``."""

    ledger: MemoryLedger
    writer: MemoryWriter
    extractor: Extractor
    decider: Decider
    limits: InputLimits
    policies: Mapping[Kind, Policy] = DEFAULT_POLICIES
    # what the extractor ``_offered_by`` offers, by capability: see ``_offers``
    _offered: dict[type, bool] = attrs.field(factory=dict, init=False, repr=False)
    _offered_by: object = attrs.field(default=None, init=False, repr=False)

    def _offers(self, capability: type) -> bool:
        """Whether the extractor offers ``capability`` (a runtime-checkable protocol), asked once per
        extractor: ``isinstance`` against a protocol walks its members each time (~30 µs), and a
        message asks up to four. Asked again when the extractor is replaced."""
        if self._offered_by is not self.extractor:
            self._offered, self._offered_by = {}, self.extractor
        answer = self._offered.get(capability)
        if answer is None:
            answer = self._offered[capability] = isinstance(self.extractor, capability)
        return answer

    def ingest(
        self,
        user_id: str,
        message: str,
        session_id: str | None = None,
        context: Sequence[Any] | None = None,
        *,
        message_id: str | None = None,
        timestamp: datetime | None = None,
    ) -> IngestResult:
        return self.ingest_prepared(
            self.prepare(Incoming(user_id, message, session_id, context, message_id, timestamp))
        )

    def prepare(self, incoming: Incoming) -> Prepared:
        """``incoming`` validated and screened (``InvalidInput`` names what is wrong)."""
        limits = self.limits
        user_id = self.ledger.user_id(incoming.user_id, limits)
        message = clean_text("message", incoming.message, limits.message_chars, "max_message_chars")
        session_id = optional_id("session_id", incoming.session_id, limits)
        given_id = optional_id("message_id", incoming.message_id, limits)
        screened = screen(message, context_turns(incoming.context, limits), self.policies)
        return Prepared(
            user_id=user_id,
            message_id=given_id or str(uuid.uuid4()),
            given_id=given_id is not None,
            text=screened.message,
            turns=screened.turns,
            session_id=session_id,
            at=message_time(incoming.timestamp),
            redacted=screened.redacted,
        )

    def ingest_prepared(self, message: Prepared, extracted: tuple[Said, Sequence[str]] | None = None) -> IngestResult:
        """Extract (unless ``extracted`` holds what the extractor said, and the known facts it
        was shown), decide and save one message, again on a conflict."""
        user_id, message_id = message.user_id, message.message_id
        memory = None
        shown: Sequence[str]
        if extracted is None:
            memory = self.ledger.memory_to_write(user_id)
            # An id made here was never recorded (the save's index insert still guards it).
            if message.given_id and self.ledger.has_message(user_id, message_id, memory):
                return self.repeated(message)
            shown = known_facts(memory, message.at)
            tastes = known_preferences(memory, message.at)
            said = self.extract(user_id, message_id, message.text, message.turns, shown, tastes, message.at)
        else:
            said, shown = extracted

        def duplicate() -> IngestResult:
            return self.repeated(message)

        text_hash = self.ledger.text_hash(message.text)

        try:
            return self._write(
                user_id,
                self.recording(message, said, shown),
                loaded=memory,
                looked_up=extracted is None,
                new_message_id=message_id,
                new_message_hash=text_hash,
                on_duplicate=duplicate,
            )
        except DecisionsUnavailable as exc:
            return self._write(
                user_id,
                self.recording(message, exc.as_failure(), shown),
                new_message_id=message_id,
                new_message_hash=text_hash,
                on_duplicate=duplicate,
            )

    def recording(self, message: Prepared, said: Said, shown: Sequence[str]) -> Callable[[UserMemory], IngestResult]:
        """The change that records ``message`` and decides on what the extractor said about it;
        ``NothingToWrite`` when the memory already holds the message."""

        def change(memory: UserMemory) -> IngestResult:
            if message.message_id in memory.recent_message_ids:  # a concurrent delivery got there first
                raise NothingToWrite(self.repeated(message))
            memory.ingest_message(
                message_id=message.message_id,
                text=message.text,
                at=message.at,
                session_id=message.session_id,
                context=[turn.as_dict() for turn in message.turns],
                redacted=message.redacted,
            )
            result = self.decide(
                memory, message.user_id, message.message_id, said, message.at, message.session_id, shown
            )
            return attrs.evolve(result, redacted=message.redacted)

        return change

    def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """Extract again every message whose extraction failed (all users, or one)."""
        users = [self.ledger.user_id(user_id, self.limits)] if user_id else self.ledger.users_with_failures()
        pending: list[tuple[str, str]] = []
        for user in users:
            memory = self.ledger.find_memory(user)
            if memory is not None:
                pending.extend((user, mid) for mid in memory.failed_extractions)
        results = []
        for done, (user, message_id) in enumerate(pending, start=1):
            results.append(self._retry_one(user, message_id))
            if progress:
                progress(done, len(pending))
        return results

    def _retry_one(self, user_id: str, message_id: str) -> IngestResult:
        memory = require_memory(self.ledger, user_id)
        if message_id not in memory.failed_extractions:  # extracted meanwhile: never extract twice
            return self.already_done(user_id, message_id)
        message = next(
            e
            for e in self.ledger.user_events(user_id)
            if isinstance(e, UserMemory.MessageIngested) and e.message_id == message_id
        )
        turns = [Turn.from_dict(t) for t in message.context]
        shown = known_facts(memory, message.at)
        tastes = known_preferences(memory, message.at)
        said = self.extract(user_id, message_id, message.text, turns, shown, tastes, message.at)

        def extract_again(said: Said) -> Callable[[UserMemory], IngestResult]:
            def change(memory: UserMemory) -> IngestResult:
                if message_id not in memory.failed_extractions:  # another retry got there first
                    raise NothingToWrite(self.already_done(user_id, message_id))
                return self.decide(memory, user_id, message_id, said, message.at, message.session_id, shown)

            return change

        try:
            return self._write(user_id, extract_again(said), create=False, loaded=memory)
        except DecisionsUnavailable as exc:
            return self._write(user_id, extract_again(exc.as_failure()), create=False)

    # ---- the pipeline's steps -------------------------------------------------------

    def extract(
        self,
        user_id: str,
        message_id: str,
        message: str,
        turns: Sequence[Turn],
        known: Sequence[str],
        known_prefs: Sequence[str] = (),
        said_at: datetime | None = None,
    ) -> Said:
        """The extractor's answer, or why there is none (the message is recorded either way);
        an extractor that reads known preferences (``ReadsKnownPreferences``) is shown ``known_prefs``,
        one that hears when a message was said (``HearsWhenSaid``) is told ``said_at`` too."""
        extractor = self.extractor
        with calls_for(user_id, message_id, "extract", self.ledger.storage_key):
            try:
                if self._offers(HearsWhenSaid):
                    return cast(HearsWhenSaid, extractor).extract_said_at(message, turns, known, known_prefs, said_at)
                if self._offers(ReadsKnownPreferences):
                    return cast(ReadsKnownPreferences, extractor).extract_knowing_preferences(
                        message, turns, known, known_prefs
                    )
                return extractor.extract(message, turns, known)
            except ExtractionFailure as exc:
                logger.warning("extraction failed for %r/%r: %s", user_id, message_id, exc.reason)
                return exc
            except LLMUnavailable as exc:
                logger.warning("extraction failed for %r/%r: %s", user_id, message_id, exc)
                return ExtractionFailure(str(exc), extractor_id=self.extractor.extractor_id)

    def decide(
        self,
        memory: UserMemory,
        user_id: str,
        message_id: str,
        said: Said,
        at: datetime,
        session_id: str | None,
        shown: Sequence[str] = (),
    ) -> IngestResult:
        """Record what the extractor said about a message and decide on every item.

        ``shown``: the known facts the extractor was given with the message.
        """
        if isinstance(said, ExtractionFailure):
            memory.record_extraction_failure(
                message_id, said.extractor_id, said.reason, said.raw_output, said.prompt_id
            )
            return IngestResult(
                user_id=user_id,
                message_id=message_id,
                facts=(),
                preferences=(),
                items=(),
                extractor_id=said.extractor_id,
                notification_id=None,
                status="extraction_failed",
            )
        memory.record_extraction(message_id, said)
        with calls_for(user_id, message_id, "decide", self.ledger.storage_key):
            try:
                outcomes = self.decider.apply(
                    memory, said, message_id, at, session_id, self.compared(said, shown), self.names_replaced(said)
                )
            except LLMUnavailable as exc:
                raise DecisionsUnavailable(said, exc) from exc
        return IngestResult(
            user_id=user_id,
            message_id=message_id,
            facts=tuple(f.text for f in said.facts),
            preferences=tuple(p.text for p in said.preferences),
            items=tuple(outcomes),
            extractor_id=said.extractor_id,
            notification_id=None,
        )

    def compared(self, said: Extraction, shown: Sequence[str]) -> KnownFactsCompared | None:
        """The known facts ``said`` is the relation check for (ADR 0019): those shown, when the
        extractor that answered relates its facts to them; else None (a judge decides)."""
        extractor = self.extractor
        if not shown or not self._offers(ComparesKnownFacts) or said.extractor_id != extractor.extractor_id:
            return None
        prompt_id = cast(ComparesKnownFacts, extractor).comparison_prompt_id(said)
        return KnownFactsCompared(frozenset(shown), prompt_id) if prompt_id else None

    def names_replaced(self, said: Extraction) -> bool:
        """Whether ``said``'s ``conflicts_with`` names facts it replaces (``NamesReplacedFacts``)."""
        extractor = self.extractor
        return (
            self._offers(NamesReplacedFacts)
            and said.extractor_id == extractor.extractor_id
            and cast(NamesReplacedFacts, extractor).names_replaced_facts
        )

    def repeated(self, message: Prepared) -> IngestResult:
        """The answer to a message whose id is recorded already: ``duplicate`` for a retry (the
        text recorded, or one recorded before texts were hashed), else ``MessageIdReused``."""
        recorded = self.ledger.recorded_text_hash(message.user_id, message.message_id)
        if recorded is not None and recorded != self.ledger.text_hash(message.text):
            raise MessageIdReused(message.user_id, message.message_id)
        return self.already_done(message.user_id, message.message_id)

    def already_done(self, user_id: str, message_id: str) -> IngestResult:
        """A message already recorded (or extracted meanwhile): nothing new is written."""
        return IngestResult(
            user_id=user_id,
            message_id=message_id,
            facts=(),
            preferences=(),
            items=(),
            extractor_id=self.extractor.extractor_id,
            notification_id=None,
            status="duplicate",
        )

    def _write(
        self,
        user_id: str,
        change: Callable[[UserMemory], IngestResult],
        *,
        create: bool = True,
        loaded: UserMemory | None = None,
        looked_up: bool = False,
        new_message_id: str | None = None,
        new_message_hash: str | None = None,
        on_duplicate: Callable[[], IngestResult] | None = None,
    ) -> IngestResult:
        result, position = self.writer.write(
            user_id,
            change,
            create=create,
            loaded=loaded,
            looked_up=looked_up,
            new_message_id=new_message_id,
            new_message_hash=new_message_hash,
            on_duplicate=on_duplicate,
        )
        return result if position is None else attrs.evolve(result, notification_id=position)
