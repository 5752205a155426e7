"""``LedgerService``: the one object a backend embeds.

A thin façade over the use cases, each in its own module: ``Ingestion``
(ingest, retry-failed), ``Corrections`` (invalidate, restate), ``Queries``
(profile, recall, memory context, why, history), ``Ledgers`` (replay, diff,
promote) and the read model's ``ReadModelUpdater``. Open one with
``factledger.open_ledger()``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from factledger.application.bulk import BulkIngestion
from factledger.application.components import Components
from factledger.application.corrections import Corrections
from factledger.application.decisions import Decider, Outcome
from factledger.application.errors import FactledgerError, InvalidInput, WriteConflict
from factledger.application.ingestion import Incoming, Ingestion
from factledger.application.json_values import json_ready
from factledger.application.ledgers import Ledgers
from factledger.application.people import USERS_PAGE, UserPage, list_users
from factledger.application.ports import (
    ProjectionStatus,
    ReadModelUpdater,
    RecallHit,
    Tombstone,
)
from factledger.application.privacy import Privacy
from factledger.application.queries import Queries
from factledger.application.replay import ReplayEstimate, ReplayReport
from factledger.application.results import Diff, Explanation, HistoryPage, IngestResult, MemoryContext, Profile
from factledger.application.validation import InputLimits, optional_id
from factledger.application.writing import MemoryWriter
from factledger.domain.kinds import Clock, HistoryKind

__all__ = ["Incoming", "IngestResult", "InputLimits", "InvalidInput", "LedgerService", "WriteConflict"]

logger = logging.getLogger(__name__)


class LedgerService:
    """Ingests messages into per-user memories and answers questions about them.

    Every method validates its input (``InvalidInput`` names the field and the
    limit) before anything is recorded. Errors are ``FactledgerError``s
    (``factledger.application.errors``).
    """

    def __init__(self, components: Components) -> None:
        parts, tuning = components, components.tuning
        self.components = components
        self.ledger = ledger = parts.ledger
        self.extractor = parts.extractor
        self.judge = parts.judge
        self.embedder = parts.embedder
        self.read_model = parts.read_model
        self.projector = parts.projector
        self.inline_projection = tuning.inline_projection and parts.projector is not None
        self.ledger_name = parts.ledger_name
        self.directory = parts.directory
        self.usage_log = parts.usage
        self.limits = limits = tuning.limits
        decider = Decider(
            judge=parts.judge,
            embedder=parts.embedder,
            fact_similarity=tuning.fact_similarity,
            preference_similarity=tuning.preference_similarity,
            free_judge=parts.free_judge,
            candidate_cache_bytes=tuning.candidate_cache_bytes,
        )
        self.writer = MemoryWriter(ledger, after_save=self._project, attempts=tuning.write_attempts)
        self.ingestion = Ingestion(ledger, self.writer, parts.extractor, decider, limits, tuning.policies)
        # Threads help only while a call is in flight: the offline extractor keeps to one.
        workers = 1 if self.offline else tuning.bulk_workers
        self.bulk = BulkIngestion(self.ingestion, self.writer, workers=workers)
        self.corrections = Corrections(ledger, self.writer, decider, limits, tuning.policies)
        self.queries = Queries(ledger, parts.read_model, parts.embedder, limits)
        self._ledgers = (
            Ledgers(ledger, parts.ledger_name, parts.read_model, parts.embedder, parts.directory)
            if parts.directory
            else None
        )
        self.privacy = Privacy(ledger, parts.ledger_name, parts.eraser, limits)

    @property
    def offline(self) -> bool:
        """True when the offline rule extractor decides (no LLM endpoint configured)."""
        return self.extractor.extractor_id.startswith("offline")

    # ---- writing ---------------------------------------------------------------------

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
        (``status="duplicate"``). When the extractor (or a service the decisions
        need) is down, the message is recorded with ``status="extraction_failed"``
        for ``retry_failed``. A write that keeps meeting concurrent writers raises
        ``WriteConflict``.
        """
        try:
            return self.ingestion.ingest(
                user_id, message, session_id, context, message_id=message_id, timestamp=timestamp
            )
        finally:
            self._settle_usage()

    def ingest_many(self, messages: Sequence[Incoming]) -> list[IngestResult | FactledgerError]:
        """Ingest many messages, in order, as ``ingest`` one after another would, saving
        them in groups of up to 64 (one transaction each) instead of one by one.

        Returns one outcome per message: its ``IngestResult``, or the error that
        kept it out (``InvalidInput``; ``WriteConflict`` or ``StoreBusy``) — a
        bad message never keeps the others out. A group's messages are recorded
        all or none; a group whose save meets a concurrent writer is ingested
        again message by message.
        """
        try:
            return self.bulk.ingest_many(messages)
        finally:
            self._settle_usage()

    def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
    ) -> list[IngestResult]:
        """Extract again every message whose extraction failed (all users, or one)."""
        try:
            return self.ingestion.retry_failed(user_id, progress)
        finally:
            self._settle_usage()

    def _settle_usage(self) -> None:
        if self.usage_log is not None:
            self.usage_log.settle()

    def invalidate(
        self, user_id: str, fact_id: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> str:
        """An operator marks a fact wrong (``fact_id`` may be a unique prefix); returns its full id."""
        return self.corrections.invalidate(user_id, fact_id, reason, actor, at)

    def restate(
        self,
        user_id: str,
        text: str,
        category: str = "other",
        actor: str | None = None,
        confidence: float = 1.0,
        at: datetime | None = None,
    ) -> Outcome:
        """An operator records a fact that nothing automatic will override (``at``: when, default now)."""
        return self.corrections.restate(user_id, text, category, actor, confidence, at)

    # ---- reading -----------------------------------------------------------------------

    def knows(self, user_id: str) -> bool:
        """Whether anything is recorded for ``user_id`` (reads answer an unknown user empty, ``known`` False)."""
        return self.queries.knows(user_id)

    def users(self, search: str = "", offset: int = 0, limit: int = USERS_PAGE) -> UserPage:
        """A page of this ledger's users (ids containing ``search``), each with its messages, active
        and retired items and last activity (an operator's list: it reads every message recorded)."""
        return list_users(self.ledger, self.read_model, self.limits, search, offset, limit)

    def profile(
        self,
        user_id: str,
        as_of: datetime | None = None,
        clock: Clock = "said",
        *,
        limit: int | None = None,
        offset: int = 0,
    ) -> Profile:
        """A page of the active facts and preferences, most important first (``.to_dict()``: the
        spec's shape, with ``facts_total`` and ``preferences_total``): ``limit`` of each from
        ``offset`` on, by default the first 50 facts and 20 preferences. With ``as_of``, as they
        were then, computed from the events: by when things were said (``clock="said"``, the
        messages' times) or when they were recorded."""
        return self.queries.profile(user_id, as_of, clock, limit=limit, offset=offset)

    def recall(
        self,
        user_id: str,
        query: str,
        types: Sequence[str] | None = None,
        top_k: int = 5,
        min_similarity: float | None = None,
    ) -> list[RecallHit]:
        """Active memories similar to ``query``, best first (threshold: the embedder's by default)."""
        return self.queries.recall(user_id, query, types, top_k, min_similarity)

    def memory_context(self, user_id: str, query: str, top_k: int = 5, language: str = "auto") -> MemoryContext:
        """The profile and the items relevant to ``query``; ``.text`` is a system-prompt block."""
        return self.queries.memory_context(user_id, query, top_k, language)

    def why(self, user_id: str, item_id: str) -> Explanation:
        """The whole life of a fact or preference (``item_id`` may be a unique prefix)."""
        return self.queries.why(user_id, item_id)

    def history(
        self,
        user_id: str,
        since: datetime | None = None,
        until: datetime | None = None,
        kind: HistoryKind | None = None,
        *,
        offset: int = 0,
        limit: int | None = None,
        clock: Clock = "said",
    ) -> HistoryPage:
        """The user's events in recorded order, optionally filtered (by when they were said,
        or ``clock="recorded"``) and paged."""
        return self.queries.history(user_id, since, until, kind, offset=offset, limit=limit, clock=clock)

    def usage(self, user_id: str | None = None) -> dict[str, Any]:
        """LLM and embedding calls, tokens, latency and cache hits per message (the ``llm_calls`` log),
        and ``redacted``: the secrets replaced by placeholders before recording, by kind."""
        if self.usage_log is None:
            raise InvalidInput("this ledger keeps no usage log")
        user_id = optional_id("user_id", user_id, self.limits)
        report = self.usage_log.report(user_id)
        report["redacted"] = self.ledger.redaction_counts(user_id)
        return report

    def usage_by_day(self, days: int = 30) -> list[dict[str, Any]] | None:
        """LLM and embedding calls, tokens and failures per UTC day of the last ``days`` days, oldest
        first; None when the ledger keeps no usage log (the in-memory backend)."""
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 366:
            raise InvalidInput(f"days must be an integer from 1 to 366, got {days!r}")
        return self.usage_log.daily(days) if self.usage_log is not None else None

    def usage_totals(self) -> dict[str, int]:
        """Calls, tokens and cache hits of the whole ledger, without per-message rows (for metrics);
        empty when the ledger keeps no usage log."""
        return self.usage_log.totals() if self.usage_log is not None else {}

    # ---- a person's rights --------------------------------------------------------------

    def forget(self, user_id: str, actor: str = "operator") -> Tombstone:
        """Remove every trace of the user's words from every ledger of the store (events,
        snapshots, read model, cached vectors and LLM answers, call log), in one transaction,
        and record a ``Tombstone`` (no personal data). The id may be used again: it starts empty."""
        return self.privacy.forget(user_id, actor)

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        """Recorded forgets, newest first; with ``user_id``, whether (and when) it was forgotten."""
        return self.privacy.tombstones(user_id)

    def export(self, user_id: str) -> dict[str, Any]:
        """The user's whole memory as JSON-ready data: every message, fact and preference
        with its history (for an access request)."""
        return self.privacy.export(user_id)

    # ---- ledgers ------------------------------------------------------------------------

    def _require_ledgers(self) -> Ledgers:
        if self._ledgers is None:
            raise InvalidInput("this service was built without a ledger directory")
        return self._ledgers

    def ledgers(self) -> list[dict[str, Any]]:
        """Every ledger with its extractor and event count."""
        return self._require_ledgers().ledgers()

    def replay(
        self,
        into: str,
        extractor: str | None = None,
        *,
        rules: str | None = None,
        prompts: str | None = None,
        users: Sequence[str] | None = None,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        share: tuple[int, int] | None = None,
    ) -> ReplayReport:
        """Re-decide this ledger's messages with another extractor into the ledger ``into`` (resumable).
        ``share=(index, count)``: only that share of the users, resumed from its own position; run
        the ``count`` shares at once, each in a process of its own (``replay --processes``, ADR 0041)."""
        return self._require_ledgers().replay(
            into, extractor, rules=rules, prompts=prompts, users=users, limit=limit, progress=progress, share=share
        )

    def estimate_replay(
        self,
        extractor: str | None = None,
        *,
        rules: str | None = None,
        prompts: str | None = None,
        users: Sequence[str] | None = None,
    ) -> ReplayEstimate:
        """What a replay would cost: messages reaching the LLM, calls and input tokens."""
        return self._require_ledgers().estimate_replay(extractor, rules=rules, prompts=prompts, users=users)

    def diff(self, other: str, user_id: str | None = None) -> Diff:
        """Compare this ledger (A) with the ledger ``other`` (B), per user."""
        return self._require_ledgers().diff(other, optional_id("user_id", user_id, self.limits))

    def promote(self, name: str, force: bool = False) -> str:
        """Make the ledger ``name`` live, atomically; return the name the old live one keeps.
        Refused when ``name`` lost an operator correction this ledger has, unless ``force``."""
        return self._require_ledgers().promote(name, force)

    # ---- the read model ---------------------------------------------------------------------

    def _require_projector(self) -> ReadModelUpdater:
        if self.projector is None:
            raise InvalidInput("this service was built without a projector")
        return self.projector

    def _project(self) -> None:
        if not self.inline_projection or self.projector is None:
            return
        try:
            self.projector.catch_up_after_save()
        except Exception:  # the events are recorded; the read model can catch up later
            logger.exception("inline projection failed; run `factledger projection follow` or rebuild")

    def catch_up(self, progress: Callable[[int, int], None] | None = None, most: int | None = None) -> int:
        """Project every event not yet in the read model (``most``: stop after the batch that reaches it)."""
        return self._require_projector().catch_up(progress, most)

    def rebuild_read_model(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Build the read model again from the events (no LLM is called), swapped in when complete."""
        return self._require_projector().rebuild(progress)

    def read_model_status(self) -> ProjectionStatus:
        """The read model's position against the head of the event log, and what it quarantined."""
        return self._require_projector().status()

    def quarantined_events(self, limit: int = 100) -> list[dict[str, Any]]:
        """Events the read model could not store (with the error), oldest first, as JSON-ready rows."""
        return [json_ready(row) for row in self._require_projector().quarantined(limit)]

    def follow(
        self, stop: threading.Event, poll_interval: float = 1.0, on_batch: Callable[[int], None] | None = None
    ) -> None:
        """Keep the read model up to date until ``stop`` is set (a ``projection follow`` process)."""
        self._require_projector().follow(stop, poll_interval, on_batch)

    # ---- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connections (an embedded server stops when its last process exits)."""
        self.ledger.close()

    def __enter__(self) -> LedgerService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
