"""The spec's FactManager / PreferenceManager, deciding on the aggregate itself.

Decisions read the user's own aggregate (never the read model), so they see
every earlier write at once however far the projection lags (ADR 0003).
Every verdict and its provenance go into the events the commands trigger.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import attrs
import numpy as np

from factledger.application.candidates import CandidateIndex
from factledger.application.ports import Embedder, RelationJudge, Vector
from factledger.domain.memory import UserMemory
from factledger.domain.values import (
    Authority,
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    InvalidationRelation,
    Relation,
    Verdict,
)

CANDIDATES = 3


@attrs.frozen
class Outcome:
    """What happened to one extracted item."""

    kind: str  # "fact" | "preference"
    id: str
    text: str
    category: str
    action: str  # observed | confirmed | superseded | reinforced | contested
    superseded_id: str | None = None
    superseded_text: str | None = None
    relation: str | None = None
    similarity: float | None = None
    confidence: float | None = None
    strength: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        return {k: v for k, v in data.items() if v is not None}


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity of two unit vectors."""
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


@attrs.frozen
class DecisionSource:
    """Where the items being decided came from."""

    extractor_id: str
    prompt_id: str | None
    message_id: str | None
    session_id: str | None
    at: datetime
    actor: str | None


@attrs.define
class Decider:
    """Applies one message's extraction to a user's memory."""

    judge: RelationJudge
    embedder: Embedder
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7
    _index: CandidateIndex = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._index = CandidateIndex(self.embedder)

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
        source = DecisionSource(extraction.extractor_id, extraction.prompt_id, message_id, session_id, at, None)
        for index, fact in enumerate(extraction.facts):
            fact_id = str(uuid.uuid5(memory.id, f"{message_id}/fact/{index}"))
            authority = Authority.INFERRED if fact.inferred else Authority.STATED
            outcomes.append(self.save_fact(memory, fact, fact_id, authority, source))
        for index, pref in enumerate(extraction.preferences):
            pref_id = str(uuid.uuid5(memory.id, f"{message_id}/preference/{index}"))
            outcomes.append(self._save_preference(memory, pref, pref_id, source))
        return outcomes

    def save_fact(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        fact_id: str,
        authority: Authority,
        source: DecisionSource,
    ) -> Outcome:
        """The spec's FactManager.save_fact, with authority: a challenger that the
        similar fact outranks is recorded as contesting it instead of replacing it."""
        active = [(f.id, f.text) for f in memory.active_facts()]
        similar = self._index.similar((memory.id, "fact"), fact.text, active, self.fact_similarity, CANDIDATES)

        def observe() -> None:
            memory.observe_fact(
                fact_id=fact_id,
                text=fact.text,
                category=fact.category,
                confidence=fact.confidence,
                message_id=source.message_id,
                at=source.at,
                extractor_id=source.extractor_id,
                session_id=source.session_id,
                conflicts_with=fact.conflicts_with,
                authority=authority,
                prompt_id=source.prompt_id,
                actor=source.actor,
            )

        if not similar:
            observe()
            return Outcome("fact", fact_id, fact.text, fact.category, "observed", confidence=fact.confidence)

        similarity, existing_id = similar[0]
        existing = memory.fact(existing_id)
        verdict = self.judge.judge(existing.text, fact.text)
        relation = verdict.relation.value
        provenance = Verdict.of(verdict, similarity)
        if verdict.relation is Relation.DUPLICATE and source.message_id is not None:
            memory.confirm_fact(
                fact_id=existing_id,
                message_id=source.message_id,
                at=source.at,
                verdict=provenance,
                session_id=source.session_id,
            )
            return Outcome(
                "fact",
                existing_id,
                existing.text,
                existing.category,
                "confirmed",
                relation=relation,
                similarity=similarity,
                confidence=existing.confidence,
            )
        if verdict.relation in (Relation.UPDATE, Relation.CONFLICT) or (
            verdict.relation is Relation.DUPLICATE and authority is Authority.MANUAL
        ):
            if Authority(existing.authority).outranks(authority):
                assert source.message_id is not None  # a manual fact outranks nothing above it
                memory.contest_fact(
                    fact_id=existing_id,
                    challenger_text=fact.text,
                    relation=relation,
                    message_id=source.message_id,
                    at=source.at,
                    verdict=provenance,
                )
                return Outcome(
                    "fact",
                    existing_id,
                    existing.text,
                    existing.category,
                    "contested",
                    relation=relation,
                    similarity=similarity,
                    confidence=existing.confidence,
                )
            observe()
            memory.invalidate_fact(
                fact_id=existing_id,
                relation=InvalidationRelation.MANUAL
                if authority is Authority.MANUAL
                else InvalidationRelation(relation),
                reason=(
                    f"由人工更正替代: {fact.text}" if authority is Authority.MANUAL else f"被新事实替代: {fact.text}"
                ),
                at=source.at,
                superseded_by=fact_id,
                message_id=source.message_id,
                verdict=provenance,
                actor=source.actor,
            )
            return Outcome(
                "fact",
                fact_id,
                fact.text,
                fact.category,
                "superseded",
                superseded_id=existing_id,
                superseded_text=existing.text,
                relation=relation,
                similarity=similarity,
                confidence=fact.confidence,
            )
        observe()
        return Outcome(
            "fact",
            fact_id,
            fact.text,
            fact.category,
            "observed",
            relation=relation,
            similarity=similarity,
            confidence=fact.confidence,
        )

    def _save_preference(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        pref_id: str,
        source: DecisionSource,
    ) -> Outcome:
        assert source.message_id is not None
        message_id, at, session_id = source.message_id, source.at, source.session_id
        # Only the same category can be reinforced: filter before taking the best candidates.
        existing = [(p.id, p.text) for p in memory.all_preferences() if p.category == pref.category]
        key = (memory.id, "preference", pref.category)
        for similarity, existing_id in self._index.similar(
            key, pref.text, existing, self.preference_similarity, CANDIDATES
        ):
            match = memory.preference(existing_id)
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
                "preference",
                existing_id,
                match.text,
                match.category,
                "reinforced",
                similarity=similarity,
                strength=memory.preference(existing_id).strength,
            )
        memory.observe_preference(
            preference_id=pref_id,
            text=pref.text,
            category=pref.category,
            strength=pref.strength,
            message_id=message_id,
            at=at,
            extractor_id=source.extractor_id,
            evidence=pref.evidence,
            session_id=session_id,
            prompt_id=source.prompt_id,
        )
        return Outcome("preference", pref_id, pref.text, pref.category, "observed", strength=pref.strength)
