"""Which known fact a change replaces when no rule for its slot or topic named one.

The slot, topic and change rules each know a kind of statement (where one
lives, a drink, a school year). A change told in words none of them reads
("上礼拜入职顺丰了，当快递员", "这个月又调到顺义的仓库", "wait, wrong firm — I'm at
KPMG") still carries two things that say what it replaces, whatever its
topic: a word of change or of correction in the message, and the frame of
the statement it replaces (what is left of both facts once their values are
set aside: 用户在…工作, "the user's office is in …").

``replaced_fact`` reads those two things for one new fact: among the user's
latest facts about the same person, the one whose frame the new fact shares
most, when the message marks a change (a lower bar for a correction, which
is about something just said). A word of adding (也, 还, also) or of someone
else keeps every fact. What it names the extractor reports in
``conflicts_with``; the decider takes the extractor's word for it (ADR 0010,
addendum 11).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from factledger.infrastructure.offline.changes import (
    is_conditional,
    is_correction,
    is_plan,
    is_retraction,
    told_of_someone_else,
)
from factledger.infrastructure.offline.clauses import is_english, split_clauses
from factledger.infrastructure.offline.registry import Vocabulary, registry
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import third_person
from factledger.infrastructure.offline.rules_en import clean_en, en_third_person
from factledger.infrastructure.offline.rules_zh_facts import clean_said
from factledger.infrastructure.offline.slots import (
    EN_ROLE_PATTERN,
    ROLE_SYNONYMS,
    ZH_ROLE_PATTERN,
    ZH_ROLE_QUALIFIER,
    is_exclusive_slot,
    is_liking_slot,
    slots_of,
)

_DATA = rules("replacement")
RE = _DATA.patterns(EN_ROLE_PATTERN=EN_ROLE_PATTERN, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)

#: how many of the latest known facts a change is read against
RECENT = 6


_ROLES = Vocabulary(
    filters={
        "en_role": lambda role: ROLE_SYNONYMS.get(role.lower(), role.lower()),
        "zh_role": lambda role: ROLE_SYNONYMS.get(role, role),
    }
)
_EN_OWNERS = registry(_DATA, "owner_en", _ROLES, EN_ROLE_PATTERN=EN_ROLE_PATTERN)
_ZH_OWNERS = registry(_DATA, "owner_zh", _ROLES, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, ZH_ROLE_QUALIFIER=ZH_ROLE_QUALIFIER)
_EN_STOP = frozenset(_DATA.words("_EN_STOP"))


def _owner(fact: str) -> str | None:
    """Whose the fact is: '' for the user, the role for a relative's, None for no one the reader can tell
    (the first rule of ``[[registries.owner_en]]`` / ``[[registries.owner_zh]]`` that fires)."""
    text = fact.strip()
    fired = (_EN_OWNERS if is_english(text) else _ZH_OWNERS).first(text)
    return None if fired is None else fired.text


@functools.lru_cache(maxsize=256)  # asked of one whole message once per fact it may replace with
def _someone_else(message: str, owner: str, english: bool) -> bool:
    """Whether the message tells of someone other than the fact's owner: their change is not the owner's."""
    if english and not owner:
        return bool(RE._EN_OTHER_SUBJECT.match(message))
    if english:
        # "my wife" is the fact's 老婆 (owners are canonical roles); he or she, that relative
        said = (m.group(0).split()[-1].lower() for m in RE._EN_SOMEONE.finditer(message))
        return any(ROLE_SYNONYMS.get(role, role) != owner for role in said if role not in ("he", "she"))
    if not owner:
        # "纠正一下，她是福建人": a clause whose subject is he or she
        someone = told_of_someone_else(message) or bool(RE._ZH_HE_OR_SHE.search(message))
        return someone and not RE._ZH_I.search(message)
    # 他/她 in a message about a relative is that relative ("更正一下，她是重庆人")
    return any(ROLE_SYNONYMS.get(m.group(0), m.group(0)) != owner for m in RE._ZH_ROLE.finditer(message))


def _frame(fact: str) -> set[str]:
    """The pieces of a fact that say what it is about: characters (Chinese) or words (English)."""
    if not is_english(fact):
        return set(RE._ZH_NOISE.sub("", fact))
    return {w for w in RE._EN_FRAME_WORD.findall(fact.lower()) if w not in _EN_STOP}


_ZH_KINDS = {kind: re.compile(words) for kind, words in _DATA.mapping("_ZH_KINDS").items()}
# each word from its start: "train" is no commute in "training", nor "car" in "career"
_EN_KINDS = {kind: re.compile(rf"(?<![a-z])(?:{words})", re.I) for kind, words in _DATA.mapping("_EN_KINDS").items()}


@functools.lru_cache(maxsize=256)  # asked of the whole message once per clause that tells a change
def _kinds(fact: str) -> frozenset[str]:
    if not is_english(fact):
        return frozenset(k for k, words in _ZH_KINDS.items() if words.search(fact.removeprefix("用户")))
    return frozenset(k for k, words in _EN_KINDS.items() if words.search(fact))


def told_changes(message: str, covered: Sequence[str]) -> list[str]:
    """The clauses of ``message`` that tell a change by its verb and that no fact in ``covered``
    already says, restated as the user's: what a change's new value is, when no rule read it."""
    english = is_english(message)
    told = []
    for clause in split_clauses(message):
        text = clause.text.strip()
        changed = (RE._EN_CHANGED if english else RE._ZH_CHANGED).search(text)
        if not changed or RE._ASKED_OR_TO_YOU.search(text):
            continue
        # "单位把我同事调去了佛山": someone else's change; "跟对象一起搬到温江" is the user's, with them
        someone = RE._EN_SOMEONE if english else RE._ZH_ROLE
        if any(not RE._COMPANION.search(text[: m.start()][-6:]) for m in someone.finditer(text)):
            continue
        if english:
            said = RE._EN_WE.sub("I", clean_en(text))
            said = en_third_person(said if RE._EN_SAID_AS_I.match(said) else f"I {said}")
        else:
            said = "用户" + third_person(clean_said(text)).removeprefix("用户")
        value = set(text[changed.end() :]) - set(" ，,。.!！了啦呀啊吧")
        if len(value) < 2 or any(value <= set(fact) for fact in covered):
            continue
        told.append(said)
    return told


@functools.lru_cache(maxsize=256)
def _marks(message: str) -> tuple[bool, bool, bool, bool, bool]:
    """What ``replaced_fact`` asks of the whole message, worked out once per message, not once per
    fact or clause that tells a change (issue 25: a message of 2,000 such clauses read itself 2,000
    times): (a correction or retraction, English, a condition, plan or "someday", no change told
    (nor a correction), no verb of change)."""
    correcting = is_correction(message) or is_retraction(message)
    english = is_english(message)
    unsure = is_conditional(message) or is_plan(message) or bool(RE._SOMEDAY.search(message))
    change = RE._EN_CHANGE if english else RE._ZH_CHANGE
    adding = RE._EN_ADDING if english else RE._ZH_ADDING
    unchanged = not correcting and (not change.search(message) or bool(adding.search(message)))
    apart = not (RE._EN_CHANGED if english else RE._ZH_CHANGED).search(message)
    return correcting, english, unsure, unchanged, apart


def replaced_fact(new_fact: str, message: str, known: Sequence[str], told: bool = False) -> str | None:
    """The known fact ``new_fact`` (read from ``message``) replaces, when the message marks a change
    and one of the latest facts about the same person shares its frame; else None.

    ``told``: ``new_fact`` is a clause restated by ``told_changes``, whose kind may be said in
    another clause of the message ("手机掉厕所了，一咬牙上了台一加13")."""
    correcting, english, unsure, unchanged, apart = _marks(message)
    moment = RE._EN_MOMENT if english else RE._ZH_MOMENT
    if unsure or unchanged or is_plan(new_fact) or moment.search(new_fact):
        return None
    owner = _owner(new_fact)
    if owner is None or _someone_else(message, owner, english):
        return None
    kinds = _kinds(new_fact) | (_kinds(message) if told else frozenset())
    new = _Said(new_fact, owner, _frame(new_fact), {slot for slot, _ in slots_of(new_fact)}, kinds, told)
    # the one that shares most, the latest of those; over a lower bar for a correction
    scored = [
        (_score(new, fact, correcting, english, apart), -age, fact)
        for age, fact in enumerate(reversed(known[-RECENT:]))
    ]
    best = max(((score, age, fact) for score, age, fact in scored if score is not None), default=None)
    return best[2] if best and best[0] >= (0.01 if correcting else 1.0) else None


class _Said(NamedTuple):
    """What ``replaced_fact`` reads of the new fact once, to compare with each known one."""

    text: str
    owner: str
    frame: set[str]
    slots: set[str]
    kinds: frozenset[str]
    told: bool


def _score(new: _Said, fact: str, correcting: bool, english: bool, apart: bool) -> float | None:
    """How much ``fact`` shares with the new fact (its frame, slot and kind), or None when it cannot be
    what the new fact replaces."""
    history = RE._EN_HISTORY if english else RE._ZH_HISTORY
    if _owner(fact) != new.owner or fact == new.text or (not correcting and history.search(fact)):
        return None
    its_frame, its_slots = _frame(fact), {slot for slot, _ in slots_of(fact)}
    if any(is_liking_slot(s) for s in new.slots) and not any(is_liking_slot(s) for s in its_slots):
        return None  # "挺喜欢现在的工作" says how the user feels, not that the job changed
    if apart and {*new.slots, *its_slots} >= {"job", "work_location"} and not new.slots & its_slots:
        return None  # "现在做运营" after 在杭州工作: what one does and where, unless a verb moved both
    same_slot = bool(new.slots & its_slots)
    same_kind = bool(new.kinds & _kinds(fact))
    # A fact replaces another only in a slot: the same one, or a one-value slot of the same kind
    # that the new fact fills, or (a change told by its verb, "入职顺丰了") that the old fact held alone. Words
    # or a kind in common are no slot: "is living their true self" replaces nothing of "is
    # determined to make this studio work", nor "新买了个猫爬架" 养了只猫 (issue 26). A
    # correction names what it replaces whatever its slot.
    held_alone = new.told and any(is_exclusive_slot(s) for s in its_slots)
    fills_one = any(is_exclusive_slot(s) for s in new.slots)  # "has had some games" holds no one value
    if not (same_slot or correcting or (same_kind and (fills_one or held_alone))):
        return None
    shared = len(new.frame & its_frame)
    return shared / max(1, min(len(new.frame), len(its_frame))) + same_slot + same_kind
