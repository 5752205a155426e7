"""``LedgerService``: the API a backend embeds (ingest, profile, recall, history, …)."""

from __future__ import annotations

import logging
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
from factledger.application.ports import (
    Embedder,
    ExtractionFailure,
    Extractor,
    MemoryReadModel,
    ReadModelUpdater,
    RecallHit,
    RelationJudge,
)
from factledger.application.replay import LedgerDirectory
from factledger.application.results import (
    IngestResult,
    InvalidInput,
    NothingToWrite,
    context_turns,
    history_entry,
    require_text,
    resolve_prefix,
    utc,
)
from factledger.domain.memory import UserMemory
from factledger.domain.values import Extraction

__all__ = ["IngestResult", "InvalidInput", "LedgerService", "resolve_prefix"]

logger = logging.getLogger(__name__)

MEMORY_TYPES = ("fact", "preference")
SAVE_ATTEMPTS = 5
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
        ``timestamp`` is the message's time (default: now).
        """
        user_id = require_text("user_id", user_id).strip()
        message = require_text("message", message)
        if session_id is not None and not isinstance(session_id, str):
            raise InvalidInput(f"session_id must be a string, got {type(session_id).__name__}")
        turns = context_turns(context)
        at = utc(timestamp)
        message_id = message_id or str(uuid.uuid4())

        memory = self.ledger.find_memory(user_id)
        if memory is not None and message_id in memory.recent_message_ids:
            return self._already_ingested(user_id, message_id)
        known = [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:] if memory else []
        failure: ExtractionFailure | None = None
        extraction: Extraction | None = None
        with calls_for(user_id, message_id, "extract", self.ledger.storage_key):
            try:
                extraction = self.extractor.extract(message, turns, known)
            except ExtractionFailure as exc:
                logger.warning("extraction failed for %s/%s: %s", user_id, message_id, exc.reason)
                failure = exc

        def record(memory: UserMemory) -> IngestResult:
            if message_id in memory.recent_message_ids:  # a concurrent delivery got there first
                raise NothingToWrite(self._already_ingested(user_id, message_id))
            memory.ingest_message(
                message_id=message_id, text=message, at=at, session_id=session_id,
                context=[turn.as_dict() for turn in turns],
            )
            if extraction is None:
                assert failure is not None
                memory.record_extraction_failure(
                    message_id, failure.extractor_id, failure.reason, failure.raw_output, failure.prompt_id
                )
                return IngestResult(
                    user_id=user_id, message_id=message_id, facts=(), preferences=(), items=(),
                    extractor_id=failure.extractor_id, notification_id=None, status="extraction_failed",
                )
            memory.record_extraction(message_id, extraction.as_dict())
            with calls_for(user_id, message_id, "decide", self.ledger.storage_key):
                outcomes = self.decider.apply(memory, extraction, message_id, at, session_id)
            return IngestResult(
                user_id=user_id, message_id=message_id,
                facts=tuple(f.text for f in extraction.facts),
                preferences=tuple(p.text for p in extraction.preferences),
                items=tuple(outcomes), extractor_id=extraction.extractor_id, notification_id=None,
            )

        return self._write(user_id, record, loaded=memory)

    def _write(
        self, user_id: str, change: Callable[[UserMemory], T], *, create: bool = True,
        loaded: UserMemory | None = None,
    ) -> T:
        """Load the user's memory, apply ``change`` and save its events in one transaction.

        A concurrent write to the same user makes the save fail: the memory is
        loaded again and ``change`` decides again on the fresh state. An
        ``IngestResult`` returned by ``change`` gets the notification id.
        """
        for attempt in range(1, SAVE_ATTEMPTS + 1):
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
            try:
                recordings = self.ledger.save(memory)
            except IntegrityError:
                logger.info("concurrent write for %s, deciding again (%d)", user_id, attempt)
                if attempt == SAVE_ATTEMPTS:
                    raise
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
        user_id = require_text("user_id", user_id).strip()
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
        user_id = require_text("user_id", user_id).strip()
        memory = self._require_memory(user_id)
        full_id = resolve_prefix(item_id, list(memory.facts) + list(memory.preferences), "fact or preference")
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
        user_id = require_text("user_id", user_id).strip()
        query = require_text("query", query)
        chosen = tuple(types) if types else MEMORY_TYPES
        unknown = [t for t in chosen if t not in MEMORY_TYPES]
        if unknown:
            raise InvalidInput(f"unknown memory type(s) {unknown}; use 'fact' or 'preference'")
        if not isinstance(top_k, int) or top_k < 1:
            raise InvalidInput(f"top_k must be a positive integer, got {top_k!r}")
        if not 0.0 <= float(min_similarity) <= 1.0:
            raise InvalidInput(f"min_similarity must be in [0, 1], got {min_similarity!r}")
        vector = self.embedder.embed([query])[0]
        return self.read_model.search(user_id, vector, chosen, top_k, float(min_similarity))

    def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: str | None = None,
    ) -> list[dict[str, Any]]:
        """Events recorded for the user, oldest first, as plain dicts; optionally only
        those recorded in [since, until] and of one kind (message | fact | preference)."""
        user_id = require_text("user_id", user_id).strip()
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
        """The read model's position against the head of the event log."""
        return self._require_projector().status()

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
