"""``LedgerService``: the API a backend embeds (ingest, profile, recall, history)."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

import attrs
from eventsourcing.persistence import IntegrityError
from eventsourcing.utils import get_topic

from factledger.application.audit import (
    HISTORY_KINDS,
    PROFILE_FACTS,
    PROFILE_PREFERENCES,
    explain,
    memory_as_of,
    profile_of,
    select_history,
)
from factledger.application.calls import calls_for
from factledger.application.decisions import Decider, DecisionSource, Outcome
from factledger.application.diff import diff_user
from factledger.application.replay import LedgerDirectory, ReplayEstimate, ReplayReport
from factledger.application.replay import estimate as estimate_replay
from factledger.application.replay import replay as run_replay
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import (
    Embedder,
    ExtractionFailure,
    Extractor,
    MemoryReadModel,
    ReadModelUpdater,
    RecallHit,
    RelationJudge,
)
from factledger.domain.memory import UserMemory
from factledger.domain.values import Authority, ExtractedFact, Extraction, InvalidationRelation, Turn

logger = logging.getLogger(__name__)

MEMORY_TYPES = ("fact", "preference")
KNOWN_FACTS_FOR_EXTRACTOR = 20
SAVE_ATTEMPTS = 5


class InvalidInput(ValueError):
    """A caller passed something factledger cannot ingest; the message says what."""


@attrs.frozen
class IngestResult:
    """The spec's result for one message, plus what happened to each item."""

    user_id: str
    message_id: str
    facts: tuple[str, ...]
    preferences: tuple[str, ...]
    items: tuple[Outcome, ...]
    extractor_id: str
    notification_id: int | None
    # recorded | duplicate (message id seen before: nothing written) | extraction_failed
    status: str = "recorded"

    @property
    def facts_extracted(self) -> int:
        return len(self.facts)

    @property
    def preferences_extracted(self) -> int:
        return len(self.preferences)

    def as_dict(self) -> dict[str, Any]:
        """The spec's four keys first, then ids and outcomes."""
        return {
            "facts_extracted": self.facts_extracted,
            "preferences_extracted": self.preferences_extracted,
            "facts": list(self.facts),
            "preferences": list(self.preferences),
            "user_id": self.user_id,
            "message_id": self.message_id,
            "extractor_id": self.extractor_id,
            "status": self.status,
            "items": [item.as_dict() for item in self.items],
        }


def _require_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(f"{name} must not be empty")
    return value


def _context(context: Iterable[Any] | None) -> list[Turn]:
    if context is None:
        return []
    if isinstance(context, (str, bytes, dict)):
        raise InvalidInput("context must be a list of {role, content} turns")
    turns = []
    for position, turn in enumerate(context):
        if isinstance(turn, Turn):
            turns.append(turn)
            continue
        try:
            turns.append(Turn.from_dict(turn))
        except ValueError as exc:
            raise InvalidInput(f"context[{position}]: {exc}") from None
    return turns


def resolve_prefix(prefix: str, ids: Iterable[str], kind: str) -> str:
    """The one id starting with ``prefix``; a clear error when none or several do."""
    prefix = _require_text(f"{kind} id", prefix).strip()
    matches = [i for i in ids if i.startswith(prefix)]
    if not matches:
        raise InvalidInput(f"no {kind} id starts with {prefix!r}")
    if len(matches) > 1:
        raise InvalidInput(f"{kind} id prefix {prefix!r} is ambiguous: {', '.join(m[:12] for m in matches[:5])}")
    return matches[0]


def _utc(at: datetime | None) -> datetime:
    if at is None:
        return datetime.now(timezone.utc)
    if not isinstance(at, datetime):
        raise InvalidInput(f"timestamp must be a datetime, got {type(at).__name__}")
    return at if at.tzinfo else at.replace(tzinfo=timezone.utc)


def _history_entry(event: Any) -> dict[str, Any]:
    fields = {
        key: value
        for key, value in vars(event).items()
        if key not in {"originator_id", "originator_version", "timestamp", "originator_topic"}
    }
    return {
        "version": event.originator_version,
        "event": type(event).__name__,
        "recorded_at": event.timestamp,
        **fields,
    }


class LedgerService:
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
        user_id = _require_text("user_id", user_id).strip()
        message = _require_text("message", message)
        if session_id is not None and not isinstance(session_id, str):
            raise InvalidInput(f"session_id must be a string, got {type(session_id).__name__}")
        turns = _context(context)
        at = _utc(timestamp)
        message_id = message_id or str(uuid.uuid4())

        memory = self.ledger.find_memory(user_id)
        if memory is not None and message_id in memory.recent_message_ids:
            return self._already_ingested(user_id, message_id)
        known = [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:] if memory else []
        failure: ExtractionFailure | None = None
        extraction: Extraction | None = None
        with calls_for(user_id, message_id, "extract"):
            try:
                extraction = self.extractor.extract(message, turns, known)
            except ExtractionFailure as exc:
                logger.warning("extraction failed for %s/%s: %s", user_id, message_id, exc.reason)
                failure = exc

        for attempt in range(1, SAVE_ATTEMPTS + 1):
            memory = self.ledger.find_memory(user_id) or UserMemory.start(user_id)
            if message_id in memory.recent_message_ids:
                return self._already_ingested(user_id, message_id)
            memory.ingest_message(
                message_id=message_id,
                text=message,
                at=at,
                session_id=session_id,
                context=[turn.as_dict() for turn in turns],
            )
            outcomes: list[Outcome] = []
            if extraction is not None:
                memory.record_extraction(message_id, extraction.as_dict())
                with calls_for(user_id, message_id, "decide"):
                    outcomes = self.decider.apply(memory, extraction, message_id, at, session_id)
            else:
                assert failure is not None
                memory.record_extraction_failure(
                    message_id, failure.extractor_id, failure.reason, failure.raw_output, failure.prompt_id
                )
            try:
                recordings = self.ledger.save(memory)
            except IntegrityError:
                # Another process wrote to this user first: decide again on fresh state.
                logger.info("concurrent write for %s, retrying (%d)", user_id, attempt)
                if attempt == SAVE_ATTEMPTS:
                    raise
                continue
            break
        notification_id = recordings[-1].notification.id if recordings else None
        self._project()
        return IngestResult(
            user_id=user_id,
            message_id=message_id,
            facts=tuple(f.text for f in extraction.facts) if extraction else (),
            preferences=tuple(p.text for p in extraction.preferences) if extraction else (),
            items=tuple(outcomes),
            extractor_id=extraction.extractor_id if extraction else failure.extractor_id,  # type: ignore[union-attr]
            notification_id=notification_id,
            status="extraction_failed" if failure else "recorded",
        )

    def _already_ingested(self, user_id: str, message_id: str) -> IngestResult:
        """A retried delivery of a message already recorded: nothing new is written."""
        return IngestResult(
            user_id=user_id, message_id=message_id, facts=(), preferences=(), items=(),
            extractor_id=self.extractor.extractor_id, notification_id=None, status="duplicate",
        )

    def retry_failed(
        self, user_id: str | None = None, progress: Callable[[int, int], None] | None = None
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

    def _users_with_failures(self) -> list[str]:
        topic = get_topic(UserMemory.ExtractionFailed)
        originators: dict[Any, None] = {}
        start = None
        while True:
            batch = self.ledger.recorder.select_notifications(start=start, limit=1000, topics=[topic])
            if not batch:
                break
            originators.update((n.originator_id, None) for n in batch)
            start = batch[-1].id + 1
        users = []
        for originator_id in originators:
            memory = self.ledger.repository.get(originator_id)
            users.append(memory.user_id)
        return users

    def _retry_one(self, user_id: str, message_id: str) -> IngestResult:
        message = next(
            e for e in self.ledger.user_events(user_id)
            if isinstance(e, UserMemory.MessageIngested) and e.message_id == message_id
        )
        turns = [Turn.from_dict(t) for t in message.context]
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            memory = self.ledger.find_memory(user_id)
            assert memory is not None
            if message_id not in memory.failed_extractions:
                return self._already_ingested(user_id, message_id)
            known = [f.text for f in memory.active_facts()][-KNOWN_FACTS_FOR_EXTRACTOR:]
            with calls_for(user_id, message_id, "extract"):
                try:
                    extraction = self.extractor.extract(message.text, turns, known)
                except ExtractionFailure as exc:
                    memory.record_extraction_failure(
                        message_id, exc.extractor_id, exc.reason, exc.raw_output, exc.prompt_id
                    )
                    self.ledger.save(memory)
                    return IngestResult(
                        user_id=user_id, message_id=message_id, facts=(), preferences=(), items=(),
                        extractor_id=exc.extractor_id, notification_id=None, status="extraction_failed",
                    )
            memory.record_extraction(message_id, extraction.as_dict())
            with calls_for(user_id, message_id, "decide"):
                outcomes = self.decider.apply(memory, extraction, message_id, message.at, message.session_id)
            try:
                recordings = self.ledger.save(memory)
            except IntegrityError:
                if attempt == SAVE_ATTEMPTS:
                    raise
                continue
            self._project()
            return IngestResult(
                user_id=user_id, message_id=message_id,
                facts=tuple(f.text for f in extraction.facts),
                preferences=tuple(p.text for p in extraction.preferences),
                items=tuple(outcomes), extractor_id=extraction.extractor_id,
                notification_id=recordings[-1].notification.id if recordings else None,
            )
        raise AssertionError("unreachable")

    # ---- manual corrections -----------------------------------------------------------

    def invalidate(self, user_id: str, fact_id: str, reason: str, actor: str | None = None) -> str:
        """An operator marks a fact wrong: ``FactInvalidated(relation=manual)``. Returns the fact id.

        ``fact_id`` may be a unique prefix of the id.
        """
        user_id = _require_text("user_id", user_id).strip()
        reason = _require_text("reason", reason)
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            memory = self._require_memory(user_id)
            full_id = resolve_prefix(fact_id, memory.facts, "fact")
            memory.invalidate_fact(full_id, InvalidationRelation.MANUAL, reason, _utc(None), actor=actor)
            try:
                self.ledger.save(memory)
            except IntegrityError:
                if attempt == SAVE_ATTEMPTS:
                    raise
                continue
            self._project()
            return full_id
        raise AssertionError("unreachable")

    def restate(
        self, user_id: str, text: str, category: str = "other", actor: str | None = None,
        confidence: float = 1.0,
    ) -> Outcome:
        """An operator records a fact (authority ``manual``); a similar automatic fact it
        updates or contradicts is invalidated, and nothing automatic overrides it later."""
        user_id = _require_text("user_id", user_id).strip()
        fact = ExtractedFact(_require_text("text", text), category, confidence)
        for attempt in range(1, SAVE_ATTEMPTS + 1):
            memory = self.ledger.find_memory(user_id) or UserMemory.start(user_id)
            fact_id = str(uuid.uuid4())
            source = DecisionSource("manual", None, None, None, _utc(None), actor)
            with calls_for(user_id, None, "decide"):
                outcome = self.decider.save_fact(memory, fact, fact_id, Authority.MANUAL, source)
            try:
                self.ledger.save(memory)
            except IntegrityError:
                if attempt == SAVE_ATTEMPTS:
                    raise
                continue
            self._project()
            return outcome
        raise AssertionError("unreachable")

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
        user_id = _require_text("user_id", user_id).strip()
        if as_of is not None:
            events = list(self.ledger.user_events(user_id)) if self.ledger.find_memory(user_id) else []
            return profile_of(memory_as_of(events, _utc(as_of)), user_id)
        facts = self.read_model.items(user_id, "fact", PROFILE_FACTS)
        prefs = self.read_model.items(user_id, "preference", PROFILE_PREFERENCES)
        facts_by_category: dict[str, list[dict[str, Any]]] = {}
        for f in facts:
            facts_by_category.setdefault(f.category, []).append(
                {
                    "fact": f.content,
                    "confidence": f.metadata.get("confidence", 0.5),
                    "times_mentioned": f.metadata.get("times_mentioned", 1),
                    "id": f.id,
                }
            )
        prefs_by_category: dict[str, list[dict[str, Any]]] = {}
        for p in prefs:
            prefs_by_category.setdefault(p.category, []).append(
                {"preference": p.content, "strength": p.metadata.get("strength", 0.5), "id": p.id}
            )
        return {
            "user_id": user_id,
            "facts": facts_by_category,
            "preferences": prefs_by_category,
            "facts_count": len(facts),
            "preferences_count": len(prefs),
        }

    def why(self, user_id: str, item_id: str) -> dict[str, Any]:
        """The whole life of a fact or preference: observation, confirmations,
        reinforcements, contests and invalidation, each with its message and provenance.
        ``item_id`` may be a unique prefix."""
        user_id = _require_text("user_id", user_id).strip()
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
        user_id = _require_text("user_id", user_id).strip()
        query = _require_text("query", query)
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
        user_id = _require_text("user_id", user_id).strip()
        if kind is not None and kind not in HISTORY_KINDS:
            raise InvalidInput(f"kind must be one of {', '.join(HISTORY_KINDS)}, got {kind!r}")
        if self.ledger.find_memory(user_id) is None:
            return []
        events = select_history(
            self.ledger.user_events(user_id),
            since=None if since is None else _utc(since),
            until=None if until is None else _utc(until),
            kind=kind,
        )
        return [_history_entry(e) for e in events]

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

    # ---- ledgers: replay, diff, promote -------------------------------------------------

    def _require_directory(self) -> LedgerDirectory:
        if self.directory is None:
            raise RuntimeError("this service was built without a ledger directory")
        return self.directory

    def ledgers(self) -> list[dict[str, Any]]:
        """Every ledger with its extractor and event count."""
        directory = self._require_directory()
        rows = []
        for entry in directory.entries():
            with directory.open(entry.name, inline_projection=False) as service:
                events = service.ledger.recorder.max_notification_id() or 0
            rows.append({**entry.as_dict(), "events": events})
        return rows

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
    ) -> ReplayReport:
        """Re-decide this ledger's recorded messages with another extractor (``offline`` or
        ``llm``, optionally with a ``rules`` or ``prompts`` file) into the ledger ``into``.
        This ledger is never written. Run it again to resume after an interruption."""
        directory = self._require_directory()
        chosen = directory.extractor(extractor, rules=rules, prompts=prompts)
        return run_replay(
            self, directory, into, chosen, users=set(users) if users else None, limit=limit, progress=progress
        )

    def estimate_replay(
        self, extractor: str | None = None, *, rules: str | None = None, prompts: str | None = None,
        users: Sequence[str] | None = None,
    ) -> ReplayEstimate:
        """What a replay would cost: messages reaching the LLM, calls and input tokens."""
        chosen = self._require_directory().extractor(extractor, rules=rules, prompts=prompts)
        return estimate_replay(self, chosen, set(users) if users else None)

    def diff(self, other: str, user_id: str | None = None) -> dict[str, Any]:
        """Compare this ledger (A) with the ledger ``other`` (B), per user."""
        directory = self._require_directory()
        with directory.open(other, inline_projection=False) as b:
            b_items = b.read_model.all_items(user_id)
        a_items = self.read_model.all_items(user_id)
        by_user: dict[str, tuple[list[Any], list[Any]]] = {}
        for r in a_items:
            by_user.setdefault(r.user_id, ([], []))[0].append(r)
        for r in b_items:
            by_user.setdefault(r.user_id, ([], []))[1].append(r)

        def similarity(x: str, y: str) -> float:
            vx, vy = self.embedder.embed([x, y])
            return float(sum(p * q for p, q in zip(vx, vy, strict=True)))

        diffs = [diff_user(u, a, b, similarity) for u, (a, b) in sorted(by_user.items())]
        return {
            "a": self.ledger_name,
            "b": other,
            "summary": [
                {"user_id": d.user_id, "only_in_a": len(d.only_in_a), "only_in_b": len(d.only_in_b),
                 "changed": len(d.changed), "same": d.same}
                for d in diffs
            ],
            "users": [d.as_dict() for d in diffs],
        }

    def promote(self, name: str) -> str:
        """Make the ledger ``name`` live, atomically; return the name the old live one keeps."""
        return self._require_directory().promote(name)

    def close(self) -> None:
        """Release connections (and the embedded server, when this process started it)."""
        self.ledger.close()
        if self._on_close:
            self._on_close()

    def __enter__(self) -> LedgerService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
