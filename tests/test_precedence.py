"""The Decider's one precedence table (ADR 0032), row by row, with fake extractors, judges and
embedders at the ports: each row is reached by a real ``Decider.apply`` and its effect recorded."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import attrs
import pytest

from factledger.application import decisions
from factledger.application.decisions import Decider, KnownFactsCompared, Outcome
from factledger.application.ports import (
    ComparesKnownFacts,
    Embedder,
    Extractor,
    JudgesPreferences,
    NamesReplacedFacts,
    RelationJudge,
)
from factledger.application.precedence import PRECEDENCE, Answer, Claim, Pair, Row, Ruling, rule
from factledger.domain.memory import UserMemory
from factledger.domain.values import (
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    Relation,
    RelationVerdict,
    Turn,
)

START = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
OLD_FACT, NEW_FACT = "用户住在杭州", "用户住在上海"
OLD_PREF, NEW_PREF = "偏好简短的回复风格", "偏好详细的回复风格"
TASTE, NEW_TASTE_FACT = "喜欢玩王者荣耀", "用户现在天天玩原神"


class FakeEmbedder:
    """``Embedder``: unit vectors on a circle, so a pair's similarity is the cosine of their angle."""

    computed_locally = True

    def __init__(self, similarity_to_old: float = 1.0) -> None:
        self.angle = math.acos(similarity_to_old)

    @property
    def embedder_id(self) -> str:
        return "fake-embedder"

    @property
    def dimension(self) -> int:
        return 2

    @property
    def recall_threshold(self) -> float:
        return 0.5

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # the known items lie at angle 0, every new one at ``angle``
        return [
            [1.0, 0.0] if t in (OLD_FACT, OLD_PREF, TASTE) else [math.cos(self.angle), math.sin(self.angle)]
            for t in texts
        ]


@attrs.define
class FakeJudge:
    """``RelationJudge`` and ``JudgesPreferences``: one canned answer, every question recorded."""

    name: str
    relation: Relation = Relation.DIFFERENT
    compared: bool = True
    asked: list[tuple[str, str]] = attrs.Factory(list)

    @property
    def judge_id(self) -> str:
        return self.name

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        self.asked.append((old_fact, new_fact))
        return RelationVerdict(self.relation, self.name, raw_answer=f"{self.name} says", compared=self.compared)

    def judge_preference(self, old_preference: str, new_text: str) -> RelationVerdict:
        return self.judge(old_preference, new_text)


@attrs.define
class FakeExtractor:
    """``Extractor``; ``ComparesKnownFacts`` when ``compares``; ``NamesReplacedFacts``: ``names_replaced``."""

    said: Extraction
    compares: bool = False
    names_replaced: bool = False

    @property
    def extractor_id(self) -> str:
        return "fake-extractor"

    def extract(self, message: str, context: Sequence[Turn] = (), known_facts: Sequence[str] = ()) -> Extraction:
        return self.said

    def comparison_prompt_id(self, said: Extraction) -> str | None:
        return "compare-prompt" if self.compares else None

    @property
    def names_replaced_facts(self) -> bool:
        return self.names_replaced


def test_the_fakes_implement_the_ports() -> None:
    extractor = FakeExtractor(Extraction("fake-extractor"))
    assert isinstance(FakeEmbedder(), Embedder)
    assert isinstance(FakeJudge("j"), RelationJudge) and isinstance(FakeJudge("j"), JudgesPreferences)
    assert isinstance(extractor, Extractor) and isinstance(extractor, ComparesKnownFacts)
    assert isinstance(extractor, NamesReplacedFacts)


def tell(decider: Decider, memory: UserMemory, extractor: FakeExtractor, n: int) -> list[Outcome]:
    """One message through the Decider, as ingestion hands it over (what was shown, compared)."""
    message_id, at = f"m{n}", START + timedelta(minutes=n)
    memory.ingest_message(message_id, f"message {n}", at)
    shown = [f.text for f in memory.active_facts()]
    said = extractor.extract(f"message {n}", (), shown)
    memory.record_extraction(message_id, said)
    prompt_id = extractor.comparison_prompt_id(said)
    compared = KnownFactsCompared(frozenset(shown), prompt_id) if shown and prompt_id else None
    return decider.apply(memory, said, message_id, at, None, compared, extractor.names_replaced_facts)


@attrs.frozen
class Scenario:
    """A known item, then a message whose extraction, judges and similarity reach one row."""

    known: Extraction
    new: Extraction
    judge: Relation = Relation.DIFFERENT
    judge_compared: bool = True
    free_judge: Relation | None = Relation.DIFFERENT  # None: no free judge configured
    similarity: float = 1.0
    compares: bool = False
    names_replaced: bool = False
    # what the second message must do to the known item, written out here, not read from the
    # table: the event, the relation it records, whose verdict (None: the item is kept)
    expect: tuple[str, str | None, str] | None = None


def _facts(*facts: ExtractedFact) -> Extraction:
    return Extraction("fake-extractor", facts=facts)


def _prefs(*prefs: ExtractedPreference) -> Extraction:
    return Extraction("fake-extractor", preferences=prefs)


KNOWN_FACT = _facts(ExtractedFact(OLD_FACT, "location", 0.9))
NAMING = _facts(ExtractedFact(NEW_FACT, "location", 0.9, conflicts_with=OLD_FACT))
SILENT = _facts(ExtractedFact(NEW_FACT, "location", 0.9))
KNOWN_PREF = _prefs(ExtractedPreference(OLD_PREF, "communication_style", 0.8))
NEW_PREFERENCE = _prefs(ExtractedPreference(NEW_PREF, "communication_style", 0.8))
REPLACING_PREF = _prefs(ExtractedPreference(NEW_PREF, "communication_style", 0.8, replaces=(OLD_PREF,)))
KNOWN_TASTE = _prefs(ExtractedPreference(TASTE, "entertainment", 0.8))
TASTE_FACT = _facts(ExtractedFact(NEW_TASTE_FACT, "other", 0.9))

U, C, D, X = Relation.UPDATE, Relation.CONFLICT, Relation.DUPLICATE, Relation.DIFFERENT
F, P, FP = Pair.FACT, Pair.PREFERENCE, Pair.FACT_ON_PREFERENCE
EXT, JUDGE, FREE = "fake-extractor", "fake-judge", "fake-free-judge"
INVALIDATED, CONFIRMED = "FactInvalidated", "FactConfirmed"
SUPERSEDED, REINFORCED = "PreferenceSuperseded", "PreferenceReinforced"
FACT_EFFECT = {D: (CONFIRMED, None, JUDGE), U: (INVALIDATED, "update", JUDGE), C: (INVALIDATED, "conflict", JUDGE)}
PREF_EFFECT = {D: (REINFORCED, None, JUDGE), U: (SUPERSEDED, None, JUDGE), C: (SUPERSEDED, None, JUDGE)}
# (pair, claim, reason) of each row → a scenario that reaches it, and what it must do
SCENARIOS: dict[tuple[Pair, Claim, str], Scenario] = {
    (F, Claim.NAMED_SHOWN, "extractor-named-shown"): Scenario(
        KNOWN_FACT, NAMING, judge=D, compares=True, expect=(INVALIDATED, "conflict", EXT)
    ),
    (F, Claim.UNNAMED_SHOWN, "free-judge-duplicate"): Scenario(
        KNOWN_FACT, SILENT, free_judge=D, compares=True, expect=(CONFIRMED, None, FREE)
    ),
    (F, Claim.UNNAMED_SHOWN, "extractor-shown-unnamed"): Scenario(
        KNOWN_FACT, SILENT, judge=U, free_judge=U, compares=True
    ),
    **{
        (F, Claim.UNNAMED_SHOWN, f"judge-{r.value}"): Scenario(
            KNOWN_FACT, SILENT, judge=r, free_judge=None, compares=True, expect=FACT_EFFECT.get(r)
        )
        for r in (D, U, C, X)
    },
    (F, Claim.NAMED_REPLACEMENT, "extractor-replacement"): Scenario(
        KNOWN_FACT, NAMING, names_replaced=True, expect=(INVALIDATED, "update", EXT)
    ),
    **{
        (F, Claim.NAMED_REPLACEMENT, f"judge-{r.value}"): Scenario(
            KNOWN_FACT, NAMING, judge=r, names_replaced=True, expect=FACT_EFFECT[r]
        )
        for r in (D, U, C)
    },
    **{
        (F, Claim.NONE, f"judge-{r.value}"): Scenario(KNOWN_FACT, SILENT, judge=r, expect=FACT_EFFECT.get(r))
        for r in (D, U, C, X)
    },
    (P, Claim.NAMED_SHOWN, "extractor-named-shown"): Scenario(
        KNOWN_PREF, REPLACING_PREF, judge=D, expect=(SUPERSEDED, None, EXT)
    ),
    **{
        (P, Claim.NONE, f"judge-{r.value}"): Scenario(KNOWN_PREF, NEW_PREFERENCE, judge=r, expect=PREF_EFFECT.get(r))
        for r in (D, U, C, X)
    },
    (P, Claim.NONE, "similar-unread"): Scenario(
        KNOWN_PREF, NEW_PREFERENCE, judge_compared=False, similarity=0.9, expect=(REINFORCED, None, JUDGE)
    ),
    (P, Claim.NONE, "dissimilar-unread"): Scenario(KNOWN_PREF, NEW_PREFERENCE, judge_compared=False, similarity=0.5),
    (FP, Claim.NONE, "no-free-judge"): Scenario(KNOWN_TASTE, TASTE_FACT, judge=U, free_judge=None),
    (FP, Claim.NONE, "free-judge-no-change"): Scenario(KNOWN_TASTE, TASTE_FACT, judge=U, free_judge=X),
    (FP, Claim.NONE, "judge-update"): Scenario(
        KNOWN_TASTE, TASTE_FACT, judge=U, free_judge=U, expect=(SUPERSEDED, None, JUDGE)
    ),
    (FP, Claim.NONE, "judge-conflict"): Scenario(
        KNOWN_TASTE, TASTE_FACT, judge=C, free_judge=C, expect=(SUPERSEDED, None, JUDGE)
    ),
    (FP, Claim.NONE, "judge-no-change"): Scenario(KNOWN_TASTE, TASTE_FACT, judge=X, free_judge=U),
}


def _key(row: Row) -> tuple[Pair, Claim, str]:
    return (row.pair, row.claim, row.reason)


def test_each_row_has_one_key_and_one_scenario() -> None:
    keys = [_key(row) for row in PRECEDENCE]
    assert len(set(keys)) == len(keys)
    assert set(keys) == set(SCENARIOS)


def _run(scenario: Scenario, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Outcome], list[Any], list[Ruling], Any]:
    rulings: list[Ruling] = []

    def recorded(*args: Any, **kwargs: Any) -> Ruling:
        ruling = rule(*args, **kwargs)
        rulings.append(ruling)
        return ruling

    monkeypatch.setattr(decisions, "rule", recorded)
    judge = FakeJudge("fake-judge", scenario.judge, scenario.judge_compared)
    free = FakeJudge("fake-free-judge", scenario.free_judge) if scenario.free_judge is not None else None
    decider = Decider(judge, FakeEmbedder(scenario.similarity), free_judge=free)
    memory = UserMemory.start("u")
    tell(decider, memory, FakeExtractor(scenario.known), 0)
    memory.collect_events()
    judge.asked.clear()
    outcomes = tell(decider, memory, FakeExtractor(scenario.new, scenario.compares, scenario.names_replaced), 1)
    return outcomes, memory.collect_events(), rulings, judge


@pytest.mark.parametrize("row", PRECEDENCE, ids=lambda row: f"{row.pair.name}:{row.claim.name}:{row.reason}")
def test_each_row_decides_through_the_decider(row: Row, monkeypatch: pytest.MonkeyPatch) -> None:
    scenario = SCENARIOS[_key(row)]
    outcomes, events, rulings, judge = _run(scenario, monkeypatch)
    assert row in [r.row for r in rulings], f"{row.reason} was not reached: {[r.row.reason for r in rulings]}"
    names = [type(e).__name__ for e in events]
    effects = [e for e in events if type(e).__name__ in (INVALIDATED, CONFIRMED, SUPERSEDED, REINFORCED)]
    if scenario.expect is None:  # kept: the known item stands beside the new one
        assert effects == [], names
        assert all(o.action == "observed" for o in outcomes), outcomes
        return
    name, relation, by = scenario.expect
    assert [type(e).__name__ for e in effects] == [name]
    if relation is not None:
        assert effects[0].relation == relation
    if name != REINFORCED:  # a reinforcement records the similarity, not a verdict
        assert effects[0].verdict.judge_id == by
    if row.judge is None and row.free_judge is None:
        assert judge.asked == [], "the extraction's word decides alone: no call to the judge"


@pytest.mark.parametrize("pair", list(Pair))
def test_every_answer_meets_one_row(pair: Pair) -> None:
    """No combination of claim, answers and similarity falls through the table."""
    claims = {row.claim for row in PRECEDENCE if row.pair is pair}
    judged = [a for a in Answer if a is not Answer.ABSENT]
    for claim, free, said, similarity in itertools.product(claims, list(Answer), judged, (0.9, 0.5)):

        def verdict(answer: Answer) -> Callable[[], RelationVerdict | None]:
            if answer is Answer.ABSENT:
                return lambda: None
            relation = Relation.DIFFERENT if answer is Answer.UNREAD else Relation(answer.value)
            return lambda: RelationVerdict(relation, "j", compared=answer is not Answer.UNREAD)

        ruling = rule(
            pair,
            claim,
            ask_free_judge=verdict(free),
            ask_judge=verdict(said),
            extractor_says=lambda relation: RelationVerdict(relation, "x"),
            similarity=similarity,
            threshold=0.7,
        )
        assert ruling.row.pair is pair and ruling.row.claim is claim
        if ruling.verdict is not None:
            assert ruling.verdict.relation is ruling.row.relation
