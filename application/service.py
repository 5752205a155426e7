"""``LedgerService``: the API a backend embeds (ingest, profile, recall, history, …)."""

from __future__ import annotations

import logging
import random
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from attrs import evolve as attrs_evolve
from eventsourcing.persistence import IntegrityError

from factledger.application.audit import (
    HISTORY_KINDS,
    PROFILE_FACTS,
    PROFILE_PREFERENCES,
    explain,
    memory_as_of,
    profile_of,
    profile_shape,
    select_history,
)
from factledger.application.calls import calls_for
from factledger.application.corrections import KNOWN_FACTS_FOR_EXTRACTOR, Corrections
from factledger.application.decisions import Decider
from factledger.application.ledger import MemoryLedger
from factledger.application.ledger_operations import LedgerOperations
from factledger.application.errors import LLMUnavailable, WriteConflict
from factledger.application.ports import (
    Embedder,
    ExtractionFailure,
    Extractor,
    MemoryReadModel,
    MessageAlreadyRecorded,
    ReadModelUpdater,
    RecallHit,
    RelationJudge,
    StoreBusy,
)
from factledger.application.replay import LedgerDirectory
from factledger.application.results import (
    DecisionsUnavailable,
    IngestResult,
    NothingToWrite,
    history_entry,
    resolve_prefix,
)
from factledger.application.validation import (
    DEFAULT_LIMITS,
    InputLimits,
    InvalidInput,
    clean_text,
    context_turns,
    message_time,
    optional_id,
    require_id,
    require_top_k,
    require_unit,
    utc,
)
from factledger.domain.memory import UserMemory
from factledger.domain.values import Extraction, Turn

__all__ = ["IngestResult", "InputLimits", "InvalidInput", "LedgerService", "WriteConflict", "resolve_prefix"]

logger = logging.getLogger(__name__)

MEMORY_TYPES = ("fact", "preference")
# Enough for 8 writers on one user (tested); the pauses grow to MAX_PAUSE_S, jittered.
WRITE_ATTEMPTS = 40
FIRST_PAUSE_S = 0.005
MAX_PAUSE_S = 0.5
T = TypeVar("T")


class LedgerService(Corrections, LedgerOperations):
    """Ingests messages into per-user memories and answers questions about them.

    Wire it with :func:`factledger.open_ledger` (PostgreSQL, embedded by
    default) or pass the parts yourself.
    """

    def __init__(
        self,
        ledger: MemoryLedger,
        extractor: Extractor,
        judge: RelationJudge,
        embedder: Embedder,
        read_model: MemoryReadModel,
        projector: ReadModelUpdater | None = None,
        *,
        inline_projection: bool = True,
        fact_similarity: float = 0.75,
        preference_similarity: float = 0.7,
        on_close: Callable[[], None] | None = None,
        ledger_name: str = "live",
        directory: LedgerDirectory | None = None,
        limits: InputLimits = DEFAULT_LIMITS,
        write_attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        self.ledger = ledger
        self.extractor = extractor
        self.judge = judge
        self.embedder = embedder
        self.read_model = read_model
        self.projector = projector
        self.inline_projection = inline_projection and projector is not None
        self.decider = Decider(
            judge=judge,
            embedder=embedder,
            fact_similarity=fact_similarity,
            preference_similarity=preference_similarity,
        )
        self._on_close = on_close
        self.ledger_name = ledger_name
        self.directory = directory
        self.limits = limits
        self.write_attempts = write_attempts

    # ---- commands -------------------------------------------------------------

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
        """Extract facts and preferences from one user message and record them.

        All events of the message are recorded in one transaction, or none.
        ``context`` holds earlier turns (``{"role", "content"}``), oldest first;
        ``timestamp`` is the message's time (default: now). A ``message_id``
        recorded before for this user, at any time, records nothing again
        (``status="duplicate"``). Input beyond ``InputLimits`` raises
        ``InvalidInput``; a write that keeps colliding with concurrent writers
        raises ``WriteConflict``.
        """
        limits = self.limits
        user_id = require_id("user_id", user_id, limits)
        message = clean_text("message", message, limits.message_chars, "max_message_chars")
        session_id = optional_id("session_id", session_id, limits)
        message_id = optional_id("message_id", message_id, limits) or str(uuid.uuid4())
        turns = context_turns(context, limits)
        at = message_time(timestamp)

        memory = self.ledger.find_memory(user_id)
        if self.ledger.has_message(user_id, message_id, memory):
            return self._already_ingested(user_id, message_id)
        known = [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:] if memory else []
        said = self._extract(user_id, message_id, message, turns, known)

        def record(outcome: Extraction | ExtractionFailure) -> Callable[[UserMemory], IngestResult]:
            def change(memory: UserMemory) -> IngestResult:
                if message_id in memory.recent_message_ids:  # a concurrent delivery got there first
                    raise NothingToWrite(self._already_ingested(user_id, message_id))
                memory.ingest_message(
                    message_id=message_id, text=message, at=at, session_id=session_id,
                    context=[turn.as_dict() for turn in turns],
                )
                return self._decide(memory, user_id, message_id, outcome, at, session_id)
            return change

        try:
            return self._write(user_id, record(said), loaded=memory, new_message_id=message_id)
        except DecisionsUnavailable as exc:
            return self._write(user_id, record(exc.as_failure()), new_message_id=message_id)

    def _extract(
        self, user_id: str, message_id: str, message: str, turns: Sequence[Turn], known: Sequence[str]
    ) -> Extraction | ExtractionFailure:
        """The extractor's answer, or why there is none (the message is recorded either way)."""
        with calls_for(user_id, message_id, "extract", self.ledger.storage_key):
            try:
                return self.extractor.extract(message, turns, known)
            except ExtractionFailure as exc:
                logger.warning("extraction failed for %r/%r: %s", user_id, message_id, exc.reason)
                return exc
            except LLMUnavailable as exc:
                logger.warning("extraction failed for %r/%r: %s", user_id, message_id, exc)
                return ExtractionFailure(str(exc), extractor_id=self.extractor.extractor_id)

    def _decide(
        self, memory: UserMemory, user_id: str, message_id: str, said: Extraction | ExtractionFailure,
        at: datetime, session_id: str | None,
    ) -> IngestResult:
        """Record what the extractor said about a message and decide on every item."""
        if isinstance(said, ExtractionFailure):
            memory.record_extraction_failure(message_id, said.extractor_id, said.reason, said.raw_output, said.prompt_id)
            return IngestResult(
                user_id=user_id, message_id=message_id, facts=(), preferences=(), items=(),
                extractor_id=said.extractor_id, notification_id=None, status="extraction_failed",
            )
        memory.record_extraction(message_id, said)
        with calls_for(user_id, message_id, "decide", self.ledger.storage_key):
            try:
                outcomes = self.decider.apply(memory, said, message_id, at, session_id)
            except LLMUnavailable as exc:
                raise DecisionsUnavailable(said, exc) from exc
        return IngestResult(
            user_id=user_id, message_id=message_id,
            facts=tuple(f.text for f in said.facts),
            preferences=tuple(p.text for p in said.preferences),
            items=tuple(outcomes), extractor_id=said.extractor_id, notification_id=None,
        )

    def _write(
        self, user_id: str, change: Callable[[UserMemory], T], *, create: bool = True,
        loaded: UserMemory | None = None, new_message_id: str | None = None,
    ) -> T:
        """Load the user's memory, apply ``change`` and save its events in one transaction.

        A concurrent write to the same user makes the save fail: after a
        jittered, growing pause the memory is loaded again and ``change``
        decides again on the fresh state, up to ``write_attempts`` times, then
        ``WriteConflict``. ``new_message_id``: the message this write records,
        kept in the store's message-id index in the same transaction. An
        ``IngestResult`` returned by ``change`` gets the notification id.
        """
        for attempt in range(1, self.write_attempts + 1):
            # The caller's freshly loaded copy saves a load on the first attempt;
            # if it went stale, the save fails and the next attempt reloads.
            memory = loaded if attempt == 1 and loaded is not None else self.ledger.find_memory(user_id)
            if memory is None:
                if not create:
                    raise InvalidInput(f"nothing is recorded for user {user_id!r}")
                memory = UserMemory.start(user_id)
            try:
                value = change(memory)
            except NothingToWrite as done:
                return done.value  # type: ignore[no-any-return]
            message_ids = [(memory.id, new_message_id)] if new_message_id is not None else []
            try:
                recordings = self.ledger.save(memory, message_ids=message_ids)
            except MessageAlreadyRecorded:
                return self._already_ingested(user_id, str(new_message_id))  # type: ignore[return-value]
            except (IntegrityError, StoreBusy) as exc:
                if attempt == self.write_attempts:
                    raise WriteConflict(user_id, attempt) from exc
                pause = random.uniform(0, min(MAX_PAUSE_S, FIRST_PAUSE_S * 2 ** (attempt - 1)))
                logger.info("concurrent write for %r, deciding again in %.3fs (%d)", user_id, pause, attempt)
                time.sleep(pause)
                continue
            self._project()
            if isinstance(value, IngestResult) and recordings:
                value = attrs_evolve(value, notification_id=recordings[-1].notification.id)  # type: ignore[assignment]
            return value
        raise AssertionError("unreachable")

    def _already_ingested(self, user_id: str, message_id: str) -> IngestResult:
        """A retried delivery of a message already recorded: nothing new is written."""
        return IngestResult(
            user_id=user_id, message_id=message_id, facts=(), preferences=(), items=(),
            extractor_id=self.extractor.extractor_id, notification_id=None, status="duplicate",
        )

    def _require_memory(self, user_id: str) -> UserMemory:
        memory = self.ledger.find_memory(user_id)
        if memory is None:
            raise InvalidInput(f"nothing is recorded for user {user_id!r}")
        return memory

    def _project(self) -> None:
        if not self.inline_projection or self.projector is None:
            return
        try:
            self.projector.catch_up()
        except Exception:  # the events are recorded; the read model can catch up later
            logger.exception("inline projection failed; run `factledger projection follow` or rebuild")

    # ---- queries ----------------------------------------------------------------

    def profile(self, user_id: str, as_of: datetime | None = None) -> dict[str, Any]:
        """The spec's ``get_user_profile``: active facts and preferences grouped by category.

        With ``as_of``, computed from the events recorded up to that time (no
        read model), i.e. what ``profile`` said then.
        """
        user_id = require_id("user_id", user_id, self.limits)
        if as_of is not None:
            events = list(self.ledger.user_events(user_id)) if self.ledger.find_memory(user_id) else []
            return profile_of(memory_as_of(events, utc(as_of)), user_id)
        facts = self.read_model.items(user_id, "fact", PROFILE_FACTS)
        prefs = self.read_model.items(user_id, "preference", PROFILE_PREFERENCES)
        return profile_shape(
            user_id,
            [(f.category, {"fact": f.content, "confidence": f.metadata.get("confidence", 0.5),
                           "times_mentioned": f.metadata.get("times_mentioned", 1), "id": f.id}) for f in facts],
            [(p.category, {"preference": p.content, "strength": p.metadata.get("strength", 0.5), "id": p.id})
             for p in prefs],
        )

    def why(self, user_id: str, item_id: str) -> dict[str, Any]:
        """The whole life of a fact or preference: observation, confirmations,
        reinforcements, contests and invalidation, each with its message and provenance.
        ``item_id`` may be a unique prefix."""
        user_id = require_id("user_id", user_id, self.limits)
        memory = self._require_memory(user_id)
        full_id = resolve_prefix(item_id, memory.item_ids(), "fact or preference")
        return explain(list(self.ledger.user_events(user_id)), full_id)

    def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float = 0.0,
    ) -> list[RecallHit]:
        """Active memories most similar to ``query``, best first."""
        user_id = require_id("user_id", user_id, self.limits)
        query = clean_text("query", query, self.limits.query_chars, "max_query_chars")
        chosen = tuple(types) if types else MEMORY_TYPES
        unknown = [t for t in chosen if t not in MEMORY_TYPES]
        if unknown:
            raise InvalidInput(f"unknown memory type(s) {unknown}; use 'fact' or 'preference'")
        top_k = require_top_k(top_k, self.limits)
        threshold = require_unit("min_similarity", min_similarity)
        vector = self.embedder.embed([query])[0]
        return self.read_model.search(user_id, vector, chosen, top_k, threshold)

    def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str | None = None,
    ) -> list[dict[str, Any]]:
        """Events recorded for the user, oldest first, as plain dicts; optionally only
        those recorded in [since, until] and of one kind (message | fact | preference)."""
        user_id = require_id("user_id", user_id, self.limits)
        if kind is not None and kind not in HISTORY_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(HISTORY_KINDS)}, got {kind!r}")
        if self.ledger.find_memory(user_id) is None:
            return []
        events = select_history(
            self.ledger.user_events(user_id),
            since=None if since is None else utc(since),
            until=None if until is None else utc(until),
            kind=kind,
        )
        return [history_entry(e) for e in events]

    # ---- read model -------------------------------------------------------------

    def _require_projector(self) -> ReadModelUpdater:
        if self.projector is None:
            raise RuntimeError("this service was built without a projector")
        return self.projector

    def catch_up(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Project every event not yet in the read model."""
        return self._require_projector().catch_up(progress)

    def rebuild_read_model(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Drop the read model and rebuild it from the events (no LLM is called)."""
        return self._require_projector().rebuild(progress)

    def read_model_status(self) -> Any:
        """The read model's position against the head of the event log, and how many events it quarantined."""
        return self._require_projector().status()

    def quarantined_events(self, limit: int = 100) -> list[dict[str, Any]]:
        """Events the read model could not store (with the error), oldest first."""
        return self._require_projector().quarantined(limit)

    def follow(
        self, stop: threading.Event, poll_interval: float = 1.0, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Keep the read model up to date until ``stop`` is set (a ``projection follow`` process)."""
        self._require_projector().follow(stop, poll_interval, on_batch)

    def close(self) -> None:
        """Release the connections. (An embedded server stops by itself when the last
        process using its data directory exits.)"""
        self.ledger.close()
        if self._on_close:
            self._on_close()

    def __enter__(self) -> LedgerService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
