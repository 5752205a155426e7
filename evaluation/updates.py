"""Does the ledger stay true? Conversations with updates, corrections and retractions, scored.

A labelled conversation (``knowledge_updates_*.jsonl``, see data/eval/README)
is ingested, message by message, for a fresh user in a throwaway in-memory
ledger; it passes when every ``active`` group of keys appears in one single
active fact or preference at the end and no ``stale`` group does.
"""

from __future__ import annotations

import json
import unicodedata
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from factledger.evaluation.dataset import DatasetError


@attrs.frozen
class Conversation:
    id: str
    lang: str
    kind: str
    messages: tuple[str, ...]
    active: tuple[tuple[str, ...], ...]
    stale: tuple[tuple[str, ...], ...]
    note: str = ""


@attrs.frozen
class Outcome:
    """One conversation's end: the active items, and which groups failed."""

    conversation: Conversation
    items: tuple[str, ...]
    missing: tuple[tuple[str, ...], ...]  # active groups no item holds
    lingering: tuple[tuple[str, ...], ...]  # stale groups an item still holds

    @property
    def passed(self) -> bool:
        return not self.missing and not self.lingering

    def to_dict(self) -> dict[str, Any]:
        c = self.conversation
        return {
            "id": c.id,
            "lang": c.lang,
            "kind": c.kind,
            "passed": self.passed,
            "items": list(self.items),
            "missing": [list(g) for g in self.missing],
            "lingering": [list(g) for g in self.lingering],
        }


@attrs.frozen
class UpdatesReport:
    extractor_id: str
    outcomes: tuple[Outcome, ...]

    def _accuracy(self, outcomes: Sequence[Outcome]) -> dict[str, Any]:
        passed = sum(o.passed for o in outcomes)
        return {
            "conversations": len(outcomes),
            "passed": passed,
            "accuracy": round(passed / len(outcomes), 3) if outcomes else None,
        }

    def by(self, field: str) -> dict[str, dict[str, Any]]:
        groups: dict[str, list[Outcome]] = {}
        for o in self.outcomes:
            groups.setdefault(getattr(o.conversation, field), []).append(o)
        return {name: self._accuracy(items) for name, items in sorted(groups.items())}

    def to_dict(self) -> dict[str, Any]:
        return {
            "extractor_id": self.extractor_id,
            "overall": self._accuracy(self.outcomes),
            "by_kind": self.by("kind"),
            "by_lang": self.by("lang"),
            "failures": [o.to_dict() for o in self.outcomes if not o.passed],
        }


def _groups(value: Any, where: str, field: str) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list) or not all(
        isinstance(g, list) and g and all(isinstance(k, str) and k.strip() for k in g) for g in value
    ):
        raise DatasetError(f"{where}: {field!r} must be a list of non-empty lists of keys")
    return tuple(tuple(g) for g in value)


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read a knowledge-updates file; a bad line raises ``DatasetError`` naming it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    conversations = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: not JSON ({exc.msg})") from None
        messages = record.get("messages") if isinstance(record, dict) else None
        if not isinstance(messages, list) or not messages or not all(isinstance(m, str) for m in messages):
            raise DatasetError(f"{where}: 'messages' must be a non-empty list of strings")
        conversations.append(
            Conversation(
                id=str(record.get("id") or where),
                lang=str(record.get("lang") or "?"),
                kind=str(record.get("kind") or "?"),
                messages=tuple(messages),
                active=_groups(record.get("active", []), where, "active"),
                stale=_groups(record.get("stale", []), where, "stale"),
                note=str(record.get("note") or ""),
            )
        )
    if not conversations:
        raise DatasetError(f"{path}: no conversations")
    return conversations


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _holds(item: str, group: Sequence[str]) -> bool:
    return all(_folded(key) in _folded(item) for key in group)


def judge(conversation: Conversation, items: Sequence[str]) -> Outcome:
    """Score the active items a conversation ended with."""
    missing = tuple(g for g in conversation.active if not any(_holds(i, g) for i in items))
    lingering = tuple(g for g in conversation.stale if any(_holds(i, g) for i in items))
    return Outcome(conversation, tuple(items), missing, lingering)


# Opens a fresh, empty ledger for one conversation; the caller closes it.
LedgerOpener = Callable[[], Any]


def run_conversation(conversation: Conversation, open_fresh: LedgerOpener) -> Outcome:
    """Ingest the conversation for a fresh user, oldest message first, and score its active items."""
    with _closing(open_fresh()) as ledger:
        user = f"eval-{uuid.uuid4().hex[:8]}"
        for n, message in enumerate(conversation.messages):
            ledger.ingest(user, message, session_id=conversation.id, message_id=f"{conversation.id}/{n}")
        memory = ledger.ledger.find_memory(user)
        items = [f.text for f in memory.active_facts()] + [p.text for p in memory.all_preferences()] if memory else []
    return judge(conversation, items)


def evaluate_updates(
    conversations: Sequence[Conversation],
    open_fresh: LedgerOpener,
    extractor_id: str,
    progress: Callable[[int], None] | None = None,
) -> UpdatesReport:
    outcomes = []
    for conversation in conversations:
        outcomes.append(run_conversation(conversation, open_fresh))
        if progress:
            progress(1)
    return UpdatesReport(extractor_id, tuple(outcomes))


@contextmanager
def _closing(ledger: Any) -> Iterator[Any]:
    try:
        yield ledger
    finally:
        ledger.close()
