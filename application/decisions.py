"""The spec's FactManager / PreferenceManager, deciding on the aggregate itself.

Decisions read the user's own aggregate (never the read model), so they see
every earlier write at once however far the projection lags (ADR 0003).
Every verdict and its provenance go into the events the commands trigger.

When the extraction already related its facts to the known facts it was
shown (``conflicts_with``, ADR 0019), that answer is the relation check for
those facts: no judge is asked again about them.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TypeVar

import attrs

from factledger.application.candidates import BYTES_KEPT, CandidateIndex
from factledger.application.outcomes import (
    CANDIDATES,
    FREE_JUDGED,
    RELATED,
    SIBLINGS_JUDGED,
    DecisionSource,
    KnownFactsCompared,
    Outcome,
    Said,
    answer,
    cosine,
    named,
)
from factledger.application.ports import Embedder, JudgesPreferences, RelationJudge
from factledger.application.precedence import Action, Claim, Pair, Ruling, rule, traced
from factledger.application.said_order import SaidOrder
from factledger.domain.memory import Fact, Preference, Span, UserMemory
from factledger.domain.values import (
    Authority,
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    InvalidationRelation,
    Relation,
    RelationVerdict,
    Verdict,
)

_P = TypeVar("_P", bound=Said)


@attrs.define
class Decider:
    """Applies one message's extraction to a user's memory.

    ``free_judge``: a judge that costs no call (the offline rules), asked
    instead of ``judge`` whether a known fact the extraction already said does
    not conflict is a duplicate (ADR 0019); without one, ``judge`` is asked.
    """

    judge: RelationJudge
    embedder: Embedder
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7
    free_judge: RelationJudge | None = None
    candidate_cache_bytes: int = BYTES_KEPT
    _index: CandidateIndex = attrs.field(init=False)
    _said_order: SaidOrder = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._index = CandidateIndex(self.embedder, self.candidate_cache_bytes)
        self._said_order = SaidOrder(self)

    def apply(
        self,
        memory: UserMemory,
        extraction: Extraction,
        message_id: str,
        at: datetime,
        session_id: str | None,
        compared: KnownFactsCompared | None = None,
        names_replaced: bool = False,
    ) -> list[Outcome]:
        """Trigger the events for every extracted item, in order; return what happened.

        ``compared``: the known facts the extraction was shown and related its
        facts to, when its extractor does so (``ComparesKnownFacts``).
        ``names_replaced``: its ``conflicts_with`` names a fact it replaces (``NamesReplacedFacts``).
        """
        outcomes: list[Outcome] = []
        source = DecisionSource(
            extraction.extractor_id, extraction.prompt_id, message_id, session_id, at, None, compared, names_replaced
        )
        # Every new item's vector in one call: ranking needs them, and so does the read model's
        # row, which the save writes in its own transaction from vectors in hand (ADR 0020).
        texts = dict.fromkeys([f.text for f in extraction.facts] + [p.text for p in extraction.preferences])
        if texts:
            self.embedder.embed(list(texts))
        for index, fact in enumerate(extraction.facts):
            fact_id = str(uuid.uuid5(memory.id, f"{message_id}/fact/{index}"))
            authority = Authority.INFERRED if fact.inferred else Authority.STATED
            outcomes.append(self.save_fact(memory, fact, fact_id, authority, source))
        for index, pref in enumerate(extraction.preferences):
            pref_id = str(uuid.uuid5(memory.id, f"{message_id}/preference/{index}"))
            outcomes.append(self._save_preference(memory, pref, pref_id, source))
        outcomes += self.retract(memory, extraction, source)
        return outcomes

    def retract(self, memory: UserMemory, extraction: Extraction, source: DecisionSource) -> list[Outcome]:
        """End the known facts the message takes back with nothing in their place (``retracted``).

        Only a fact the extractor was shown and named word for word (``named``)
        ends, as it held at the message's said time: the extraction is the
        relation check for what it was shown (ADR 0019), and a text naming no
        fact it saw ends nothing. A fact set by an operator is never ended so.
        """
        compared = source.compared
        if not extraction.retracted or compared is None or source.message_id is None:
            return []
        held: Sequence[Fact | Span] = (
            memory.facts_around(source.at)[0] if memory.said_before(source.at) else memory.active_facts()
        )
        shown = [f for f in held if f.text in compared.facts]
        said = json.dumps({"retracted": list(extraction.retracted)}, ensure_ascii=False)
        verdict = RelationVerdict(Relation.CONFLICT, source.extractor_id, raw_answer=said, prompt_id=compared.prompt_id)
        outcomes = []
        for fact in named(extraction.retracted, shown):
            if Authority(fact.authority).outranks(Authority.STATED):
                continue
            memory.invalidate_fact(
                fact_id=fact.id,
                relation=InvalidationRelation.RETRACTED,
                reason="retracted-by-user",
                at=source.at,
                message_id=source.message_id,
                verdict=Verdict.of(verdict, 1.0),
            )
            outcomes.append(Outcome("fact", fact.id, fact.text, fact.category, "retracted", relation="retracted"))
        return outcomes

    def save_fact(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        fact_id: str,
        authority: Authority,
        source: DecisionSource,
    ) -> Outcome:
        """The spec's FactManager.save_fact, judged against the best candidates, with authority.

        Candidates (at most ``CANDIDATES``): the active facts the extractor named
        in ``conflicts_with``, then the facts at least ``fact_similarity``
        similar, then facts of the same category at least ``RELATED`` similar.
        The first ``duplicate`` confirms; every ``update``/``conflict`` replaces
        its fact (or contests it, if it outranks the new one); otherwise the
        fact is new. Each candidate's relation comes from ``fact_verdict``.
        """
        if source.message_id is not None and authority is not Authority.MANUAL and memory.said_before(source.at):
            return self._said_order.save_fact(memory, fact, fact_id, authority, source)
        superseded: list[tuple[Fact, RelationVerdict, float]] = []
        contested: Outcome | None = None
        for similarity, existing in self._fact_candidates(memory, fact):
            ruling = self.fact_ruling(existing, fact, source)
            verdict = ruling.verdict
            assert verdict is not None  # every row for facts records one
            if ruling.action is Action.CONFIRM and source.message_id is not None and not superseded:
                return self._confirmed(memory, fact, existing, verdict, similarity, source)
            # authority, after the table: an operator's restatement replaces even a duplicate
            replaces = ruling.action is Action.SUPERSEDE or (
                ruling.action is Action.CONFIRM and authority is Authority.MANUAL
            )
            if not replaces:
                continue
            if Authority(existing.authority).outranks(authority):
                outcome = self._contested(memory, fact, existing, verdict, similarity, source)
                contested = contested or outcome
            else:
                superseded.append((existing, verdict, similarity))
        if contested is not None and not superseded:
            return contested
        return self._observed_fact(memory, fact, fact_id, authority, source, superseded)

    def _confirmed(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        existing: Fact,
        verdict: RelationVerdict,
        similarity: float,
        source: DecisionSource,
    ) -> Outcome:
        """``existing`` said again by ``fact``."""
        assert source.message_id is not None
        memory.confirm_fact(
            fact_id=existing.id,
            message_id=source.message_id,
            at=source.at,
            verdict=Verdict.of(verdict, similarity),
            session_id=source.session_id,
            said_text=fact.text,
            rules=verdict.rules,
        )
        return Outcome(
            "fact",
            existing.id,
            existing.text,
            existing.category,
            "confirmed",
            relation=verdict.relation.value,
            similarity=similarity,
            confidence=existing.confidence,
        )

    def _contested(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        existing: Fact,
        verdict: RelationVerdict,
        similarity: float,
        source: DecisionSource,
    ) -> Outcome:
        """``existing`` outranks ``fact``, which would replace it: recorded as contesting it."""
        assert source.message_id is not None  # a manual fact outranks nothing above it
        relation = verdict.relation.value
        memory.contest_fact(
            fact_id=existing.id,
            challenger_text=fact.text,
            relation=relation,
            message_id=source.message_id,
            at=source.at,
            verdict=Verdict.of(verdict, similarity),
            rules=verdict.rules,
        )
        return Outcome(
            "fact",
            existing.id,
            existing.text,
            existing.category,
            "contested",
            relation=relation,
            similarity=similarity,
            confidence=existing.confidence,
        )

    def _observed_fact(
        self,
        memory: UserMemory,
        fact: ExtractedFact,
        fact_id: str,
        authority: Authority,
        source: DecisionSource,
        superseded: list[tuple[Fact, RelationVerdict, float]],
    ) -> Outcome:
        """A new fact, replacing every one in ``superseded``, and the preferences it says changed."""
        self.observe(memory, fact, fact_id, authority, source)
        for existing, verdict, similarity in superseded:
            manual = authority is Authority.MANUAL
            memory.invalidate_fact(
                fact_id=existing.id,
                relation=InvalidationRelation.MANUAL if manual else InvalidationRelation(verdict.relation.value),
                reason="replaced-by-correction" if manual else "replaced-by-new-fact",
                at=source.at,
                superseded_by=fact_id,
                message_id=source.message_id,
                verdict=Verdict.of(verdict, similarity),
                actor=source.actor,
                rules=verdict.rules,
            )
        self.retire_preferences(memory, fact.text, fact_id, source)
        if superseded:
            first, verdict, similarity = superseded[0]
            return Outcome(
                "fact",
                fact_id,
                fact.text,
                fact.category,
                "superseded",
                superseded_id=first.id,
                superseded_text=first.text,
                relation=verdict.relation.value,
                similarity=similarity,
                confidence=fact.confidence,
            )
        return Outcome("fact", fact_id, fact.text, fact.category, "observed", confidence=fact.confidence)

    def retire_preferences(self, memory: UserMemory, text: str, fact_id: str, source: DecisionSource) -> None:
        """A preference the new fact says changed ("用户现在天天玩原神" after 最爱玩王者荣耀) gives way
        to it: picked by the free judge (no call), however unlike in words, then judged (the
        precedence table's rows for a fact against a preference); at most ``CANDIDATES`` judged."""
        if source.message_id is None:
            return
        # said before later statements: the preferences that held then (ADR 0025)
        held: Sequence[Said] = (
            memory.preferences_around(source.at)[0] if memory.said_before(source.at) else memory.all_preferences()
        )
        judged: list[str] = []
        for pref in list(reversed(held))[:FREE_JUDGED]:
            if len(judged) == CANDIDATES:
                break
            ruling = self.retiring(pref.text, text, judged)
            if ruling.action is Action.SUPERSEDE and ruling.verdict is not None:
                verdict = ruling.verdict
                memory.supersede_preference(
                    pref.id,
                    fact_id,
                    "replaced-by-new-fact",
                    source.message_id,
                    source.at,
                    Verdict.of(verdict, 0.0),
                    verdict.rules,
                )

    def retiring(self, preference: str, text: str, judged: list[str] | None = None) -> Ruling:
        """The table's ruling on a fact against a known preference; ``judged`` gains it when the judge is asked."""
        free = self.free_judge

        def ask_judge() -> RelationVerdict:
            if judged is not None:
                judged.append(preference)
            return self.preference_verdict(preference, text)

        return rule(
            Pair.FACT_ON_PREFERENCE,
            Claim.NONE,
            ask_free_judge=lambda: free.judge(preference, text) if free is not None else None,
            ask_judge=ask_judge,
        )

    def reinforces(self, verdict: RelationVerdict, similarity: float) -> bool:
        """Whether a preference so judged, this similar, is the same preference said again: a
        ``duplicate``, or one at least ``preference_similarity`` similar the judge does not call
        ``different`` (a judge that compared two likings and says they differ is heard, however
        alike their words; the offline rules' ``different`` for want of any rule that reads the
        pair is no such answer, and similarity decides as in the spec's PreferenceManager)."""
        return self.preference_ruling(verdict, similarity).action is Action.REINFORCE

    def judged_fact_ruling(self, verdict: RelationVerdict) -> Ruling:
        """The table's ruling on a known fact the extraction said nothing of, so judged."""
        return rule(Pair.FACT, Claim.NONE, ask_judge=lambda: verdict)

    def preference_ruling(self, verdict: RelationVerdict, similarity: float) -> Ruling:
        """The table's ruling on a known preference the extraction did not name, so judged, this similar."""
        return rule(
            Pair.PREFERENCE,
            Claim.NONE,
            ask_judge=lambda: verdict,
            similarity=similarity,
            threshold=self.preference_similarity,
        )

    def named_preferences(
        self, pref: ExtractedPreference, held: Sequence[_P], source: DecisionSource
    ) -> list[tuple[_P, RelationVerdict, float]]:
        """The known preferences ``pref`` names in ``replaces`` (matched by text, ``named``), each with
        the extractor's verdict: it was shown them and read the change in the message, so its word
        is the relation check (as ``conflicts_with`` for facts, ADR 0019)."""
        if not pref.replaces:
            return []
        said = json.dumps({"preference": pref.text, "replaces": list(pref.replaces)}, ensure_ascii=False)
        prompt_id = source.compared.prompt_id if source.compared is not None else source.prompt_id
        ruling = rule(
            Pair.PREFERENCE,
            Claim.NAMED_SHOWN,
            extractor_says=lambda relation: RelationVerdict(
                relation, source.extractor_id, raw_answer=said, prompt_id=prompt_id, rules=pref.rules
            ),
        )
        assert ruling.verdict is not None and ruling.action is Action.SUPERSEDE
        return [(old, ruling.verdict, 1.0) for old in named(pref.replaces, held)]

    def preference_verdict(self, old_preference: str, new_text: str) -> RelationVerdict:
        """The judge's verdict on a preference: its own check where it has one (``JudgesPreferences``)."""
        if isinstance(self.judge, JudgesPreferences):
            return self.judge.judge_preference(old_preference, new_text)
        return self.judge.judge(old_preference, new_text)

    def fact_verdict(self, existing: Said, fact: ExtractedFact, source: DecisionSource) -> RelationVerdict:
        """How ``fact`` relates to ``existing``: the verdict of ``fact_ruling``."""
        verdict = self.fact_ruling(existing, fact, source).verdict
        assert verdict is not None  # every row for facts records one
        return verdict

    def fact_ruling(self, existing: Said, fact: ExtractedFact, source: DecisionSource) -> Ruling:
        """The precedence table's row for ``fact`` against ``existing`` (application/precedence.py).

        The extraction's claim: shown ``existing`` (ADR 0019), it names it in ``conflicts_with``
        (``conflict``, in the extractor's name and prompt) or says they do not conflict (only a
        duplicate is looked for, by the free judge); not shown, a replacement it names from a
        change read in the message (``NamesReplacedFacts``) stands where the judge finds the two
        different; otherwise the judge decides, as for any extractor.
        """
        compared = source.compared
        shown = compared is not None and existing.text in compared.facts
        names_it = bool(named(fact.conflicting, [existing]))
        if shown:
            claim = Claim.NAMED_SHOWN if names_it else Claim.UNNAMED_SHOWN
        else:
            claim = Claim.NAMED_REPLACEMENT if names_it and source.names_replaced else Claim.NONE
        prompt_id = compared.prompt_id if shown and compared is not None else None
        said, free = answer(fact), self.free_judge
        ruling = rule(
            Pair.FACT,
            claim,
            ask_free_judge=lambda: free.judge(existing.text, fact.text) if free is not None else None,
            ask_judge=lambda: self.judge.judge(existing.text, fact.text),
            extractor_says=lambda relation: RelationVerdict(
                relation, source.extractor_id, raw_answer=said, prompt_id=prompt_id, rules=fact.rules
            ),
        )
        return traced(ruling, fact.rules if names_it else ())

    def matching_fact(self, memory: UserMemory, text: str) -> Fact | None:
        """The active fact that says ``text``: the same words, else the most similar at least
        ``fact_similarity`` similar that the judge calls a duplicate."""
        active = memory.active_facts()
        same = named(text, active)
        if same:
            return same[0]
        ranked = self._index.ranked((memory.id, "fact"), text, [(f.id, f.text) for f in active])
        for similarity, fact_id in ranked[:CANDIDATES]:
            if similarity < self.fact_similarity:
                break
            if self.judge.judge(memory.facts[fact_id].text, text).relation is Relation.DUPLICATE:
                return memory.facts[fact_id]
        return None

    def _fact_candidates(self, memory: UserMemory, fact: ExtractedFact) -> list[tuple[float, Fact]]:
        """(similarity, fact) to judge the new fact against, best reasons first, at most ``CANDIDATES``."""
        active = memory.active_facts()
        if not active:
            return []
        ranked = self._index.ranked((memory.id, "fact"), fact.text, [(f.id, f.text) for f in active])
        score = {item_id: similarity for similarity, item_id in ranked}
        extractor_named = named(fact.conflicting, active)
        similar = [memory.facts[i] for s, i in ranked if s >= self.fact_similarity]
        related = [memory.facts[i] for s, i in ranked if s >= RELATED and memory.facts[i].category == fact.category]
        # a change the extractor named may end more than one fact said in other words
        # ("最爱喝美式咖啡", "一天三杯咖啡" for "咖啡戒了，现在只喝绿茶"): those the free judge updates
        siblings = self._updated_by(active, fact.text) if extractor_named else []
        chosen = list(dict.fromkeys([*extractor_named, *similar, *related, *siblings]))[:CANDIDATES]
        return [(score[f.id], f) for f in chosen]

    def _updated_by(self, facts: Sequence[Fact], text: str) -> list[Fact]:
        """The latest few facts the free judge (no call) says ``text`` updates."""
        if self.free_judge is None:
            return []
        recent = list(reversed(facts))[:SIBLINGS_JUDGED]
        return [f for f in recent if self.free_judge.judge(f.text, text).relation is Relation.UPDATE][:CANDIDATES]

    def observe(
        self, memory: UserMemory, fact: ExtractedFact, fact_id: str, authority: Authority, source: DecisionSource
    ) -> None:
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
            rules=fact.rules,
        )

    def _save_preference(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        pref_id: str,
        source: DecisionSource,
    ) -> Outcome:
        """The spec's PreferenceManager.save_preference, with the judge asked first.

        Preferences of the same category at least ``RELATED`` similar are judged
        (at most ``CANDIDATES``): the first ``duplicate``, or one at least
        ``preference_similarity`` similar that the judge does not call
        different, is reinforced with the spec's formula; every ``update`` or
        ``conflict`` (以前喜欢…现在…) is superseded by the new preference, as is
        every active preference the extractor names in ``replaces`` (whatever its
        category; no judge is asked about those).
        """
        assert source.message_id is not None
        if memory.said_before(source.at):
            return self._said_order.save_preference(memory, pref, pref_id, source)
        # Only the same category can be reinforced or replaced: filter before ranking.
        existing = [(p.id, p.text) for p in memory.all_preferences() if p.category == pref.category]
        ranked = self._index.ranked((memory.id, "preference", pref.category), pref.text, existing)
        replaced: list[tuple[Preference, RelationVerdict, float]] = self.named_preferences(
            pref, memory.all_preferences(), source
        )
        for similarity, existing_id in [pair for pair in ranked if pair[0] >= RELATED][:CANDIDATES]:
            if any(old.id == existing_id for old, _, _ in replaced):
                continue  # named by the extractor: replaced on its word
            match = memory.preference(existing_id)
            verdict = self.preference_verdict(match.text, pref.text)
            ruling = self.preference_ruling(verdict, similarity)
            if ruling.action is Action.SUPERSEDE:
                replaced.append((match, verdict, similarity))
                continue
            if ruling.action is Action.REINFORCE and not replaced:
                return self._reinforced(memory, pref, match, similarity, source)
        return self._observed(memory, pref, pref_id, replaced, source)

    def _reinforced(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        match: Preference,
        similarity: float,
        source: DecisionSource,
    ) -> Outcome:
        """The spec's reinforcement: ``match`` said again, its strength raised by the formula."""
        assert source.message_id is not None
        memory.reinforce_preference(
            preference_id=match.id,
            observed_strength=pref.strength,
            message_id=source.message_id,
            at=source.at,
            similarity=similarity,
            evidence=pref.evidence,
            session_id=source.session_id,
            said_text=pref.text,
        )
        return Outcome(
            "preference",
            match.id,
            match.text,
            match.category,
            "reinforced",
            similarity=similarity,
            strength=memory.preference(match.id).strength,
        )

    def _observed(
        self,
        memory: UserMemory,
        pref: ExtractedPreference,
        pref_id: str,
        replaced: list[tuple[Preference, RelationVerdict, float]],
        source: DecisionSource,
    ) -> Outcome:
        """A new preference, superseding every one in ``replaced``."""
        assert source.message_id is not None
        message_id, at, session_id = source.message_id, source.at, source.session_id
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
            rules=pref.rules,
        )
        for old, verdict, similarity in replaced:
            memory.supersede_preference(
                old.id,
                pref_id,
                "replaced-by-new-preference",
                message_id,
                at,
                Verdict.of(verdict, similarity),
                verdict.rules,
            )
        if replaced:
            old, verdict, similarity = replaced[0]
            return Outcome(
                "preference",
                pref_id,
                pref.text,
                pref.category,
                "superseded",
                superseded_id=old.id,
                superseded_text=old.text,
                relation=verdict.relation.value,
                similarity=similarity,
                strength=pref.strength,
            )
        return Outcome("preference", pref_id, pref.text, pref.category, "observed", strength=pref.strength)


__all__ = ["Decider", "DecisionSource", "KnownFactsCompared", "Outcome", "cosine"]
