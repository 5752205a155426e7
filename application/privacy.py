"""A person's rights over their memory: to see all of it (export) and to have it forgotten.

Forgetting deletes the user's stream in every ledger and everything derived
from it (ADR 0015); what stays is a ``Tombstone`` with no personal data.
Exporting gathers, from the user's events, every message they sent and the
whole life of every fact and preference (GDPR art. 15, PIPL art. 45).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from factledger.application.audit import explain
from factledger.application.errors import ConfigError
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import Eraser, Tombstone
from factledger.application.validation import InputLimits, require_id
from factledger.application.writing import require_memory
from factledger.domain.memory import UserMemory

EXPORT_FORMAT = "factledger-export/1"


class Privacy:
    """``forget``, ``tombstones`` and ``export`` for one ledger's service."""

    def __init__(self, ledger: MemoryLedger, ledger_name: str, eraser: Eraser | None, limits: InputLimits) -> None:
        self.ledger = ledger
        self.ledger_name = ledger_name
        self.eraser = eraser
        self.limits = limits

    def _require_eraser(self) -> Eraser:
        if self.eraser is None:
            raise ConfigError("this ledger was opened without a store that can forget users")
        return self.eraser

    def forget(self, user_id: str, actor: str) -> Tombstone:
        """Remove every trace of ``user_id`` from every ledger of the store; return the tombstone.

        Forgetting a user who was never recorded still leaves a tombstone (the
        request was carried out), with zero counts. The user id may be used
        again afterwards: it starts an empty memory.
        """
        user_id = self.ledger.user_id(user_id, self.limits)
        actor = require_id("actor", actor, self.limits)
        tombstone = self._require_eraser().forget(user_id, actor)
        self.ledger.evict(user_id)
        return tombstone

    def tombstones(self, user_id: str | None = None) -> list[Tombstone]:
        """Every recorded forget, newest first (only ``user_id``'s when given: in its NFC form, and
        in the exact form given, which a user recorded before ids were normalised had; ADR 0027)."""
        eraser = self._require_eraser()
        if user_id is None:
            return eraser.tombstones(None)
        forms = dict.fromkeys([require_id("user_id", user_id, self.limits), user_id])
        found = [t for form in forms for t in eraser.tombstones(form)]
        return sorted(found, key=lambda t: t.forgotten_at, reverse=True)

    def export(self, user_id: str) -> dict[str, Any]:
        """The user's whole memory as JSON-ready data: messages, facts, preferences, histories."""
        user_id = self.ledger.user_id(user_id, self.limits)
        memory = require_memory(self.ledger, user_id)
        events = list(self.ledger.user_events(user_id))
        messages = [
            {
                "message_id": e.message_id,
                "session_id": e.session_id,
                "said_at": e.at.isoformat(),
                "recorded_at": e.timestamp.isoformat(),
                "text": e.text,
                "context": list(e.context),
            }
            for e in events
            if isinstance(e, UserMemory.MessageIngested)
        ]
        fact_ids = [e.fact_id for e in events if isinstance(e, UserMemory.FactObserved)]
        preference_ids = [e.preference_id for e in events if isinstance(e, UserMemory.PreferenceObserved)]
        return {
            "format": EXPORT_FORMAT,
            "user_id": user_id,
            "ledger": self.ledger_name,
            "exported_at": datetime.now(UTC).isoformat(),
            "events": memory.version,
            "messages": messages,
            "facts": [explain(events, item_id).to_dict() for item_id in dict.fromkeys(fact_ids)],
            "preferences": [explain(events, item_id).to_dict() for item_id in dict.fromkeys(preference_ids)],
        }
