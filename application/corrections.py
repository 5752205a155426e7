"""Operations that change memories outside the normal ingest: retries and manual corrections."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from eventsourcing.utils import get_topic

from factledger.application.calls import calls_for
from factledger.application.decisions import DecisionSource, Outcome
from factledger.application.ports import ExtractionFailure
from factledger.application.results import DecisionsUnavailable, IngestResult, NothingToWrite, resolve_prefix
from factledger.application.validation import clean_text, optional_id, require_id, require_unit, utc
from factledger.domain.memory import UserMemory
from factledger.domain.values import Authority, ExtractedFact, Extraction, InvalidationRelation, Turn

if TYPE_CHECKING:
    from factledger.application.service import LedgerService

KNOWN_FACTS_FOR_EXTRACTOR = 20


class Corrections:
    """``retry_failed``, ``invalidate`` and ``restate`` of :class:`LedgerService`."""

    def retry_failed(
        self: LedgerService, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """Extract again every message whose extraction failed (all users, or one)."""
        users = [user_id] if user_id else self._users_with_failures()
        pending = []
        for user in users:
            memory = self.ledger.find_memory(user)
            if memory is not None and memory.failed_extractions:
                pending.extend((user, mid) for mid in memory.failed_extractions)
        results = []
        for done, (user, message_id) in enumerate(pending, start=1):
            results.append(self._retry_one(user, message_id))
            if progress:
                progress(done, len(pending))
        return results

    def _users_with_failures(self: LedgerService) -> list[str]:
        topic = get_topic(UserMemory.ExtractionFailed)
        originators: dict[Any, None] = {}
        start = None
        while batch := self.ledger.recorder.select_notifications(start=start, limit=1000, topics=[topic]):
            originators.update((n.originator_id, None) for n in batch)
            start = batch[-1].id + 1
        # The first event (Started) names the user: no need to load whole aggregates.
        return [next(iter(self.ledger.events.get(originator_id, lte=1))).user_id for originator_id in originators]

    def _retry_one(self: LedgerService, user_id: str, message_id: str) -> IngestResult:
        message = next(
            e for e in self.ledger.user_events(user_id)
            if isinstance(e, UserMemory.MessageIngested) and e.message_id == message_id
        )
        turns = [Turn.from_dict(t) for t in message.context]

        memory = self._require_memory(user_id)
        if message_id not in memory.failed_extractions:  # extracted meanwhile: never extract twice
            return self._already_ingested(user_id, message_id)
        known = [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:]
        said = self._extract(user_id, message_id, message.text, turns, known)

        def extract_again(said: Extraction | ExtractionFailure) -> Callable[[UserMemory], IngestResult]:
            def change(memory: UserMemory) -> IngestResult:
                if message_id not in memory.failed_extractions:  # another retry got there first
                    raise NothingToWrite(self._already_ingested(user_id, message_id))
                return self._decide(memory, user_id, message_id, said, message.at, message.session_id)
            return change

        try:
            return self._write(user_id, extract_again(said), create=False, loaded=memory)
        except DecisionsUnavailable as exc:
            return self._write(user_id, extract_again(exc.as_failure()), create=False)

    def invalidate(self: LedgerService, user_id: str, fact_id: str, reason: str, actor: str | None = None) -> str:
        """An operator marks a fact wrong: ``FactInvalidated(relation=manual)``. Returns the fact id.

        ``fact_id`` may be a unique prefix of the id.
        """
        user_id = require_id("user_id", user_id, self.limits)
        reason = clean_text("reason", reason, self.limits.message_chars, "max_message_chars")
        actor = optional_id("actor", actor, self.limits)

        def mark_wrong(memory: UserMemory) -> str:
            full_id = resolve_prefix(fact_id, [*memory.facts, *memory.retired_facts], "fact")
            memory.invalidate_fact(full_id, InvalidationRelation.MANUAL, reason, utc(None), actor=actor)
            return full_id

        return self._write(user_id, mark_wrong, create=False)

    def restate(
        self: LedgerService, user_id: str, text: str, category: str = "other", actor: str | None = None,
        confidence: float = 1.0,
    ) -> Outcome:
        """An operator records a fact (authority ``manual``); a similar automatic fact it
        updates or contradicts is invalidated, and nothing automatic overrides it later."""
        user_id = require_id("user_id", user_id, self.limits)
        actor = optional_id("actor", actor, self.limits)
        fact = ExtractedFact(clean_text("text", text, self.limits.message_chars, "max_message_chars"), category,
                             require_unit("confidence", confidence))

        def record(memory: UserMemory) -> Outcome:
            source = DecisionSource("manual", None, None, None, utc(None), actor)
            with calls_for(user_id, None, "decide", self.ledger.storage_key):
                return self.decider.save_fact(memory, fact, str(uuid.uuid4()), Authority.MANUAL, source)

        return self._write(user_id, record)
