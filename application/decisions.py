"""The spec's FactManager / PreferenceManager, deciding on the aggregate itself.

Decisions read the user's own aggregate (never the read model), so they see
every earlier write at once however far the projection lags (ADR 0003).
Every verdict and its provenance go into the events the commands trigger.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import attrs

from factledger.application.ports import Embedder, RelationJudge
from factledger.domain.memory import UserMemory
from factledger.domain.values import (
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    InvalidationRelation,
    Relation,
)

CANDIDATES = 3


@attrs.frozen
class Outcome:
    """What happened to one extracted item."""

    kind: str  # "fact" | "preference"
    id: str
    text: str
    category: str
    action: str  # observed | confirmed | superseded | reinforced
    superseded_id: str | None = None
    superseded_text: str | None = None
    relation: str | None = None
    similarity: float | None = None
    confidence: float | None = None
    strength: float | None = None

    def as_dict(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        return {k: v for k, v in data.items() if v is not None}


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=True)))


@attrs.define
class Decider:
    """Applies one message's extraction to a user's memory."""

    judge: RelationJudge
    embedder: Embedder
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7

    def apply(
        self,
        memory: UserMemory,
        extraction: Extraction,
        message_id: str,
        at: datetime,
        session_id: str | None,
    ) -> list[Outcome]:
        """Trigger the events for every extracted item, in order; return what happened."""
        outcomes: list[Outcome] = []
        for index, fact in enumerate(extraction.facts):
            fact_id = str(uuid.uuid5(memory.id, f"{message_id}/fact/{index}"))
            outcomes.append(
                self._save_fact(memory, fact, fact_id, extraction.extractor_id, message_id, at, session_id)
            )
        for index, pref in enumerate(extraction.preferences):
            pref_id = str(uuid.uuid5(memory.id, f"{message_id}/preference/{index}"))
            outcomes.append(
                self._save_preference(memory, pref, pref_id, extraction.extractor_id, message_id, at, session_id)
            )
        return outcomes

    def _similar(
        self, query: str, candidates: list[tuple[str, str]], threshold: float
    ) -> list[tuple[float, str]]:
        """(similarity, id) of the candidates at or above ``threshold``, best first."""
        if not candidates:
            return []
        vectors = self.embedder.embed([query] + [text for _, text in candidates])
        scored = [
            (round(_cosine(vectors[0], vector), 6), item_id)
            for (item_id, _), vector in zip(candidates, vectors[1:], strict=True)
        ]
        scored = [pair for pair in scored if pair[0] >= threshold]
        scored.sort(key=lambda pair: -pair[0])
        return scored[:CANDIDATES]

    def _save_fact(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        fact_id: str,
        extractor_id: str,
        message_id: str,
        at: datetime,
        session_id: str | None,
    ) -> Outcome:
        active = [(f.id, f.text) for f in memory.active_facts()]
        similar = self._similar(fact.text, active, self.fact_similarity)

        def observe() -> None:
            memory.observe_fact(
                fact_id=fact_id,
                text=fact.text,
                category=fact.category,
                confidence=fact.confidence,
                message_id=message_id,
                at=at,
                extractor_id=extractor_id,
                session_id=session_id,
                conflicts_with=fact.conflicts_with,
            )

        if not similar:
            observe()
            return Outcome("fact", fact_id, fact.text, fact.category, "observed", confidence=fact.confidence)

        similarity, existing_id = similar[0]
        existing = memory.fact(existing_id)
        verdict = self.judge.judge(existing.text, fact.text)
        if verdict.relation is Relation.DUPLICATE:
            memory.confirm_fact(
                fact_id=existing_id,
                message_id=message_id,
                at=at,
                judge_id=verdict.judge_id,
                similarity=similarity,
                raw_answer=verdict.raw_answer,
                session_id=session_id,
            )
            return Outcome(
                "fact", existing_id, existing.text, existing.category, "confirmed",
                relation=verdict.relation.value, similarity=similarity, confidence=existing.confidence,
            )
        if verdict.relation in (Relation.UPDATE, Relation.CONFLICT):
            observe()
            memory.invalidate_fact(
                fact_id=existing_id,
                relation=InvalidationRelation(verdict.relation.value),
                reason=f"被新事实替代: {fact.text}",
                at=at,
                superseded_by=fact_id,
                message_id=message_id,
                judge_id=verdict.judge_id,
                similarity=similarity,
                raw_answer=verdict.raw_answer,
            )
            return Outcome(
                "fact", fact_id, fact.text, fact.category, "superseded",
                superseded_id=existing_id, superseded_text=existing.text,
                relation=verdict.relation.value, similarity=similarity, confidence=fact.confidence,
            )
        observe()
        return Outcome(
            "fact", fact_id, fact.text, fact.category, "observed",
            relation=verdict.relation.value, similarity=similarity, confidence=fact.confidence,
        )

    def _save_preference(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        pref_id: str,
        extractor_id: str,
        message_id: str,
        at: datetime,
        session_id: str | None,
    ) -> Outcome:
        existing = [(p.id, p.text) for p in memory.all_preferences()]
        for similarity, existing_id in self._similar(pref.text, existing, self.preference_similarity):
            match = memory.preference(existing_id)
            if match.category != pref.category:
                continue
            memory.reinforce_preference(
                preference_id=existing_id,
                observed_strength=pref.strength,
                message_id=message_id,
                at=at,
                similarity=similarity,
                evidence=pref.evidence,
                session_id=session_id,
            )
            return Outcome(
                "preference", existing_id, match.text, match.category, "reinforced",
                similarity=similarity, strength=memory.preference(existing_id).strength,
            )
        memory.observe_preference(
            preference_id=pref_id,
            text=pref.text,
            category=pref.category,
            strength=pref.strength,
            message_id=message_id,
            at=at,
            extractor_id=extractor_id,
            evidence=pref.evidence,
            session_id=session_id,
        )
        return Outcome("preference", pref_id, pref.text, pref.category, "observed", strength=pref.strength)
