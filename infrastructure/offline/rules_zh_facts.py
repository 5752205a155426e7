"""Chinese rules for facts: whom a clause is about, then the slot it fills.

Chinese drops subjects freely ("我在杭州工作，老板姓张"), so the subject of
one clause carries to the next clause that has none, and a relationship noun
without a possessor ("老板") is the user's. Each rule matches one kind of
statement (location, work, name, age, habit, possession …) and restates it in
the third person; what no rule recognises is restated as said by
``generic_fact``.
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.changes import is_unreal
from factledger.infrastructure.offline.registry import Registries, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import (
    CJK,
    GENERIC_CONFIDENCE,
    HEDGED_CONFIDENCE,
    VOCABULARY,
    Item,
    Subject,
    finding,
    named_rule,
    third_person,
    tidy,
)
from factledger.infrastructure.offline.rules_zh_prefs import RE as PREFS
from factledger.infrastructure.offline.slots import (
    GENDER_WORDS,
    ZH_ROLE_PATTERN,
    ZH_ROLE_QUALIFIER,
    first_row,
    looks_like_job,
    looks_like_organisation,
    pattern_test,
    rewritten,
)

_DATA = rules("rules_zh_facts")
RE = _DATA.patterns()

OPENERS = _DATA.regex("OPENERS")
LEAD_ADVERBS = _DATA.regex("LEAD_ADVERBS")
_FRONTING = _DATA.compiled_rows("_FRONTING", ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)
_PARTNER_NAMES = _DATA.mapping("_PARTNER_NAMES")
_PATTERN_TESTS = _DATA.compiled_rows("_PATTERN_TESTS")
_OWNED_CATEGORIES = _DATA.compiled_rows("_OWNED_CATEGORIES")
_PARTNER_BY_GENDER = _DATA.compiled_rows("_PARTNER_BY_GENDER")
_CONSUMED = _DATA.compiled_rows("_CONSUMED")
_LINE_OF_WORK = _DATA.compiled_rows("_LINE_OF_WORK")
_CHANGES = _DATA.words("_CHANGES")
_USER_FACTS = _DATA.rows("_USER_FACTS")
#: what goes before the change a clause tells, in turn: adverbs, "家", the event that came first …
_CHANGE_LEADS = _DATA.compiled_rows("_CHANGE_LEADS")


def fronted(text: str) -> str:
    """The clause in its usual order: "雅思我不考了" → "我不考雅思了", "今天儿子生日" → "儿子生日",
    "恐怖片我现在不爱看了" → "我现在不爱看恐怖片了"."""
    text = rewritten(text, _FRONTING)
    fired = RULES.fronted.first(text)
    return fired.text if fired else text


def parse_subject(text: str, carried: Subject) -> tuple[Subject, str]:
    """The clause's subject and the rest of the clause after it."""
    fired = RULES.subject.first(text)
    if fired is None:
        return carried._replace(explicit=False), text
    rest, kind = text[fired.match.end() :], fired.rule.values["kind"]
    if kind == "pronoun":  # 他/她: the relative just named, if one was
        return (carried._replace(explicit=True) if carried.kind == "role" else Subject("unknown", "用户", True)), rest
    return Subject(kind, fired.text, True), rest


def _place(value: str) -> str | None:
    """A place as said ("杭州", "上海浦东"), cut before "三年了"-like tails; None if not a place."""
    value = tidy(value)
    m = RE._PLACE_CUT.search(value)
    if m and m.start() > 0:
        value = tidy(value[: m.start()])
    if not value or len(value) > 15 or RE._NOT_A_PLACE.search(value) or not RE._WORDS.search(value):
        return None
    return value


def _work_place(value: str) -> tuple[str, str] | None:
    """(where, category): a city is a location, a company is work."""
    place = _place(value)
    if not place:
        return None
    place = RE._PLACE_TAIL.sub("", place) or place
    if len(place) < 2 or RE._NEAR_HOME.search(place):
        return None  # near home: which place, the message says elsewhere
    return place, ("work" if looks_like_organisation(place) else "location")


_VOCABULARY = VOCABULARY.extended(
    predicates={
        **{name: pattern_test(pattern, where) for pattern, name, where in _PATTERN_TESTS},
        "job": simple(looks_like_job),
        "organisation": simple(looks_like_organisation),
        # 男生, 上海人, 一个东北人: what a person is, not what they do (是医生 is work's)
        "gender_or_people": simple(lambda value: value in GENDER_WORDS or bool(RE._PEOPLE.fullmatch(value))),
        "place": simple(lambda value: _place(value) is not None),
        "work_place": simple(lambda value: _work_place(value) is not None),
        "user": lambda value, context: context.get("who", "用户") == "用户",
        "whole_place": simple(lambda value: _place(value) == tidy(value)),
        "wish_verb": simple(lambda value: value in ("希望", "想要", "受不了")),
    },
    filters={
        "place": lambda value: _place(value) or "",
        "work_place": lambda value: (_work_place(value) or ("", ""))[0],
        "job": lambda value: RE._COUNTED.sub("", tidy(value)),  # without its count: "一名护士" → 护士
        "line_of_work": lambda value: rewritten(RE._COUNTED.sub("", tidy(value)), _LINE_OF_WORK),
        "resigned": lambda value: {"辞了": "辞职", "不干": "辞职", "不干了": "辞职"}.get(value, value),
        "this_year": lambda value: "今年" if value == "今年" else "",
        "car": lambda value: value.replace("新车", "车"),
        "partner": lambda value: _PARTNER_NAMES.get(value, value) or "对象",
        "partner_by_gender": lambda value: first_row(_PARTNER_BY_GENDER, value, "对象"),
    },
    # what one smokes or drinks, named or understood from the message ("烟瘾大，在戒了": 烟)
    readers={"consumed": lambda value, context: value or first_row(_CONSUMED, str(context.get("whole", "")), "")},
    choosers={
        "work_or_location": lambda value, context: (_work_place(value) or ("", "other"))[1],
        "employer": lambda value, context: "work" if looks_like_organisation(tidy(value)) else "location",
        "kin_or_other": lambda value, context: "relationship" if re.search(ZH_ROLE_PATTERN, tidy(value)) else "other",
        "owned": lambda noun, context: first_row(_OWNED_CATEGORIES, noun, "other"),
        "located": lambda value, context: "location" if value.startswith("在") else "work",
    },
)
RULES = Registries(
    _DATA,
    _VOCABULARY,
    CJK=CJK,
    ZH_ROLE_PATTERN=ZH_ROLE_PATTERN,
    ZH_ROLE_QUALIFIER=ZH_ROLE_QUALIFIER,
    LIKE=PREFS.LIKE.pattern,
)


def change_fact(rest: str, said: str, who: str = "用户", message: str = "") -> Item | None:
    """A change said as an event (moved, new job, a birthday, a new car …), unless it is a plan."""
    if is_unreal(said):
        return None
    core = rewritten(rest, _CHANGE_LEADS)
    message = message or said  # the message, then the known facts, for context
    context = {"message": message.split("\n", 1)[0], "whole": message, "who": who, "said": said}
    return next(filter(None, (finding(RULES[stage], core, said, context, who=who) for stage in _CHANGES)), None)


def user_facts(rest: str, said: str, message: str = "") -> Item | None:
    item = change_fact(rest, said, "用户", message)
    if item:
        return item
    read = {"core": RE._IS_BEFORE_WHERE.sub("", LEAD_ADVERBS.sub("", rest)), "rest": rest}
    return next(filter(None, (finding(RULES[stage], read[on], said) for stage, on in _USER_FACTS)), None)


def role_fact(subject: Subject, rest: str, said: str = "", message: str = "") -> Item | None:
    """A fact about a relative of the user's ("老板姓张"): a change said as an event, or the rules ``role``."""
    change = change_fact(rest, said or rest, subject.phrase, message)
    if change is not None:
        return change._replace(category="relationship")
    return finding(RULES.role, LEAD_ADVERBS.sub("", rest), "", who=subject.phrase)


def owned_fact(subject: Subject, rest: str) -> Item | None:
    """A fact about a thing of the user's ("公司在杭州"): the rules ``owned``."""
    return finding(RULES.owned, LEAD_ADVERBS.sub("", rest), "", who=subject.phrase)


# whatever else the user says of themself, restated as said: which category it belongs to, the first that matches
_ZH_CATEGORY_WORDS: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows(
    "_ZH_CATEGORY_WORDS", ZH_ROLE_PATTERN=ZH_ROLE_PATTERN
)


def zh_category(text: str, subject: Subject) -> str:
    """The spec's fact category for a statement no slot rule recognised."""
    return "relationship" if subject.kind == "role" else first_row(_ZH_CATEGORY_WORDS, text, "other")


def clean_said(text: str) -> str:
    """A clause as said, without interjections in front or particles behind."""
    text = RE._ZH_FILLER_OPENERS.sub("", text.strip()).lstrip("，, ")
    return tidy(text)


@named_rule("rules_zh_facts.generic")
def generic_fact(said: str, subject: Subject) -> Item | None:
    """'我在阳台上养多肉' → 用户在花园里种玫瑰: a first-person statement restated in the third person."""
    text = clean_said(said)
    if len(text.replace("我", "")) < 2 or not RE._ME.search(text) or RE._NOT_ABOUT_ME.search(text):
        return None
    confidence = HEDGED_CONFIDENCE if RE._HEDGES.search(text) else GENERIC_CONFIDENCE
    third = third_person(text)
    return Item("fact", third, zh_category(third, subject), confidence, generic=True)


def is_fragment(said: str) -> bool:
    """A subject-less piece that belongs to the statement next to it ("开了一家小面馆")."""
    text = clean_said(said)
    return len(text) >= 2 and not RE._OTHER_SUBJECT.match(text)


def is_scene(said: str) -> bool:
    """A clause that only sets time, place or condition for the next one ("在珠海安顿下来了" says where one lives)."""
    text = clean_said(said)
    return bool(RE._SCENE.search(text)) and not RE._SETTLED.search(text)
