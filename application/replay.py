"""Replaying recorded messages through another extractor into a separate ledger.

The source ledger is only read. Messages go in their original order, with
their original ids, times, sessions and context; the target ledger's ingest is
idempotent by message id, and the position is saved after every message, so
an interrupted replay resumes where it stopped and ends as an uninterrupted one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import attrs
from eventsourcing.utils import get_topic

from factledger.application.ports import Extractor, RelationJudge
from factledger.application.validation import InvalidInput
from factledger.domain.memory import UserMemory
from factledger.domain.values import Turn

if TYPE_CHECKING:
    from factledger.application.service import LedgerService

logger = logging.getLogger(__name__)
BATCH = 500


class LedgerDirectory(Protocol):
    """Named ledgers: what replay, diff and promote need from the infrastructure."""

    def entries(self) -> list[Any]:
        """Every ledger (objects with ``name``, ``schema``, ``extractor_id``, ``as_dict()``)."""
        ...

    def create(self, name: str, extractor_id: str, source: str, users: list[str] | None = None) -> Any:
        """Register (or find) a ledger; the result has ``replay_position``. Refuses to
        resume a ledger with another extractor or another user filter."""
        ...

    def set_position(self, name: str, position: int) -> None:
        ...

    def promote(self, name: str) -> str:
        """Make ``name`` live; return the new name of the previous live ledger."""
        ...

    def open(
        self, name: str, extractor: Extractor | None = None, judge: RelationJudge | None = None,
        inline_projection: bool = True,
    ) -> LedgerService:
        ...

    def extractor(self, name: str | None, rules: str | None = None, prompts: str | None = None) -> Extractor:
        """An extractor by name (``offline``, ``llm``) with an optional rules or prompts file."""
        ...


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

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class ReplayEstimate:
    messages: int
    llm_messages: int
    llm_calls: int
    input_tokens: int
    extractor_id: str

    def as_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)


def recorded_messages(source: LedgerService, after: int = 0) -> Iterator[tuple[int, str, Any]]:
    """(notification id, user id, MessageIngested) of every message after ``after``, in recorded order."""
    topic = get_topic(UserMemory.MessageIngested)
    users: dict[Any, str] = {}
    start = after + 1
    while True:
        batch = source.ledger.recorder.select_notifications(start=start, limit=BATCH, topics=[topic])
        if not batch:
            return
        for notification in batch:
            if notification.originator_id not in users:
                [started] = source.ledger.events.get(notification.originator_id, lte=1)
                users[notification.originator_id] = started.user_id
            event = source.ledger.mapper.to_domain_event(notification)
            yield notification.id, users[notification.originator_id], event
        start = batch[-1].id + 1


def count_messages(source: LedgerService, after: int = 0) -> int:
    """How many messages were recorded after ``after`` (reads ids, not events)."""
    topic = get_topic(UserMemory.MessageIngested)
    total, start = 0, after + 1
    while batch := source.ledger.recorder.select_notifications(start=start, limit=5000, topics=[topic]):
        total += len(batch)
        start = batch[-1].id + 1
    return total


def replay(
    source: LedgerService,
    directory: LedgerDirectory,
    into: str,
    extractor: Extractor,
    judge: RelationJudge | None = None,
    users: set[str] | None = None,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Feed the source's messages through ``extractor`` into the ledger ``into``."""
    entry = directory.create(into, extractor.extractor_id, source=source.ledger_name, users=sorted(users) if users else None)
    target = directory.open(into, extractor=extractor, judge=judge, inline_projection=False)
    position = entry.replay_position
    total = count_messages(source, after=position)
    if limit is not None:
        total = min(total, limit)
    replayed = already = skipped = refused = 0
    try:
        for done, (notification_id, user_id, message) in enumerate(recorded_messages(source, position), start=1):
            if limit is not None and done > limit:
                break
            if users is None or user_id in users:
                try:
                    result = target.ingest(
                        user_id, message.text, session_id=message.session_id, context=list(message.context),
                        message_id=message.message_id, timestamp=message.at,
                    )
                except InvalidInput as exc:
                    logger.warning("message %r of user %r cannot be replayed: %s", message.message_id, user_id, exc)
                    refused += 1
                else:
                    if result.status == "duplicate":
                        already += 1
                    else:
                        replayed += 1
            else:
                skipped += 1
            position = notification_id
            directory.set_position(into, position)
            if progress:
                progress(done, total)
        projected = target.catch_up()
    finally:
        target.close()
    remaining = count_messages(source, after=position)
    return ReplayReport(
        into=into, extractor_id=extractor.extractor_id, replayed=replayed, already_there=already,
        skipped_users=skipped, position=position, head=source.ledger.recorder.max_notification_id() or 0,
        finished=remaining == 0, events_projected=projected, refused=refused,
    )


def estimate(source: LedgerService, extractor: Extractor, users: set[str] | None = None) -> ReplayEstimate:
    """How many messages a replay would send to an LLM, and the input tokens that would cost.

    Extractors that call an LLM say so through an optional
    ``estimate_cost(message, context) -> (calls, input_tokens)`` method; the
    others cost nothing.
    """
    estimator = getattr(extractor, "estimate_cost", None)
    messages = llm_messages = calls = tokens = 0
    for _, user_id, message in recorded_messages(source):
        if users is not None and user_id not in users:
            continue
        messages += 1
        if estimator is None:
            continue
        n_calls, n_tokens = estimator(message.text, [Turn.from_dict(t) for t in message.context])
        if n_calls:
            llm_messages += 1
        calls += n_calls
        tokens += n_tokens
    return ReplayEstimate(messages, llm_messages, calls, tokens, extractor.extractor_id)
