"""Whose word decides how a new item relates to a known one: one table (ADR 0032).

Up to four things speak about a pair (a new item, a known item of the same user):

* the extractor's claim: it names the known fact in ``conflicts_with`` (or the known preference
  in ``replaces``), having been shown it or having read the change in the message itself; or it
  was shown the fact and did not name it (so it says they do not conflict); or it says nothing;
* the judge (``RelationJudge``, for preferences its ``judge_preference`` where it has one);
* the free judge (the offline rules, no call), where one is configured;
* the similarity of the two, where the judge read nothing in the pair.

``PRECEDENCE`` lists, for each kind of pair and claim, the answers in the order they are
consulted; the first row that matches decides: the relation recorded, whose verdict it is,
what happens to the known item, and a reason code. A judge is asked only when a row needs its
answer, so a claim that decides alone costs no call. Candidates (which known items are judged,
how many) and authority (an operator's fact is contested, never replaced; an operator's
restatement replaces even a duplicate) are applied by the Decider around the table.
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import attrs

from factledger.domain.values import Relation, RelationVerdict


class Pair(enum.StrEnum):
    FACT = "new fact / known fact"
    PREFERENCE = "new preference / known preference"
    FACT_ON_PREFERENCE = "new fact / known preference"


class Claim(enum.StrEnum):
    """What the extraction says of the known item."""

    NAMED_SHOWN = "names it; was shown it"
    UNNAMED_SHOWN = "was shown it; names it not"
    NAMED_REPLACEMENT = "names it as replaced by a change read in the message; not shown it"
    NONE = "says nothing of it"


class Answer(enum.StrEnum):
    """A judge's answer, as the table reads it."""

    DUPLICATE = "duplicate"
    UPDATE = "update"
    CONFLICT = "conflict"
    DIFFERENT = "different"  # compared the two and found them different
    UNREAD = "different, read nothing"  # no rule read the pair (``compared=False``): a default
    ABSENT = "no free judge configured"

    @classmethod
    def of(cls, verdict: RelationVerdict | None) -> Answer:
        if verdict is None:
            return cls.ABSENT
        if verdict.relation is Relation.DIFFERENT and not verdict.compared:
            return cls.UNREAD
        return cls(verdict.relation.value)


class Band(enum.StrEnum):
    ANY = "any"
    SIMILAR = "≥ preference_similarity"
    BELOW = "< preference_similarity"

    def holds(self, similarity: float, threshold: float) -> bool:
        return self is Band.ANY or (similarity >= threshold) == (self is Band.SIMILAR)


class Action(enum.StrEnum):
    """What happens to the known item."""

    CONFIRM = "confirmed: the new fact says it again"
    REINFORCE = "reinforced: the new preference says it again"
    SUPERSEDE = "superseded by the new item"
    KEEP = "kept: both stand"


class Voice(enum.StrEnum):
    """Whose verdict is recorded (``Verdict.judge_id``)."""

    EXTRACTOR = "extractor"
    JUDGE = "judge"
    FREE_JUDGE = "free judge"
    NOBODY = "nobody (nothing recorded)"


Answers = frozenset[Answer] | None  # None: not asked


@attrs.frozen
class Row:
    pair: Pair
    claim: Claim
    free_judge: Answers
    judge: Answers
    band: Band
    relation: Relation | None  # recorded; None: nothing recorded
    voice: Voice
    action: Action
    reason: str


def _a(*answers: Answer) -> frozenset[Answer]:
    return frozenset(answers)


_D, _U, _C = Answer.DUPLICATE, Answer.UPDATE, Answer.CONFLICT
_ANY_DIFFERENT = _a(Answer.DIFFERENT, Answer.UNREAD)
_NOT_DUPLICATE = _a(_U, _C, Answer.DIFFERENT, Answer.UNREAD)
_F, _P, _FP = Pair.FACT, Pair.PREFERENCE, Pair.FACT_ON_PREFERENCE
_DUP, _UPD, _CON, _DIF = Relation.DUPLICATE, Relation.UPDATE, Relation.CONFLICT, Relation.DIFFERENT
_EXT, _JUD, _FREE, _NOBODY = Voice.EXTRACTOR, Voice.JUDGE, Voice.FREE_JUDGE, Voice.NOBODY
_ANY, _SIMILAR, _BELOW = Band.ANY, Band.SIMILAR, Band.BELOW

# fmt: off
PRECEDENCE: tuple[Row, ...] = (
    # pair, claim, free judge says, judge says, similarity → relation, whose, action, reason
    Row(_F, Claim.NAMED_SHOWN, None, None, _ANY, _CON, _EXT, Action.SUPERSEDE, "extractor-named-shown"),
    Row(_F, Claim.UNNAMED_SHOWN, _a(_D), None, _ANY, _DUP, _FREE, Action.CONFIRM, "free-judge-duplicate"),
    Row(_F, Claim.UNNAMED_SHOWN, _NOT_DUPLICATE, None, _ANY, _DIF, _EXT, Action.KEEP, "extractor-shown-unnamed"),
    Row(_F, Claim.UNNAMED_SHOWN, _a(Answer.ABSENT), _a(_D), _ANY, _DUP, _JUD, Action.CONFIRM, "judge-duplicate"),
    Row(_F, Claim.UNNAMED_SHOWN, _a(Answer.ABSENT), _a(_U), _ANY, _UPD, _JUD, Action.SUPERSEDE, "judge-update"),
    Row(_F, Claim.UNNAMED_SHOWN, _a(Answer.ABSENT), _a(_C), _ANY, _CON, _JUD, Action.SUPERSEDE, "judge-conflict"),
    Row(_F, Claim.UNNAMED_SHOWN, _a(Answer.ABSENT), _ANY_DIFFERENT, _ANY, _DIF, _JUD, Action.KEEP, "judge-different"),
    Row(_F, Claim.NAMED_REPLACEMENT, None, _ANY_DIFFERENT, _ANY, _UPD, _EXT, Action.SUPERSEDE, "extractor-replacement"),
    Row(_F, Claim.NAMED_REPLACEMENT, None, _a(_D), _ANY, _DUP, _JUD, Action.CONFIRM, "judge-duplicate"),
    Row(_F, Claim.NAMED_REPLACEMENT, None, _a(_U), _ANY, _UPD, _JUD, Action.SUPERSEDE, "judge-update"),
    Row(_F, Claim.NAMED_REPLACEMENT, None, _a(_C), _ANY, _CON, _JUD, Action.SUPERSEDE, "judge-conflict"),
    Row(_F, Claim.NONE, None, _a(_D), _ANY, _DUP, _JUD, Action.CONFIRM, "judge-duplicate"),
    Row(_F, Claim.NONE, None, _a(_U), _ANY, _UPD, _JUD, Action.SUPERSEDE, "judge-update"),
    Row(_F, Claim.NONE, None, _a(_C), _ANY, _CON, _JUD, Action.SUPERSEDE, "judge-conflict"),
    Row(_F, Claim.NONE, None, _ANY_DIFFERENT, _ANY, _DIF, _JUD, Action.KEEP, "judge-different"),
    Row(_P, Claim.NAMED_SHOWN, None, None, _ANY, _UPD, _EXT, Action.SUPERSEDE, "extractor-named-shown"),
    Row(_P, Claim.NONE, None, _a(_U), _ANY, _UPD, _JUD, Action.SUPERSEDE, "judge-update"),
    Row(_P, Claim.NONE, None, _a(_C), _ANY, _CON, _JUD, Action.SUPERSEDE, "judge-conflict"),
    Row(_P, Claim.NONE, None, _a(_D), _ANY, _DUP, _JUD, Action.REINFORCE, "judge-duplicate"),
    Row(_P, Claim.NONE, None, _a(Answer.DIFFERENT), _ANY, _DIF, _JUD, Action.KEEP, "judge-different"),
    Row(_P, Claim.NONE, None, _a(Answer.UNREAD), _SIMILAR, _DIF, _JUD, Action.REINFORCE, "similar-unread"),
    Row(_P, Claim.NONE, None, _a(Answer.UNREAD), _BELOW, _DIF, _JUD, Action.KEEP, "dissimilar-unread"),
    Row(_FP, Claim.NONE, _a(Answer.ABSENT), None, _ANY, None, _NOBODY, Action.KEEP, "no-free-judge"),
    Row(_FP, Claim.NONE, _a(_D, *_ANY_DIFFERENT), None, _ANY, None, _NOBODY, Action.KEEP, "free-judge-no-change"),
    Row(_FP, Claim.NONE, _a(_U, _C), _a(_U), _ANY, _UPD, _JUD, Action.SUPERSEDE, "judge-update"),
    Row(_FP, Claim.NONE, _a(_U, _C), _a(_C), _ANY, _CON, _JUD, Action.SUPERSEDE, "judge-conflict"),
    Row(_FP, Claim.NONE, _a(_U, _C), _a(_D, *_ANY_DIFFERENT), _ANY, None, _NOBODY, Action.KEEP, "judge-no-change"),
)
# fmt: on


@attrs.frozen
class Ruling:
    """The row that decided, and the verdict to record (None when the row records nothing)."""

    row: Row
    verdict: RelationVerdict | None

    @property
    def action(self) -> Action:
        return self.row.action


Ask = Callable[[], RelationVerdict | None]


def _matches(wanted: Answers, asked: dict[str, RelationVerdict | None], column: str, ask: Ask) -> bool:
    if wanted is None:
        return True
    if column not in asked:
        asked[column] = ask()  # asked once, and only when a row needs the answer
    return Answer.of(asked[column]) in wanted


def rule(
    pair: Pair,
    claim: Claim,
    *,
    ask_free_judge: Ask = lambda: None,
    ask_judge: Ask = lambda: None,
    extractor_says: Callable[[Relation], RelationVerdict] | None = None,
    similarity: float = 0.0,
    threshold: float = 1.0,
) -> Ruling:
    """The first row of ``PRECEDENCE`` for ``pair`` and ``claim`` that the answers match.

    ``ask_free_judge`` returns None when there is no free judge; ``extractor_says`` phrases the
    extractor's verdict (its raw answer and prompt) for rows in the extractor's voice."""
    asked: dict[str, RelationVerdict | None] = {}
    for row in PRECEDENCE:
        if row.pair is not pair or row.claim is not claim:
            continue
        if not _matches(row.free_judge, asked, "free", ask_free_judge):
            continue
        if not _matches(row.judge, asked, "judge", ask_judge):
            continue
        if not row.band.holds(similarity, threshold):
            continue
        return Ruling(row, _verdict(row, asked, extractor_says))
    raise LookupError(f"no row of the precedence table for {pair}, {claim}, answers {asked}")


def _verdict(
    row: Row, asked: dict[str, RelationVerdict | None], extractor_says: Callable[[Relation], RelationVerdict] | None
) -> RelationVerdict | None:
    if row.relation is None:
        return None
    if row.voice is Voice.EXTRACTOR:
        assert extractor_says is not None, f"row {row.reason} speaks for the extractor"
        return extractor_says(row.relation)
    verdict = asked["free" if row.voice is Voice.FREE_JUDGE else "judge"]
    assert verdict is not None and verdict.relation is row.relation, (row, verdict)
    return verdict


def traced(ruling: Ruling, named_by: tuple[str, ...]) -> Ruling:
    """``ruling`` with ``named_by`` first among its verdict's rules: the ids of the extractor's
    rules that named the known item, so chose it to be judged (and, in the extractor's voice,
    decided), whoever's verdict is recorded (issue 27)."""
    if not named_by or ruling.verdict is None:
        return ruling
    return attrs.evolve(ruling, verdict=attrs.evolve(ruling.verdict, rules=(*named_by, *ruling.verdict.rules)))


__all__ = ["PRECEDENCE", "Action", "Answer", "Band", "Claim", "Pair", "Row", "Ruling", "Voice", "rule", "traced"]
