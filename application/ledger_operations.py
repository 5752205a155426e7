"""Operations across ledgers: list, replay, diff, promote."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from factledger.application.decisions import cosine
from factledger.application.diff import diff_user
from factledger.application.replay import LedgerDirectory, ReplayEstimate, ReplayReport
from factledger.application.replay import estimate as estimate_replay
from factledger.application.replay import replay as run_replay

if TYPE_CHECKING:
    from factledger.application.service import LedgerService


class LedgerOperations:
    """``ledgers``, ``replay``, ``estimate_replay``, ``diff`` and ``promote`` of :class:`LedgerService`."""

    def _require_directory(self: LedgerService) -> LedgerDirectory:
        if self.directory is None:
            raise RuntimeError("this service was built without a ledger directory")
        return self.directory

    def ledgers(self: LedgerService) -> list[dict[str, Any]]:
        """Every ledger with its extractor and event count."""
        directory = self._require_directory()
        rows = []
        for entry in directory.entries():
            with directory.open(entry.name, inline_projection=False) as service:
                events = service.ledger.recorder.max_notification_id() or 0
            rows.append({**entry.as_dict(), "events": events})
        return rows

    def replay(
        self: LedgerService,
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
        self: LedgerService, extractor: str | None = None, *, rules: str | None = None,
        prompts: str | None = None, users: Sequence[str] | None = None,
    ) -> ReplayEstimate:
        """What a replay would cost: messages reaching the LLM, calls and input tokens."""
        chosen = self._require_directory().extractor(extractor, rules=rules, prompts=prompts)
        return estimate_replay(self, chosen, set(users) if users else None)

    def diff(self: LedgerService, other: str, user_id: str | None = None) -> dict[str, Any]:
        """Compare this ledger (A) with the ledger ``other`` (B), per user."""
        directory = self._require_directory()
        with directory.open(other, inline_projection=False) as b:
            b_items = b.read_model.all_items(user_id)
        by_user: dict[str, tuple[list[Any], list[Any]]] = {}
        for r in self.read_model.all_items(user_id):
            by_user.setdefault(r.user_id, ([], []))[0].append(r)
        for r in b_items:
            by_user.setdefault(r.user_id, ([], []))[1].append(r)

        def similarity(x: str, y: str) -> float:
            return cosine(*self.embedder.embed([x, y]))

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

    def promote(self: LedgerService, name: str) -> str:
        """Make the ledger ``name`` live, atomically; return the name the old live one keeps."""
        return self._require_directory().promote(name)
