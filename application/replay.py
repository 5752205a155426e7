"""Replaying recorded messages through another extractor into a separate ledger.

The source ledger is only read. Messages go in their original order, with
their original ids, times, sessions and context; the target ledger's ingest is
idempotent by message id, and the position is saved after every group of
messages (``ingest_many``, ADR 0022), so an interrupted replay resumes where it
stopped and ends as an uninterrupted one.

With ``share=(index, count)`` only the users of that share (``shares.share_of``) are
replayed, and the position is the share's own (ADR 0041): ``count`` shares run at once, each
in its own process, replay every user once; the ledger's position is then the lowest of
theirs, so a replay resumed with another count, or in one process, skips nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from factledger.application.errors import FactledgerError, InvalidInput
from factledger.application.ingestion import Incoming
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import CostEstimator, Extractor, LedgerDirectory, RelationJudge
from factledger.application.shares import Share, check_share, share_of
from factledger.domain.memory import UserMemory
from factledger.domain.reasons import render_reason
from factledger.domain.values import Turn

if TYPE_CHECKING:
    from factledger.application.service import LedgerService

logger = logging.getLogger(__name__)

# Messages ingested together (``ingest_many``: one save), the position saved after each group.
REPLAY_GROUP = 64


@attrs.frozen
class ReplayReport:
    into: str
    extractor_id: str
    replayed: int
    already_there: int
    skipped_users: int
    position: int
    head: int
    finished: bool
    events_projected: int
    # recorded messages the target refused (recorded by an older version, outside today's limits)
    refused: int = 0
    # operator corrections carried over, and those whose fact the target does not have
    corrections: int = 0
    corrections_without_fact: int = 0

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class ReplayEstimate:
    messages: int
    llm_messages: int
    llm_calls: int
    input_tokens: int
    extractor_id: str

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def replay(
    source: MemoryLedger,
    source_name: str,
    directory: LedgerDirectory,
    into: str,
    extractor: Extractor,
    judge: RelationJudge | None = None,
    users: set[str] | None = None,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    share: Share | None = None,
) -> ReplayReport:
    """Feed the source's messages through ``extractor`` into the ledger ``into`` (only the users
    of ``share``, from that share's position, when given)."""
    if share is not None:
        share = check_share(share)
    entry = directory.create(into, extractor.extractor_id, source=source_name, users=sorted(users) if users else None)
    start = entry.replay_position if share is None else directory.share_position(into, share)
    target = directory.open(into, extractor=extractor, judge=judge, inline_projection=False)
    run = _Replay(source, directory, into, target, users, start, share)
    total = source.count_messages(after=run.position)
    if limit is not None:
        total = min(total, limit)
    try:
        done = 0
        for notification_id, user_id, message in source.recorded_history(run.position):
            if not isinstance(message, UserMemory.MessageIngested):
                run.correction(notification_id, user_id, message)
                continue
            done += 1
            if limit is not None and done > limit:
                break
            run.message(notification_id, user_id, message)
            if progress:
                progress(done, total)
        run.ingest_pending()
        projected = target.catch_up()
    finally:
        target.close()
    return run.report(extractor.extractor_id, projected)


@attrs.define
class _Replay:
    """One replay's progress: what is pending, where the source's position stands, the counts."""

    source: MemoryLedger
    directory: LedgerDirectory
    into: str
    target: LedgerService
    users: set[str] | None
    position: int
    share: Share | None = None
    seen: int = 0  # the last message looked at: ingested, pending, or of a user left out
    pending: list[tuple[int, Incoming]] = attrs.Factory(list)  # (position in the source, message)
    texts: dict[str, dict[str, str]] = attrs.Factory(dict)  # user -> fact id -> text, in the source
    replayed: int = 0
    already: int = 0
    skipped: int = 0
    refused: int = 0
    corrections: int = 0
    unmatched: int = 0

    def __attrs_post_init__(self) -> None:
        self.seen = self.position

    def wanted(self, user_id: str) -> bool:
        return self.users is None or user_id in self.users

    def ours(self, user_id: str) -> bool:
        """Whether the user is of this replay's share (every user when it has none)."""
        return self.share is None or share_of(user_id, self.share[1]) == self.share[0]

    def save_position(self) -> None:
        self.directory.set_position(self.into, self.position, share=self.share)

    def correction(self, notification_id: int, user_id: str, event: Any) -> None:
        """An operator's decision, not the extractor's: carried as it is, at its place in time."""
        self.ingest_pending()
        if self.wanted(user_id) and self.ours(user_id):
            carried = _carry(self.source, self.target, user_id, event, self.texts)
            self.corrections += 1
            self.unmatched += not carried
        self.position = self.seen = notification_id
        self.save_position()

    def message(self, notification_id: int, user_id: str, message: Any) -> None:
        if not self.ours(user_id):
            pass  # another share's: replayed by its own process
        elif self.wanted(user_id):
            incoming = Incoming(
                user_id,
                message.text,
                session_id=message.session_id,
                context=list(message.context),
                message_id=message.message_id,
                timestamp=message.at,
            )
            self.pending.append((notification_id, incoming))
        else:
            self.skipped += 1
        self.seen = notification_id
        if len(self.pending) == REPLAY_GROUP:
            self.ingest_pending()

    def ingest_pending(self) -> None:
        """Ingest what is pending in one ``ingest_many``, then move the position past ``seen``."""
        outcomes = self.target.ingest_many([incoming for _, incoming in self.pending]) if self.pending else []
        for (notification_id, incoming), outcome in zip(self.pending, outcomes, strict=True):
            if isinstance(outcome, InvalidInput):
                logger.warning(
                    "message %r of user %r cannot be replayed: %s", incoming.message_id, incoming.user_id, outcome
                )
                self.refused += 1
            elif isinstance(outcome, FactledgerError):  # too busy: resume from this message
                self.save_position()
                raise outcome
            elif outcome.status == "duplicate":
                self.already += 1
            else:
                self.replayed += 1
            self.position = notification_id
        self.pending.clear()
        self.position = self.seen
        self.save_position()

    def report(self, extractor_id: str, projected: int) -> ReplayReport:
        return ReplayReport(
            into=self.into,
            extractor_id=extractor_id,
            replayed=self.replayed,
            already_there=self.already,
            skipped_users=self.skipped,
            position=self.position,
            head=self.source.head(),
            finished=self.source.count_messages(after=self.position) == 0,
            events_projected=projected,
            refused=self.refused,
            corrections=self.corrections,
            corrections_without_fact=self.unmatched,
        )


def _carry(
    source: MemoryLedger, target: LedgerService, user_id: str, event: Any, texts: dict[str, dict[str, str]]
) -> bool:
    """Apply an operator's correction in the target; False when the fact it corrects is not there."""
    if isinstance(event, UserMemory.FactObserved):  # a restatement
        target.restate(user_id, event.text, event.category, actor=event.actor, confidence=event.confidence, at=event.at)
        return True
    if user_id not in texts:
        texts[user_id] = {
            e.fact_id: e.text for e in source.user_events(user_id) if isinstance(e, UserMemory.FactObserved)
        }
    text = texts[user_id].get(event.fact_id)
    if text is None:
        return False
    # an operator's words, or (a correction recorded with a code alone) the code's English sentence
    reason = event.reason or render_reason(event.reason_code, "en")
    return target.corrections.invalidate_matching(user_id, text, reason, actor=event.actor, at=event.at)


def estimate(source: MemoryLedger, extractor: Extractor, users: set[str] | None = None) -> ReplayEstimate:
    """How many messages a replay would send to an LLM, and the input tokens that would cost.

    Extractors that call a paid model implement ``CostEstimator``; the others cost nothing.
    """
    messages = llm_messages = calls = tokens = 0
    for _, user_id, message in source.recorded_messages():
        if users is not None and user_id not in users:
            continue
        messages += 1
        if not isinstance(extractor, CostEstimator):
            continue
        turns = [Turn.from_dict(t) for t in message.context]
        n_calls, n_tokens = extractor.estimate_cost(message.text, turns, message.at)
        if n_calls:
            llm_messages += 1
        calls += n_calls
        tokens += n_tokens
    return ReplayEstimate(messages, llm_messages, calls, tokens, extractor.extractor_id)
