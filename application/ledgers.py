"""Operations across named ledgers: list them, replay into one, compare two, promote one.

A replay re-decides the recorded messages with another extractor into a
ledger of its own; the source is only read (ADR 0007).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from factledger.application.decisions import cosine
from factledger.application.diff import diff_user, normalise
from factledger.application.errors import InvalidInput
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import Embedder, LedgerDirectory, MemoryReadModel, MemoryRecord
from factledger.application.replay import ReplayEstimate, ReplayReport
from factledger.application.replay import estimate as estimate_replay
from factledger.application.replay import replay as run_replay
from factledger.application.results import Diff


@attrs.define
class Ledgers:
    """``ledgers``, ``replay``, ``estimate_replay``, ``diff`` and ``promote`` from one ledger."""

    ledger: MemoryLedger
    name: str
    read_model: MemoryReadModel
    embedder: Embedder
    directory: LedgerDirectory

    def ledgers(self) -> list[dict[str, Any]]:
        """Every ledger with its extractor and event count."""
        return [
            {**entry.to_dict(), "events": self.directory.event_count(entry.name)} for entry in self.directory.entries()
        ]

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
        """Re-decide this ledger's recorded messages with another extractor (``offline`` or
        ``llm``, optionally with a ``rules`` or ``prompts`` file) into the ledger ``into``.
        This ledger is never written. Run it again to resume after an interruption."""
        chosen = self.directory.extractor(extractor, rules=rules, prompts=prompts)
        return run_replay(
            self.ledger,
            self.name,
            self.directory,
            into,
            chosen,
            users=set(users) if users else None,
            limit=limit,
            progress=progress,
            share=share,
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
        chosen = self.directory.extractor(extractor, rules=rules, prompts=prompts)
        return estimate_replay(self.ledger, chosen, set(users) if users else None)

    def diff(self, other: str, user_id: str | None = None) -> Diff:
        """Compare this ledger (A) with the ledger ``other`` (B), per user."""
        with self.directory.open(other, inline_projection=False) as b:
            b_items = b.read_model.all_items(user_id)
        by_user: dict[str, tuple[list[MemoryRecord], list[MemoryRecord]]] = {}
        for r in self.read_model.all_items(user_id):
            by_user.setdefault(r.user_id, ([], []))[0].append(r)
        for r in b_items:
            by_user.setdefault(r.user_id, ([], []))[1].append(r)

        def similarity(x: str, y: str) -> float:
            return cosine(*self.embedder.embed([x, y]))

        return Diff(self.name, other, tuple(diff_user(u, a, b, similarity) for u, (a, b) in sorted(by_user.items())))

    def promote(self, name: str, force: bool = False) -> str:
        """Make the ledger ``name`` live, atomically; return the name the old live one keeps.

        Refused (``InvalidInput``) when ``name`` lost an operator's correction this
        ledger has, unless ``force``: a restated fact missing, or a fact an
        operator marked wrong active again.
        """
        lost = self.lost_corrections(name)
        if lost and not force:
            listed = "; ".join(lost[:5]) + (f"; and {len(lost) - 5} more" if len(lost) > 5 else "")
            raise InvalidInput(
                f"promoting {name!r} would lose {len(lost)} operator correction(s) of {self.name!r}: {listed}. "
                "Replay again (corrections are carried), correct it, or promote with force"
            )
        return self.directory.promote(name)

    def lost_corrections(self, name: str) -> list[str]:
        """The operator corrections of this ledger that the ledger ``name`` does not keep."""
        with self.directory.open(name, inline_projection=False) as other:
            other.catch_up()
            theirs = {(r.user_id, normalise(r.content)) for r in other.read_model.all_items() if r.is_active}
        ours = [r for r in self.read_model.all_items() if r.type == "fact"]
        active_here = {(r.user_id, normalise(r.content)) for r in ours if r.is_active}
        lost = []
        for r in ours:
            key = (r.user_id, normalise(r.content))
            if r.is_active and r.metadata.get("extractor_id") == "manual" and key not in theirs:
                lost.append(f"{r.user_id}: the restated fact {r.content!r} is missing")
            marked_wrong = r.metadata.get("invalidation_relation") == "manual" and not r.metadata.get("superseded_by")
            if not r.is_active and marked_wrong and key in theirs and key not in active_here:
                lost.append(f"{r.user_id}: {r.content!r}, marked wrong, is active again")
        return lost
