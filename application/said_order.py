"""Deciding on a message said before what the memory already holds (ADR 0025).

A user's memory must not depend on the order its messages are recorded in:
an old chat log imported into a live ledger, or a late delivery, is decided
as if it had been recorded when it was said. Against the *timeline* (the
facts that held at its said time, and those said after it, active or
retired), a fact said earlier

- continues (confirms) or replaces what held at its time — a replaced fact
  ends at its time, even one that has been retired since;
- never supersedes a later statement: when a later one replaces or repeats
  it, it enters history, valid from its said time until the later one's;
- splits a fact it replaced that was said again after it: from that
  mention on, the old fact holds again (``resume_fact``).

The later statement that ends it is found by the chain (the later fact that
replaced what it replaces now replaces it), by a mention said again, or by
the judge over the later facts most like it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import attrs
import numpy as np

from factledger.application.outcomes import (
    CANDIDATES,
    FREE_JUDGED,
    RELATED,
    SIBLINGS_JUDGED,
    DecisionSource,
    Outcome,
    named,
)
from factledger.application.precedence import Action
from factledger.domain.kinds import ItemKind
from factledger.domain.memory import Mention, Span, UserMemory
from factledger.domain.reasons import ReasonCode
from factledger.domain.values import (
    Authority,
    ExtractedFact,
    ExtractedPreference,
    InvalidationRelation,
    Relation,
    RelationVerdict,
    Verdict,
)

if TYPE_CHECKING:
    from factledger.application.decisions import Decider

#: who decided that a statement said earlier is ended by a later one through the timeline (the
#: chain of what it replaced, or a mention said again), recorded as the verdict's judge
TIMELINE_JUDGE = "said-order/1"
CHANGES = (Relation.UPDATE, Relation.CONFLICT)

#: a later item that ends the one being decided, the verdict that says so, and their similarity
Ending = tuple[Span, RelationVerdict, float]


@attrs.frozen
class SaidOrder:
    """The Decider's way with items said before what the memory holds."""

    decider: Decider

    # ---- facts -------------------------------------------------------------------------------

    def save_fact(
        self, memory: UserMemory, fact: ExtractedFact, fact_id: str, authority: Authority, source: DecisionSource
    ) -> Outcome:
        """A fact said before facts the memory holds: decided against what held when it was said,
        ended by the earliest later statement that replaces or repeats it."""
        held, later = memory.facts_around(source.at)
        replaced: list[Ending] = []
        for similarity, span in self._fact_candidates(fact.text, fact.category, held, fact.conflicting):
            verdict = self.decider.fact_verdict(span, fact, source)
            if verdict.relation is Relation.DUPLICATE and not replaced:
                return self._mentioned_then(memory, fact, span, verdict, similarity, source)
            if verdict.relation in CHANGES and not Authority(span.authority).outranks(authority):
                replaced.append((span, verdict, similarity))
        resumed = [r for span, _, _ in replaced if (r := Resumption.of("fact", memory, span, source.at)) is not None]
        successor = self._later_fact(fact, replaced, [r.ending() for r in resumed], later)
        self.decider.observe(memory, fact, fact_id, authority, source)
        for span, verdict, similarity in replaced:
            memory.invalidate_fact(
                fact_id=span.id,
                relation=InvalidationRelation(verdict.relation.value),
                reason="replaced-by-new-fact",
                at=source.at,
                superseded_by=fact_id,
                message_id=source.message_id,
                verdict=Verdict.of(verdict, similarity),
                rules=verdict.rules,
            )
        for resumption in resumed:
            resumption.record(memory, source)
        self.decider.retire_preferences(memory, fact.text, fact_id, source)
        outcome = _outcome("fact", fact_id, fact.text, fact.category, replaced, confidence=fact.confidence)
        if successor is None:
            return outcome
        span, verdict, similarity = successor
        if verdict.relation is Relation.DUPLICATE and not Authority(span.authority).outranks(authority):
            _carry_on_fact(memory, fact_id, successor, source)
            return outcome
        memory.invalidate_fact(
            fact_id=fact_id,
            relation=InvalidationRelation(verdict.relation.value),
            reason="replaced-by-later-statement",
            at=span.valid_from,
            superseded_by=span.id,
            message_id=source.message_id,
            verdict=Verdict.of(verdict, similarity),
            rules=verdict.rules,
        )
        return attrs.evolve(outcome, action="historical", replaced_by_id=span.id, replaced_by_text=span.text)

    def _mentioned_then(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        span: Span,
        verdict: RelationVerdict,
        similarity: float,
        source: DecisionSource,
    ) -> Outcome:
        """A fact said again, earlier than what followed it: one more mention if it is still active;
        if it has been replaced since, the mention is kept with it and changes nothing that is true now."""
        assert source.message_id is not None
        provenance = Verdict.of(verdict, similarity)
        if span.valid_until is None:
            memory.confirm_fact(
                span.id, source.message_id, source.at, provenance, source.session_id, fact.text, verdict.rules
            )
        else:
            memory.mention_fact(span.id, source.message_id, source.at, provenance, fact.text)
        relation = verdict.relation.value
        return Outcome("fact", span.id, span.text, span.category, "confirmed", relation=relation, similarity=similarity)

    def _later_fact(
        self, fact: ExtractedFact, replaced: Sequence[Ending], resumed: Sequence[Ending], later: Sequence[Span]
    ) -> Ending | None:
        """The earliest later statement that ends ``fact``: one that replaced what ``fact`` replaces
        (the chain now goes through ``fact``), a replaced fact said again, else one the judge says
        replaces or repeats it."""
        found = [*self._judged(fact.text, _chained(replaced, later)), *resumed]
        if not found:
            for similarity, span in self._later_candidates(fact, later):
                verdict = self.decider.judge.judge(fact.text, span.text)
                if self.decider.judged_fact_ruling(verdict).action is not Action.KEEP:  # replaces or repeats
                    found.append((span, verdict, similarity))
        return min(found, key=lambda f: f[0].valid_from, default=None)

    def _judged(self, text: str, chained: Sequence[Ending]) -> list[Ending]:
        """The chain's later items, each a ``duplicate`` where the judge says it repeats ``text``
        (said in order, it would have confirmed ``text``), else the chain's update."""
        judged = []
        for span, verdict, similarity in chained:
            said = self.decider.judge.judge(text, span.text)
            judged.append((span, said if said.relation is Relation.DUPLICATE else verdict, similarity))
        return judged

    def _later_candidates(self, fact: ExtractedFact, later: Sequence[Span]) -> list[tuple[float, Span]]:
        """The later facts to judge against ``fact``: similar or related ones, and the nearest few
        the free judge (no call) says change it; said in order, the later message's extractor
        would have been shown ``fact`` and could have named it, whatever its words."""
        ranked = self._fact_candidates(fact.text, fact.category, later, ())
        free_judge = self.decider.free_judge
        if free_judge is None:
            return ranked
        chosen = {span.id for _, span in ranked}
        nearest = [s for s in later[:SIBLINGS_JUDGED] if s.id not in chosen]
        changing = [s for s in nearest if free_judge.judge(fact.text, s.text).relation in CHANGES]
        return ranked + [(0.0, span) for span in changing[:CANDIDATES]]

    def _fact_candidates(
        self, text: str, category: str, spans: Sequence[Span], names: Sequence[str]
    ) -> list[tuple[float, Span]]:
        """As the Decider's candidates, over facts held at some time: named, similar, then related."""
        ranked = self._ranked(text, spans)
        similar = [s for score, s in ranked if score >= self.decider.fact_similarity]
        related = [s for score, s in ranked if score >= RELATED and s.category == category]
        chosen = list(dict.fromkeys([*named(names, spans), *similar, *related]))[:CANDIDATES]
        score = {s.id: sc for sc, s in ranked}
        return [(score[s.id], s) for s in chosen]

    def _ranked(self, text: str, spans: Sequence[Span]) -> list[tuple[float, Span]]:
        """(similarity, span) most similar first; ties keep the spans' order (oldest first)."""
        if not spans:
            return []
        vectors = np.asarray(self.decider.embedder.embed([text, *[s.text for s in spans]]), dtype=np.float64)
        scores = np.round(vectors[1:] @ vectors[0], 6)
        return [(float(scores[i]), spans[i]) for i in np.argsort(-scores, kind="stable")]

    # ---- preferences -------------------------------------------------------------------------

    def save_preference(
        self, memory: UserMemory, pref: ExtractedPreference, pref_id: str, source: DecisionSource
    ) -> Outcome:
        """A preference said before what the memory holds: reinforces or replaces what held then,
        and is ended by the earliest later statement that replaces or repeats it."""
        assert source.message_id is not None
        held, later = memory.preferences_around(source.at)
        replaced: list[Ending] = self.decider.named_preferences(pref, held, source)
        for similarity, span in self._related(pref.text, [s for s in held if s.category == pref.category]):
            if any(old.id == span.id for old, _, _ in replaced):
                continue  # named by the extractor: replaced on its word
            verdict = self.decider.preference_verdict(span.text, pref.text)
            if verdict.relation in CHANGES:
                replaced.append((span, verdict, similarity))
            elif not replaced and self.decider.reinforces(verdict, similarity):
                return self._reinforced_then(memory, pref, span, Verdict.of(verdict, similarity), source)
        resumed = [r for s, _, _ in replaced if (r := Resumption.of("preference", memory, s, source.at)) is not None]
        endings = [r.ending() for r in resumed]
        successor = self._later_preference(memory, pref, source.at, replaced, endings, later)
        memory.observe_preference(
            preference_id=pref_id,
            text=pref.text,
            category=pref.category,
            strength=pref.strength,
            message_id=source.message_id,
            at=source.at,
            extractor_id=source.extractor_id,
            evidence=pref.evidence,
            session_id=source.session_id,
            prompt_id=source.prompt_id,
            rules=pref.rules,
        )
        for span, verdict, similarity in replaced:
            why: ReasonCode = "replaced-by-new-preference"
            said = source.message_id, source.at
            memory.supersede_preference(span.id, pref_id, why, *said, Verdict.of(verdict, similarity), verdict.rules)
        for resumption in resumed:
            resumption.record(memory, source)
        outcome = _outcome("preference", pref_id, pref.text, pref.category, replaced, strength=pref.strength)
        if successor is None:
            return outcome
        span, verdict, similarity = successor
        if self._repeats(verdict, similarity) and span.id not in memory.facts:
            _carry_on_preference(memory, pref_id, successor, source)
            return outcome
        memory.supersede_preference(
            pref_id,
            span.id,
            "replaced-by-later-statement",
            source.message_id,
            span.valid_from,
            Verdict.of(verdict, similarity),
            verdict.rules,
        )
        return attrs.evolve(outcome, action="historical", replaced_by_id=span.id, replaced_by_text=span.text)

    def _reinforced_then(
        self, memory: UserMemory, pref: ExtractedPreference, span: Span, verdict: Verdict, source: DecisionSource
    ) -> Outcome:
        """A preference said again, earlier than what followed: reinforced if still active; if it
        has been replaced since, the mention is kept with it and changes nothing that holds now."""
        assert source.message_id is not None
        similarity = verdict.similarity
        if span.valid_until is None:
            memory.reinforce_preference(
                span.id,
                pref.strength,
                source.message_id,
                source.at,
                similarity,
                pref.evidence,
                source.session_id,
                pref.text,
            )
        else:
            memory.mention_preference(span.id, source.message_id, source.at, verdict, pref.text)
        strength = memory.preferences[span.id].strength if span.id in memory.preferences else None
        return Outcome(
            "preference", span.id, span.text, span.category, "reinforced", similarity=similarity, strength=strength
        )

    def _later_preference(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        at: datetime,
        replaced: Sequence[Ending],
        resumed: Sequence[Ending],
        later: Sequence[Span],
    ) -> Ending | None:
        """The earliest later preference that replaces or repeats ``pref`` (through the chain of
        what it replaced, a replaced one said again, else by the judge), or a later fact that
        says the taste changed."""
        found = [*self._judged_preferences(pref.text, _chained(replaced, later)), *resumed]
        if found:
            return min(found, key=lambda f: f[0].valid_from)
        same_kind = [s for s in later if s.category == pref.category]
        for similarity, span in self._related(pref.text, same_kind):
            verdict = self.decider.preference_verdict(pref.text, span.text)
            if self.decider.preference_ruling(verdict, similarity).action is not Action.KEEP:  # replaces or repeats
                found.append((span, verdict, similarity))
        for span in memory.facts_around(at)[1][:FREE_JUDGED]:  # the nearest facts after it
            ruling = self.decider.retiring(pref.text, span.text)
            if ruling.action is Action.SUPERSEDE and ruling.verdict is not None:
                found.append((span, ruling.verdict, 0.0))
        return min(found, key=lambda f: f[0].valid_from, default=None)

    def _judged_preferences(self, text: str, chained: Sequence[Ending]) -> list[Ending]:
        """The chain's later preferences, each with the judge's verdict and its similarity where,
        said in order, it would have reinforced ``text``; else the chain's update."""
        judged = []
        for similarity, span in self._ranked(text, [span for span, _, _ in chained]):
            verdict = self.decider.preference_verdict(text, span.text)
            if self._repeats(verdict, similarity):
                judged.append((span, verdict, similarity))
            else:
                judged.append(next(c for c in chained if c[0] is span))
        return judged

    def _repeats(self, verdict: RelationVerdict, similarity: float) -> bool:
        """Whether a preference said later, so judged, would have reinforced the earlier one."""
        if verdict.relation in CHANGES:
            return False
        return self.decider.reinforces(verdict, similarity)

    def _related(self, text: str, spans: Sequence[Span]) -> list[tuple[float, Span]]:
        """The spans at least ``RELATED`` similar to ``text``, most similar first, at most ``CANDIDATES``."""
        return [pair for pair in self._ranked(text, spans) if pair[0] >= RELATED][:CANDIDATES]


def _outcome(
    kind: ItemKind,
    item_id: str,
    text: str,
    category: str,
    replaced: Sequence[Ending],
    confidence: float | None = None,
    strength: float | None = None,
) -> Outcome:
    observed = Outcome(kind, item_id, text, category, "observed", confidence=confidence, strength=strength)
    if not replaced:
        return observed
    first, verdict, similarity = replaced[0]
    return attrs.evolve(
        observed,
        action="superseded",
        superseded_id=first.id,
        superseded_text=first.text,
        relation=verdict.relation.value,
        similarity=similarity,
    )


def _carry_on_fact(memory: UserMemory, fact_id: str, repeat: Ending, source: DecisionSource) -> None:
    """A later statement repeats the fact said earlier: said in order it would have confirmed it,
    so the earlier one carries the fact from its own time, up to where the repeat ended."""
    span, verdict, similarity = repeat
    assert source.message_id is not None
    memory.absorb_fact(span.id, fact_id, source.message_id, Verdict.of(verdict, similarity))
    if span.valid_until is not None and span.successor is not None:
        memory.invalidate_fact(
            fact_id=fact_id,
            relation=InvalidationRelation.UPDATE,
            reason="replaced-by-later-statement",
            at=span.valid_until,
            superseded_by=span.successor,
            message_id=source.message_id,
            verdict=Verdict.of(verdict, similarity),
        )


def _carry_on_preference(memory: UserMemory, pref_id: str, repeat: Ending, source: DecisionSource) -> None:
    """As ``_carry_on_fact``, for a preference repeated later."""
    assert source.message_id is not None
    span, verdict, similarity = repeat
    provenance = Verdict.of(verdict, similarity)
    memory.absorb_preference(span.id, pref_id, source.message_id, provenance)
    if span.valid_until is not None and span.successor is not None:
        memory.supersede_preference(
            pref_id, span.successor, "replaced-by-later-statement", source.message_id, span.valid_until, provenance
        )


def _chained(replaced: Sequence[Ending], later: Sequence[Span]) -> list[Ending]:
    """The later items that replaced one of ``replaced``: the chain now goes through the item
    said between them, so each of those replaces it."""
    by_id = {span.id: span for span in later}
    return [
        (by_id[s.successor], _timeline_verdict({"replaced": s.id, "by": s.successor}), 0.0)
        for s, _, _ in replaced
        if s.successor in by_id
    ]


@attrs.frozen
class Resumption:
    """An item replaced by the one being decided, said again after it: it holds again from then."""

    kind: ItemKind
    replaced: Span  # as it was before the item being decided ended it earlier
    mention: Mention
    resumed_id: str

    @classmethod
    def of(cls, kind: ItemKind, memory: UserMemory, replaced: Span, at: datetime) -> Resumption | None:
        mention = replaced.said_again_after(at)
        if mention is None:
            return None
        resumed_id = str(uuid.uuid5(memory.id, f"{mention.message_id}/resumed/{replaced.id}"))
        return cls(kind, replaced, mention, resumed_id)

    def ending(self) -> Ending:
        """The item said again, as the later statement that ends the one being decided."""
        r, said = self.replaced, self.mention.text or self.replaced.text
        resumed = Span(self.resumed_id, said, r.category, self.mention.at, None, None, r.authority, r.confidence)
        return resumed, _timeline_verdict({"said_again": r.id, "message_id": self.mention.message_id}), 1.0

    def record(self, memory: UserMemory, source: DecisionSource) -> None:
        """Observe the item said again, ending where the item it continues had ended."""
        assert source.message_id is not None
        until, successor = self.replaced.valid_until, self.replaced.successor
        verdict = Verdict.of(self.ending()[1], 1.0)
        if self.kind == "preference":
            memory.resume_preference(self.replaced.id, self.resumed_id, self.mention, TIMELINE_JUDGE)
            if until is not None and successor is not None:
                memory.supersede_preference(
                    self.resumed_id, successor, "replaced-by-later-statement", source.message_id, until, verdict
                )
            return
        memory.resume_fact(self.replaced.id, self.resumed_id, self.mention, TIMELINE_JUDGE)
        if until is not None and successor is not None:
            memory.invalidate_fact(
                fact_id=self.resumed_id,
                relation=InvalidationRelation.UPDATE,
                reason="replaced-by-later-statement",
                at=until,
                superseded_by=successor,
                message_id=source.message_id,
                verdict=verdict,
            )


def _timeline_verdict(said: dict[str, str]) -> RelationVerdict:
    return RelationVerdict(Relation.UPDATE, TIMELINE_JUDGE, raw_answer=json.dumps(said, ensure_ascii=False))
