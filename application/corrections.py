"""An operator's corrections: marking a fact wrong, stating the right one.

Both are written like an ingest (``MemoryWriter``); ``restate`` decides with
the same ``Decider`` as the pipeline, with the authority ``manual`` that
nothing automatic may override afterwards (ADR 0008).
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Mapping
from datetime import datetime

import attrs

from factledger.application.calls import calls_for
from factledger.application.decisions import Decider, DecisionSource, Outcome
from factledger.application.errors import InvalidInput
from factledger.application.ledger import MemoryLedger
from factledger.application.screening import DEFAULT_POLICIES, screen_text
from factledger.application.sensitive import Kind, Policy
from factledger.application.validation import (
    InputLimits,
    clean_text,
    optional_id,
    require_unit,
    resolve_prefix,
    utc,
)
from factledger.application.writing import MemoryWriter, NothingToWrite
from factledger.domain.categories import FACT_CATEGORIES, fact_category
from factledger.domain.memory import UserMemory
from factledger.domain.values import Authority, ExtractedFact, InvalidationRelation


def known_fact_category(category: str) -> str:
    """The fact category ``category`` names (any case, ``-`` or a space for ``_``); an operator's
    unknown category is refused rather than filed under ``other`` as an extractor's would be."""
    named = fact_category(category)
    if named == "other" and str(category).strip().lower() != "other":
        raise InvalidInput(f"category {category!r} is not a fact category: one of {', '.join(FACT_CATEGORIES)}")
    return named


@attrs.define
class Corrections:
    """``invalidate`` and ``restate``."""

    ledger: MemoryLedger
    writer: MemoryWriter
    decider: Decider
    limits: InputLimits
    policies: Mapping[Kind, Policy] = DEFAULT_POLICIES

    def _screened(self, where: str, text: str) -> str:
        """An operator's words are screened like a user's: they are recorded too."""
        cleaned = clean_text(where, text, self.limits.message_chars, "max_message_chars")
        return screen_text(where, cleaned, self.policies, Counter())

    def invalidate(
        self, user_id: str, fact_id: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> str:
        """An operator marks a fact wrong: ``FactInvalidated(relation=manual)``. Returns the fact id.

        ``fact_id`` may be a unique prefix of the id; ``at`` (default now) is when
        the correction was made (a replay carries the original time).
        """
        user_id = self.ledger.user_id(user_id, self.limits)
        reason = self._screened("reason", reason)
        actor = optional_id("actor", actor, self.limits)

        def mark_wrong(memory: UserMemory) -> str:
            full_id = resolve_prefix(fact_id, [*memory.facts, *memory.retired_facts], "fact")
            memory.invalidate_fact(full_id, InvalidationRelation.MANUAL, "manual", utc(at), actor=actor, note=reason)
            return full_id

        return self.writer.write(user_id, mark_wrong, create=False)[0]

    def invalidate_matching(
        self, user_id: str, text: str, reason: str, actor: str | None = None, at: datetime | None = None
    ) -> bool:
        """Mark wrong the active fact that says ``text`` (same words, or as similar as a duplicate).

        How a replay carries an operator's invalidation into a ledger whose fact
        ids differ. False when no active fact says it (nothing to correct there).
        """

        def mark_wrong(memory: UserMemory) -> bool:
            match = self.decider.matching_fact(memory, text)
            if match is None:
                raise NothingToWrite(False)
            memory.invalidate_fact(match.id, InvalidationRelation.MANUAL, "manual", utc(at), actor=actor, note=reason)
            return True

        if self.ledger.find_memory(user_id) is None:
            return False
        return self.writer.write(user_id, mark_wrong, create=False)[0]

    def restate(
        self,
        user_id: str,
        text: str,
        category: str = "other",
        actor: str | None = None,
        confidence: float = 1.0,
        at: datetime | None = None,
    ) -> Outcome:
        """An operator records a fact (authority ``manual``); a similar automatic fact it
        updates or contradicts is invalidated, and nothing automatic overrides it later."""
        user_id = self.ledger.user_id(user_id, self.limits)
        actor = optional_id("actor", actor, self.limits)
        fact = ExtractedFact(
            self._screened("text", text),
            known_fact_category(category),
            require_unit("confidence", confidence),
        )

        def record(memory: UserMemory) -> Outcome:
            source = DecisionSource("manual", None, None, None, utc(at), actor)
            with calls_for(user_id, None, "decide", self.ledger.storage_key):
                return self.decider.save_fact(memory, fact, str(uuid.uuid4()), Authority.MANUAL, source)

        return self.writer.write(user_id, record)[0]
