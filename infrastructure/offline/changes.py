"""How a message changes what was said before: corrections, retractions, plans, past and now.

The rule extractor reads one message at a time; these helpers tell it what
kind of change a message makes to the user's known facts, by the words that
mark each kind in Chinese and English:

* a **correction** ("说错了", "打错了", "纠正一下", "口误", "oops", "typo",
  "correction:", "I meant …") restates a known fact with another value;
* a **retraction** ("开玩笑的", "逗你的", "吹牛的", "just kidding",
  "I was joking", "nvm") takes one back, usually with what is true instead;
* a **plan, wish or hypothetical** ("打算", "可能", "要是", "明年", "might",
  "thinking about", "if", "someday") states nothing that is so yet;
* a **past** statement set against a present one ("以前喜欢X，现在喜欢Y",
  "I used to …, now …") is about what no longer holds.

Clauses that only carry the marker ("说错了", "都是瞎说的", "I always mix
up the two") are dropped before the statement is read, so the corrected fact
never contains the correction words. ``substitute`` restates a known fact
with the value a correction gives when the message names only the value
("是木子李的李，李然" after 用户叫吕然 → 用户叫李然).

The changes told as events are registries of named rules in ``rules/changes.toml`` (ADR 0042):
``[[registries.taken_back]]``, ``[[registries.message]]`` and ``[[registries.clause]]`` for Chinese
(``events``), ``[[registries.english_said]]`` and ``[[registries.english]]`` for English
(``english_swaps``), ``[[registries.bare_value]]`` for a value said alone. A rule names the known fact
it replaces by its slots, a pattern the fact holds (``held``) or a named finder, and says the change by
its template or a named maker; what takes more steps is a named handler here. A rule may instead read
the known facts, latest first, with a ``known`` pattern of its own and compare their groups with its
match's (registry.py): ``[[registries.named_instead]]``, a pursuit now.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from factledger.infrastructure.offline.registry import Context, Fired, Registry, Rule, registry, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import VOCABULARY
from factledger.infrastructure.offline.slots import (
    CAR_MAKES,
    EN_ROLE_PATTERN,
    POLARITY_PREFIXES,
    ZH_ROLE_PATTERN,
    ZH_ROLE_QUALIFIER,
    is_exclusive_slot,
    looks_like_job,
    looks_like_organisation,
    pattern_test,
    rewritten,
    slots_of,
    species_of,
)
from factledger.infrastructure.offline.topics import succeeds, topics_of

_DATA = rules("changes")
RE = _DATA.patterns(ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, ZH_ROLE_QUALIFIER=ZH_ROLE_QUALIFIER)

# --------------------------------------------------------------------------
# Markers
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _folded(text: str) -> str:
    # memoised: the rules ask for the whole message's folded form once per clause; folding it anew
    # each time made a long message cost its length times its number of clauses (issue 25)
    return unicodedata.normalize("NFKC", text or "").replace("’", "'")


def _marked(pattern: re.Pattern[str], unless: re.Pattern[str] | None = None) -> Callable[[str], bool]:
    """A test of a whole message, by what marks it in ``[patterns]`` (the reason is written there): its
    folded form holds ``pattern`` and not ``unless``. Memoised, as the rules ask it once per clause."""

    @functools.lru_cache(maxsize=256)
    def marked(text: str) -> bool:
        text = _folded(text)
        return bool(pattern.search(text)) and not (unless and unless.search(text))

    return marked


is_correction = _marked(RE._CORRECTION, unless=RE._NOT_CORRECTING)
is_retraction = _marked(RE._RETRACTION)
is_conditional = _marked(RE._CONDITIONAL)
is_plan = _marked(RE._PLANNED)
told_of_someone_else = _marked(RE._TOLD_OF_ELSE)
#: advice or an order ("建议", "让我"), or someone else named: what the message says is not done now
_advised = _marked(RE._ADVISED)
may_change = _marked(RE._CHANGE_SAID, unless=RE._ASKED)


def is_marker_only(clause: str) -> bool:
    """A clause that only says "that was wrong / a joke" ("哎呀手快写错了", "I keep mixing those up")."""
    text = _folded(clause).strip()
    if not (RE._ZH_MARKER.search(text) or RE._EN_MARKER.search(text)):
        return False
    rest = RE._EN_MARKER.sub(" ", RE._ZH_MARKER.sub("", text))
    rest = RE._EN_FILLER.sub(" ", RE._ZH_FILLER.sub("", rest))
    rest = RE._NO_WORD.sub("", rest)
    return len(rest) <= 1


def strip_marker(clause: str) -> str:
    """The clause without a correction marker in front ("correction: I meant X" → "I meant X")."""
    return RE._ZH_MARKER_LEAD.sub("", RE._EN_MARKER_LEAD.sub("", clause.strip())).strip()


@functools.lru_cache(maxsize=256)  # asked of one whole message once per clause
def is_unreal(text: str) -> bool:
    """A plan, wish, hypothetical or question: nothing it says is so yet."""
    text = _folded(text)
    if RE._LATIN.search(text) and not RE._HAN.search(text):
        return bool(RE._EN_PLAN.search(RE._MONTH_MAY.sub("the month", text)))
    return bool(RE._ZH_PLAN.search(text))


# memoised: asked once per clause of a message, and each answer reads the whole message (a message of
# one past clause said again and again cost its length times its clauses: issue 25); as few entries
# as ``_folded`` keeps, since each holds its message
@functools.lru_cache(maxsize=256)
def is_past_against_now(clause: str, message: str) -> bool:
    """'以前喜欢X' in a message that also says what holds now: the past clause states nothing current."""
    clause, message = _folded(clause), _folded(message)
    if RE._ZH_PAST.search(clause.strip()):
        return bool(RE._ZH_NOW.search(message.replace(clause, "")))
    if RE._EN_PAST.search(clause):
        return bool(RE._EN_NOW.search(message.replace(clause, "")) or RE._EN_BUT.search(message))
    return False


# --------------------------------------------------------------------------
# Corrections that give only the value
# --------------------------------------------------------------------------

_SLOT_HINTS: tuple[tuple[str, str], ...] = _DATA.rows("_SLOT_HINTS")


_VALUE_SHAPES = _DATA.compiled_rows("_VALUE_SHAPES")


def _value_shape(value: str) -> str:
    """The shape of a value, by the first of ``[rows] _VALUE_SHAPES`` it is: a number, a short Chinese name …"""
    return next((shape for pattern, shape in _VALUE_SHAPES if pattern.fullmatch(value.strip())), "other")


def bare_value(clause: str) -> str | None:
    """The value a correction clause names on its own ("李然", "it's Ivy", "I meant Lyon, France")."""
    text = _folded(clause).strip().strip("。.!！~～")
    text = RE._VALUE_LEAD.sub("", text)
    if not text or RE._SPELLING.match(text) or is_marker_only(text):
        return None
    fired = _BARE_VALUE.first(text)
    return (fired.text or None) if fired else None


def substitute(value: str, message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(new fact, the known fact it corrects): a known fact restated with ``value`` in place of its own.

    The fact chosen is, most recent first: one whose value shares a word with
    the new value ("Lyon, France" for "Lyon, Texas"); one whose slot the
    message names (名字, name, 老家 …); one whose value has the same shape
    (a short Chinese name, a capitalised word, a number).
    """
    value = value.strip().strip("，,。.!！")
    if not value or RE._NOT_A_VALUE.match(value):
        return None
    known = [f for f in known_facts if isinstance(f, str)]
    if RE._COLOUR.fullmatch(value):
        return _first_change(_RECOLOURED, value, known)  # "记错了，是棕色的": of the latest fact that names one
    candidates, later = _candidates(known)
    if not candidates:
        return None
    # "狗应该叫来福": the thing named before the value is the one corrected
    named = RE._NAMED_BEFORE.search(message)
    candidates = [c for c in candidates if named and named.group("t") in c[0]] or candidates
    hinted = [slot for slot, words in _SLOT_HINTS if re.search(words, message, re.IGNORECASE)]
    if _value_shape(value) == "other" and RE._EN_ARTICLE.match(value):
        # "she's actually a greyhound": what something of the user's is, the latest such fact
        for fact, slot, old in candidates:
            if slot.startswith("attr:") and old != value:
                return fact.replace(old, RE._EN_ARTICLE.sub("", value), 1), fact
    # "说错了 是唐": the value said as what it is; when nothing tells which fact, the one said last
    said = re.search(r"(?:是|\bit's|\bit is|\bI meant)\s*" + re.escape(value), message, re.IGNORECASE)
    last = candidates[:1] if said and candidates[0][0] == known_facts[-1] else []
    for way, tried in enumerate((candidates, candidates + later, candidates, last)):
        for fact, slot, old in tried:
            if _fits(way, (fact, slot, old), value, hinted) and old != value:
                return _restated(fact, old, value), fact
    return None


def _candidates(known: Sequence[str]) -> tuple[list[Target], list[Target]]:
    """(fact, slot, value) of each known fact's main slot, latest first, and what its later clauses fill
    (read when the message names that slot); what one owns, likes, eats … (``_NOT_CORRECTED``) is never
    the value corrected."""
    candidates: list[Target] = []
    later: list[Target] = []
    for fact in reversed(known):
        # "在顺丰当快递员" is a place and a job: either can be the one corrected
        read = [
            pair
            for slot, old in slots_of(fact)
            for pair in (
                [("employer", old.split("/", 1)[0]), ("job", old.split("/", 1)[1])]
                if slot == "employment" and "/" in old
                else [(slot, old)]
            )
        ]
        usable = [
            (fact, slot, old) for slot, old in read if old and old in fact and not slot.startswith(_NOT_CORRECTED)
        ]
        candidates += usable[:1]
        later += usable[1:]
    return candidates, later


_NOT_CORRECTED = _DATA.words("_NOT_CORRECTED")


def _shares_word(old: str, value: str) -> bool:
    if set(RE._EN_WORD3.findall(old.lower())) & set(RE._EN_WORD3.findall(value.lower())):
        return True
    if RE._PLACE_KIND_END.search(value) and value[-1] == old[-1] and len(value) >= 2:
        return True  # "福田区" for "深圳南山区": a place of the same kind
    return bool(RE._HAN.search(old)) and old[:1] == value[:1] and len(old) == len(value)


def _fits(way: int, candidate: Target, value: str, hinted: Sequence[str]) -> bool:
    """Whether the known value may be the one ``value`` corrects, by the ``way`` tried: 0 a shared word,
    1 a slot the message names, 2 the same shape of value when the message names none, 3 (of the fact
    said last) a name or a thing."""
    fact, slot, old = candidate
    shape = _value_shape(value)
    if way == 3:
        return not hinted and "number" not in (_value_shape(old), shape) and _may_fill(slot, value)
    if way == 0:
        return _shares_word(old, value) or (_resembles(old, value) and _value_shape(old) == shape != "number")
    if way == 2:
        return not hinted and _value_shape(old) == shape and shape != "other" and _may_fill(slot, value)
    if "thing" in hinted and (slot in ("phone", "vehicle", "computer") or slot.startswith("attr:")):
        return True  # a thing named by its make, whatever the make looks like
    if "name" in hinted and slot.startswith("attr:") and "叫" + old in fact:
        return _value_shape(old) == shape  # "用户家狗叫可乐": what it is called is its name
    return any(slot.endswith(h) for h in hinted) and _value_shape(old) == shape


def _resembles(old: str, value: str) -> bool:
    """A value one letter or character off the known one, the rest in place ("李然" for 吕然, "Lena" for Lina)."""
    return len(old) == len(value) >= 2 and sum(a != b for a, b in zip(old.lower(), value.lower(), strict=True)) == 1


_WHERE_SLOTS = frozenset(_DATA.words("_WHERE_SLOTS"))


def _may_fill(slot: str, value: str) -> bool:
    """Whether a Chinese value can be what the slot holds: a company ("腾讯") is no place and no one's name,
    a place ("浦东新区") no one's name."""
    if not RE._HAN.search(value):
        return True  # a Latin word can be a name, a place or a company alike
    if slot in _WHERE_SLOTS:
        return not looks_like_organisation(value)
    if slot == "name" or slot.endswith(":name"):
        return not looks_like_organisation(value) and not RE._PLACE_SUFFIX.search(value)
    return True


def _restated(fact: str, old: str, value: str) -> str:
    at = fact.index(old) + len(old)
    tail = next((n for n in range(3, 0, -1) if value.endswith(fact[at : at + n]) and fact[at : at + n]), 0)
    # "狮子座" for 双子 in 用户是双子座: the fact says 座 already
    value_said = value[:-tail] if tail and len(value) > tail else value
    # "学艺术" for 医 in 用户是学医的: the fact says 学 already
    start = fact.index(old)
    head = next((n for n in range(3, 0, -1) if start >= n and value_said.startswith(fact[start - n : start])), 0)
    value_said = value_said[head:] if head and len(value_said) > head else value_said
    return fact[:start] + value_said + fact[at:]


def proper_names(fact: str) -> list[re.Match[str]]:
    """The names in an English fact after its subject ("Thompson", "St. Mary's", "Leeds")."""
    return [m for m in RE.EN_PROPER.finditer(fact) if m.start() > len("The user")]


def renamed_in_english(value: str, known_facts: Sequence[str], marked: bool = True) -> tuple[str, str] | None:
    """(the fact with ``value`` for its one name, the fact): a name corrected in English ("it's
    Thomson, no p", "her name's Mochi", "scratch that, Sheffield") where no slot reads the fact,
    in the last two things said; the one that names a single name other than the user."""
    value = value.strip().strip(",.!")
    if not RE._EN_NAME_VALUE.match(value):
        return None
    for fact in list(reversed([f for f in known_facts if isinstance(f, str)]))[:2]:
        if not fact.startswith("The user"):
            continue
        names = proper_names(fact)
        if len(names) != 1 or names[0].group(0) == value or re.search(r"\b" + re.escape(value) + r"\b", fact):
            continue
        at, end = names[0].span()
        if not marked:  # "and now London": the next in a chain, said as the fact it follows
            return fact[:at] + value + fact[end:], fact
        # said as a correction, so that the judge reads it as one: "The user's last name is actually
        # Thomson", "The user's cat (actually Mochi) keeps …", "The user actually lives in …"
        named = RE._EN_WHOSE_LEAD.match(fact[:at])
        if not named:
            return marked_as_correction(fact[:at] + value + fact[end:]), fact
        return fact[:at] + (f"actually {value}" if named.group("is") else f"(actually {value})") + fact[end:], fact
    return None


def marked_as_correction(fact: str) -> str:
    """An English fact restated by a correcting message, marked as one ("The user is actually
    allergic to sesame"), so it replaces the fact it corrects where a person may have several
    values (allergies, languages); a one-value slot replaces by itself and stays unmarked."""
    if not RE._EN_USER_LEAD.match(fact) or RE._EN_ACTUALLY.search(fact):
        return fact
    if any(is_exclusive_slot(slot) for slot, _ in slots_of(fact)):
        return fact
    # after its verb of being or having, else after "The user"
    return RE._EN_USER_BEING.sub(r"\1 actually ", fact, count=1)


_COUNTED = _DATA.rows("_COUNTED")


def recount(message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """'其实就几十个读者' after 用户有两万读者 → 用户有几十个读者, "I meant two kids" after "The user has three
    kids": a count said again, smaller or larger (``[rows] _COUNTED``: how each language says the count of a noun)."""
    text = _folded(message)
    for fact in reversed([f for f in known_facts if isinstance(f, str)]):
        for slot, old in slots_of(fact):
            if not slot.startswith("count:"):
                continue
            noun = slot.split(":", 1)[1]
            english = noun.isascii()
            said_as, held_as, plural = _COUNTED[0 if english else 1]
            said = re.search(said_as + re.escape(noun) + plural, text)
            there = re.search(held_as + re.escape(noun), fact) if said else None
            if not (said and there):
                continue
            if said.group("n").lower() != there.group("n").lower() if english else old not in said.group("n"):
                return fact[: there.start("n")] + said.group("n") + fact[there.end("n") :], fact
    return None


def renamed_kind(clause: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """'糖糖其实是只龙猫' after 用户养了只荷兰猪叫糖糖 → 用户养了只龙猫叫糖糖: what a named thing is, corrected
    (the rules of [[registries.renamed_kind]])."""
    return _first_change(_RENAMED_KIND, _folded(clause).strip().strip("。！!"), known_facts)


def swapped_same_kind(message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(the fact with the value said now, the fact): a correction that names one figure of the
    same unit as a figure in one of the last three things said ("口误，是五年级" after 用户的儿子上
    四年级; "记错了，其实是O型" after 用户的血型是A型), put in its place."""
    text = _folded(message)
    said = [(m.group("n"), m.group("u")) for m in RE._UNIT_VALUE.finditer(text)]
    if not said or RE._ASKED_OR_IF.search(text):  # asked, or on a condition
        return None
    named = set(re.findall(ZH_ROLE_PATTERN, text))
    for fact in list(reversed([f for f in known_facts if isinstance(f, str)]))[:3]:
        if any(role not in fact for role in named):
            continue  # "说错了，我女儿是九岁": someone the fact is not about
        held = list(RE._UNIT_VALUE.finditer(fact))
        units = [h.group("u") for h in held]
        for old in held:
            # the one figure of the fact in that unit, and one other figure said in it
            same = {n for n, u in said if u == old.group("u")}
            if len(same) == 1 and old.group("n") not in same and units.count(old.group("u")) == 1:
                return fact[: old.start("n")] + same.pop() + fact[old.end("n") :], fact
    return None


def _pairs(text: str, *patterns: re.Pattern[str]) -> list[tuple[str, str]]:
    """(old, new) of each match of ``patterns`` in ``text``, said either way round (``old2``, ``new2``)."""
    found = [match.groupdict() for pattern in patterns for match in pattern.finditer(text)]
    return [(said.get("old") or said.get("old2") or "", said.get("new") or said.get("new2") or "") for said in found]


def instead(message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """'是X，不是Y' / 'X, not Y': the known fact that says Y, with X instead."""
    text = _folded(message)
    for old, new in _pairs(text, RE._ZH_NOT_BUT, RE._EN_NOT_BUT):
        old, new = old.strip().strip("的了"), RE._EN_MEANT_LEAD.sub("", new.strip())
        if not old or not new or old == new:
            continue
        for fact in reversed([f for f in known_facts if isinstance(f, str)]):
            at = fact.lower().find(old.lower())
            if at >= 0:
                # the value as the fact writes it, from where it starts to the end of that word
                return fact[:at] + new + fact[at + len(old) :], fact
    return None


def named_instead(value: str, message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """'his name is actually Mac' after "…'s name is Max": a name restated in whichever known fact gives one
    (the rule of [[registries.named_instead]])."""
    return _first_change(_NAMED_INSTEAD, value, known_facts) if RE._NAMES.search(message) else None


TRAVEL = _DATA.text("TRAVEL")


def called_off(clause: str) -> str | None:
    """'出差取消了' → 用户的出差取消了, 'the trip got cancelled' → The user's trip got cancelled."""
    fired = _CALLED_OFF_RULES.first(_folded(clause).strip())
    return fired.text if fired else None


def plan_fell_through(clause: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(the fact, the plan it ends) when a clause says something fell through and one of the last
    three known facts is a plan: that plan ("月底去厦门看海" then "黄了，要值班"). Someone
    else's news ("他的婚礼取消了") and a message that names no plan left open change nothing
    (the rules of [[registries.fell_through]])."""
    return _first_change(_FELL_THROUGH, _folded(clause).strip(), known_facts)


def replaced(message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(new fact, the known fact it replaces): "把朗逸换成了X", "traded my Jetta for a Y"."""
    text = _folded(message)
    known = _Known([f for f in known_facts if isinstance(f, str)])
    for old_word, new_value in _pairs(text, RE._ZH_REPLACED, RE._EN_REPLACED):
        old_word, new_value = old_word.strip(), RE._PARTICLES_END.sub("", new_value.strip())
        found = known.latest(_naming(old_word)) if old_word and new_value else None
        if found:
            return found[0].replace(found[2], new_value, 1), found[0]
    return None


def _naming(word: str) -> Test:
    """A known slot whose value, said as is, names ``word`` (or is named in it); what one owns, likes,
    eats … is never the thing replaced."""
    return lambda f, s, v: (
        v in f
        and (word.lower() in v.lower() or (len(v) >= 2 and v.lower() in word.lower()))
        and not s.startswith(("possession:", "likes:", "eats:", "drinks:", "can:"))
    )


_SWAP_SLOTS = _DATA.table("_SWAP_SLOTS")


def swapped(message: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(new fact, the known fact it replaces): a swap naming only the new thing, said in the old fact's words.

    '又换了一台三星折叠屏' after 用户的手机是iPhone 12 → 用户的手机是三星折叠屏;
    '后来换到了昌平' after 用户住在北京海淀 → 用户住在昌平. The known fact is the
    latest whose slot the swap can be about: by its measure word (辆 a
    vehicle, 台 a phone or a car), by its verb (换到 a place), else one whose
    value looks like the new one (a model name with letters, a Chinese name).
    """
    text = _folded(message)
    known = _Known([f for f in known_facts if isinstance(f, str)])
    for m in RE._ZH_SWAPPED.finditer(text):
        new = RE._SWAP_TRIM.sub("", m.group("new").strip())
        clause = RE._CLAUSE_BREAK.split(text[: m.end()])[-1]
        if re.search(r"[他她你您]|" + ZH_ROLE_PATTERN, text[: m.start()].split("。")[-1]):
            continue  # "我同事换了台新车": someone else's
        if len(new) < 2 or is_unreal(clause) or is_conditional(text) or RE._NO_NEW_THING.match(new):
            continue  # "换成别的了", "换回来了": nothing named instead
        # the slots it can be about: by its measure word, else by its verb (of a home: "到:住")
        by = m.group("cls") or m.group("verb") + (":住" if RE._HOME_WORDS.search(text) else "")
        found = _swapped_in(new, _SWAP_SLOTS.get(by, ()), known)
        if found:
            return found
    return None


def _swapped_in(new: str, wanted: tuple[str, ...], known: _Known) -> tuple[str, str] | None:
    """The latest known fact of a wanted slot (or whose value looks like the new one), the new value in it;
    with no slot wanted and none alike, the thing spoken of last that one swaps ("又换成理想L7了")."""
    latin = bool(RE._LATIN_OR_DIGIT.search(new))

    def fits(fact: str, slot: str, value: str) -> bool:
        # some thing's slot (what one owns, keeps, likes …), a name, an age, a job: never swapped so
        if not slot or ":" in slot or slot in ("name", "age", "job") or value not in fact or new in value:
            return False
        return slot in wanted if wanted else bool(RE._LATIN_OR_DIGIT.search(value)) == latin

    found = known.latest(fits) or (
        None if wanted else known.latest(lambda f, s, v: s in _SWAPPABLE and v in f and new not in v, 3)
    )
    # "用户一开始用的安卓" → "用户用的苹果": the old fact's time words were its own
    return (RE._FIRST_TIME.sub("用户", found[0].replace(found[2], new, 1), count=1), found[0]) if found else None


_SWAPPABLE = frozenset(_DATA.words("_SWAPPABLE"))


QUIT_KINDS = _DATA.table("QUIT_KINDS")


def _bigrams(text: str) -> set[str]:
    text = RE._COMMON.sub(" ", text)
    return {text[i : i + 2] for i in range(len(text) - 1) if RE._HAN_PAIR.fullmatch(text[i : i + 2])}


#: a school year ("初二", "三年级"), which the extractor also reads
GRADE = RE.GRADE


def remeasured(clause: str, known_facts: Sequence[str]) -> tuple[str, str] | None:
    """(known fact with the new figure, the known fact): "测体脂22%了" after 用户最近体脂率28%,
    "三刷终于7.5了" after 用户雅思考了6.5, "暑假过完就初三了" after 用户初二.

    The clause gives one figure (a number, or a school year) and names nobody
    else; the known fact is the latest with a figure of the same kind (and
    unit, when both say one) that shares a word with the clause, or, when the
    clause says little besides the figure, the latest such fact.
    """
    figure = _figure_of(clause)
    if figure is None:
        return None
    pattern, new, unit = figure
    rest = RE._NOT_HAN_WORD.sub("", pattern.sub("", clause))
    bare = len(RE._COMMON.sub("", rest)) <= 6
    words = _bigrams(clause)
    # "我自己才34": a figure the speaker gives of themself is not a relative's
    own = "我" in clause
    for fact in reversed([f for f in known_facts if isinstance(f, str)]):
        if own and re.match(r"^用户的(?:" + ZH_ROLE_PATTERN + ")", fact):
            continue
        there = next((m for m in pattern.finditer(fact) if not RE._YEAR.fullmatch(m.group(0))), None)
        held = _held_figure(there, pattern is RE._AMOUNT, new, unit) if there else None
        if held is None:
            continue
        old_value, start, end = held
        if old_value == new:
            return None
        if words & _bigrams(fact) or bare:
            return fact[:start] + new + fact[end:], fact
    return None


def _figure_of(clause: str) -> tuple[re.Pattern[str], str, str | None] | None:
    """(the kind of figure, the figure, its unit) a clause gives: a reading, a school year or a date,
    else its one amount."""
    for kind in (RE._READING, GRADE, RE._DATE):
        found = kind.search(clause)
        if found:
            return kind, found.group(0), None
    amounts = [m for m in RE._AMOUNT.finditer(clause) if not RE._YEAR.fullmatch(m.group("n"))]
    return (RE._AMOUNT, amounts[0].group("n"), amounts[0].group("u")) if len(amounts) == 1 else None


def _held_figure(there: re.Match[str], amount: bool, new: str, unit: str | None) -> tuple[str, int, int] | None:
    """(value, start, end) of the figure a known fact holds; None for an amount of another unit (or,
    said without one, with a decimal point where the new has none, or the other way round)."""
    if not amount:
        return there.group(0), there.start(), there.end()
    said_unit = there.group("u")
    if unit and said_unit and unit.lower() != said_unit.lower():
        return None
    if ("." in there.group("n")) != ("." in new) and not unit:
        return None
    return there.group("n"), there.start("n"), there.end("n")


NO_LONGER_SO = _DATA.words("NO_LONGER_SO")
LET_GO = _DATA.words("LET_GO")
BROKE_UP = _DATA.text("BROKE_UP")
LAPSED = _DATA.text("LAPSED")
QUIT_HABIT = _DATA.text("QUIT_HABIT")
EN_QUITTABLE = RE.EN_QUITTABLE
HABIT = RE.HABIT
PARTNERED = RE.PARTNERED
_TOPIC_SLOTS = _DATA.table("_TOPIC_SLOTS")


#: characters that say nothing of what a statement is about
_STOP_CHARS = frozenset("用户我你他她它的了是在都也就还不没有一个么吗呢吧啊哈嘿呀其实连才只很太刚")


def _named_topic(text: str, known: Sequence[str]) -> tuple[str, str] | None:
    """(topic, fact): the latest known fact that shares a word (two characters or more) with ``text``."""
    for fact in reversed(known):
        said = fact[2:] if fact.startswith("用户") else fact
        match = SequenceMatcher(None, text, said, autojunk=False).find_longest_match(0, len(text), 0, len(said))
        topic = text[match.a : match.a + match.size]
        topic = RE._TOPIC_TRIM.sub("", RE._NOT_TOPIC.sub("", topic))
        if len(topic) >= 2 and RE._HAN_RUN.fullmatch(topic) and not RE._TAKE_BACK.search(topic):
            return topic, fact
    return None


_EN_NAME = _DATA.text("_EN_NAME")
#: the same, not starting with "The" ("transferred to the Worcester branch")
_EN_NAME_NOT_THE = _EN_NAME.replace("(?P<v>", r"(?P<v>(?!The\b)")
_EN_THING_STOP = frozenset(_DATA.words("_EN_THING_STOP"))


def _things(words: str) -> set[str]:
    """The things English words name, singular ("cats" is "cat"), without the words that name none."""
    found = {RE._EN_PLURAL_S.sub("", w) for w in RE._EN_WORD.findall(words.lower())}
    return found - _EN_THING_STOP


def english_swaps(message: str, known_facts: Sequence[str]) -> list[tuple[str, str]]:
    """(new fact, the known fact it replaces) for a thing or partner swapped, said in English:
    a car or phone ("Sold it and got a Mazda 3" after The user drives a Ford Focus), a partner
    ("that ended. seeing someone named Priya now"): the rules of [[registries.english_said]], then
    of [[registries.english]]."""
    said = _folded(message)
    context = {"text": said, "said": said, "known": _Known([f for f in known_facts if isinstance(f, str)])}
    found = _first_events(_ENGLISH_SAID, said, context)
    if found is not None:
        return found
    # what is so: the sentences that plan, wish or ask nothing ("relocated again, now in Chicago.
    # winter is gonna hurt": the move is so, the winter to come is not)
    text = " ".join(
        sentence for sentence in RE._SENTENCE_BREAK.split(said) if not is_unreal(RE._EN_NOW_WORD.sub("", sentence))
    )
    if not text or RE._EN_RELATIVES_THING.search(text):
        return []
    return _first_events(_ENGLISH, text, {**context, "text": text}) or []


def events(message: str, known_facts: Sequence[str]) -> list[tuple[str, str]]:
    """(new fact, the known fact it ends or replaces) for kinds of change told as events, without 我:
    a pet gone ("它飞走了"), a habit stopped ("烟戒了"), a new employer ("后来跳去字节了"), a new base,
    a new phone ("入了台iPhone"): the rules of [[registries.message]], then of [[registries.clause]]."""
    text = _folded(message)
    known = [f for f in known_facts if isinstance(f, str)]
    if not RE._HAN.search(text):
        return english_swaps(text, known)
    # "我老公比我大，今年41了": a figure in a message about someone else is theirs
    others = bool(re.search(r"[他她]|" + ZH_ROLE_PATTERN, text))
    context = {"text": text, "known": _Known(known), "others": others}
    # what was said taken back, or said against ("不是乐乐，是笑笑"): that alone
    back = _first_events(_TAKEN_BACK, text, context)
    if back:
        return back
    # each clause once, without what ends it ("…榴莲😋"); the message's rules read clauses
    # that the clause rules would pass over as plans ("下个月去…报到", "以后只喝…了")
    pieces = [RE._TRAILING_SYMBOLS.sub("", raw.strip()) for raw in RE._PIECE_BREAK.split(text)]
    found = _message_events(pieces, context) + _clause_events(pieces, context)
    if not found and not others:
        found = succession(pieces, known)
    # "日语放弃了，改学韩语": what took its place says the old one ended; the giving up goes
    switched_from = {old for new, old in found if RE._CHANGED_TO.match(new)}
    return [
        (new, old)
        for new, old in found
        if not (old in switched_from and (new.startswith("用户放弃了") or new in LET_GO))
    ]


def _pursued(fact: str) -> str:
    """How a pursuit fact's pursuit is named in its giving up: by its verb, not its object
    ("用户最近在学游泳" → "之前在学的"), since the fact that ends a thing need not say it again
    (the first rule of [[registries.pursued]], else "之前说的事")."""
    fired = _PURSUED.first(fact)
    return fired.text if fired else "之前说的事"


def gave_up_pursuit(fact: str) -> str | None:
    """'用户放弃了之前在学的' for a known pursuit named by its verb ("在学篆刻"); None when none is."""
    said = _pursued(fact)
    return "用户放弃了" + said if said.startswith(("之前在", "之前报")) else None


def succession(pieces: Sequence[str], known: Sequence[str]) -> list[tuple[str, str]]:
    """(the clause as the user's, the latest known fact it succeeds) for a new choice of something
    a known fact names a choice of ("现在改喝无糖乌龙茶" after "每天一瓶可乐"; see ``topics``). The
    clause before joins when it holds the words that say the old choice gave way ("膝盖伤了以后就
    不碰了，现在迷上了游泳")."""
    clauses = [RE._SUCCESSION_LEAD.sub("", p) for p in pieces]
    for at, clause in enumerate(clauses):
        if not clause or is_unreal(clause) or RE._ASKED_OF_YOU.search(clause) or not topics_of(clause):
            continue
        tellings = [clause] + ([f"{clauses[at - 1]}，{clause}"] if at and clauses[at - 1] else [])
        for telling in tellings:
            said = "用户" + telling.removeprefix("我")
            for fact in reversed(known):
                if succeeds(fact, said):
                    return [(said, fact)]
    return []


def _in_turn(fired: Fired, target: Target, context: Context) -> str | None:
    """What is done now, in place of what the known fact says is done (the rule's ``known`` pattern: who
    does it, "" for the user, "的侄女" …, and its verb): a pronoun stands for the relative the fact is
    about; anyone else's (or what the fact says already) is None."""
    said, doer = fired.match, fired.known
    who = (doer.group("who") if doer else None) or ""
    relative = bool(re.match(r"^(?:的|家的?)(?:" + ZH_ROLE_PATTERN + r")", who))
    if doer is None or (said.group("p") and not relative) or said.group("v") in target[0]:
        return None
    if not said.group("p") and who and not relative and not said.group("bare"):
        return None
    return f"用户{who}改{doer.group('verb')}{said.group('v')}了"


STUDYING_NOW = RE.STUDYING_NOW
STUDIES = RE.STUDIES
WORKPLACE = RE.WORKPLACE
TRADE = RE.TRADE


# --------------------------------------------------------------------------
# One clause's change, by the rules of [[registries.clause]] (ADR 0042)
# --------------------------------------------------------------------------

Event = tuple[str, str]  # (new fact, the known fact it ends or replaces)
Outcome = tuple[list[Event], bool]  # the changes a rule finds, and whether it decides
Target = tuple[str, str, str]  # (known fact, its slot, the slot's value)
Test = Callable[[str, str, str], bool]


class _Known:
    """The known facts, each one's slots read once (latest first) and only when a rule asks."""

    def __init__(self, facts: Sequence[str]) -> None:
        self.facts = tuple(facts)
        self._slotted: list[tuple[str, list[tuple[str, str]]]] | None = None

    def latest(self, test: Test, recent: int = 0) -> Target | None:
        """The latest known fact (of the last ``recent``, when given), with the slot, for which
        ``test(fact, slot, value)`` holds."""
        if self._slotted is None:
            self._slotted = [(fact, slots_of(fact) or [("", "")]) for fact in reversed(self.facts)]
        for fact, slots in self._slotted[:recent] if recent else self._slotted:
            for slot, value in slots:
                if test(fact, slot, value):
                    return fact, slot, value
        return None


def _now_said(fired: Fired, context: Context) -> Outcome:
    """ "现在每天挤地铁去公司": read as the user's, a clause that fills a one-value slot a known fact
    holds with another value (after every rule that knows its kind better)."""
    clause, lead = fired.match.string, fired.match.end()
    said = "用户" + clause[lead:]
    for slot, value in slots_of(said):
        if is_exclusive_slot(slot) and not slot.startswith((*POLARITY_PREFIXES, "consumes:")):
            held = context["known"].latest(lambda f, s, v, slot=slot, value=value: s == slot and value not in f)
            if held:
                return [(said, held[0])], True
    return [], False


def _by(read: Callable[[str, Sequence[str]], Event | None]) -> Callable[[Fired, Context], Outcome]:
    """The handler of a reader of its own: what ``read`` makes of what the rule read, deciding if anything."""
    return lambda fired, context: (
        ([found], True) if (found := read(fired.match.string, context["known"].facts)) else ([], False)
    )


def _value_said(fact: str) -> str:
    """What a fact says its first slot holds, else its last word ("sesame" in The user is allergic to sesame)."""
    slots = slots_of(fact)
    return slots[0][1] if slots and slots[0][1] in fact and slots[0][1] not in ("yes", "no") else fact.split()[-1]


def _en_meant(fired: Fired, context: Context) -> Outcome:
    # "Oops, I meant sesame": the latest fact, its value (or its last word) said again; "typo, I
    # meant Lena": the fact whose value is one letter off the one said
    if not context["known"].facts:
        return [], False
    said = fired.match.group("v").strip()
    facts = context["known"].facts
    fact = next((f for f in reversed(facts) if _resembles(_value_said(f), said)), facts[-1])
    value = _value_said(fact)
    if RE._EN_ARTICLE_END.search(fact[: fact.rfind(value)]):
        said = RE._EN_ARTICLE_LEAD.sub("", said)  # "uses a Pixel 7", not "a a"
    if said.lower() == value.lower() or not fact.lower().startswith("the user"):
        return [], False
    at = fact.rindex(value)
    return [(marked_as_correction(fact[:at] + said + fact[at + len(value) :]), fact)], True


_HANDLERS: dict[str, Callable[[Fired, Context], Outcome]] = {
    "instead": _by(instead),
    "remeasured": _by(remeasured),
    "now": _now_said,
    "meant": _en_meant,
}

#: which known fact a rule looks for, from its match: ``finder = "…"``
_FINDERS: dict[str, Callable[[re.Match[str]], Test]] = {
    "pet_named": lambda m: lambda f, s, v: bool(species_of(f)),
    "job": lambda m: lambda f, s, v: s == "job" or (bool(TRADE.search(f)) and (not s or bool(WORKPLACE.search(v)))),
    # the one of the last facts the message's words are about ("骗你的，其实连英语都说不利索")
    "about_said": lambda m: (
        lambda f, s, v: bool(
            (set(RE._MADE_UP.sub("", m.string)) - _STOP_CHARS) & (set(f.removeprefix("用户")) - _STOP_CHARS)
        )
    ),
    "topic_slots": lambda m: lambda f, s, v: s in _TOPIC_SLOTS.get(m.group("t"), ()),
    # "lol jk, I'm allergic to cats, never had one": a fact that names a thing the message names
    "names_thing": lambda m: lambda f, s, v: bool(_things(m.string) & _things(f)),
    # a name: the slot says so, or the fact names with 叫 ("用户家猫叫咪咪", "用户的网名叫…")
    "named": lambda m: lambda f, s, v: (s.endswith(("name", "名")) or (s.startswith("attr:") and "叫" in f)) and v in f,
}


_PHONE_MODEL = _DATA.text("_PHONE_MODEL")


def _phone(fired: Fired, target: Target, context: Context) -> str:
    # "又换回华为了，Mate 60": the make, then the model in the next clause
    made = fired.match.group("v").strip()
    model = re.search(re.escape(fired.match.string) + _PHONE_MODEL, context["text"])
    return f"用户的手机是{model.group('m').strip() if model and RE._PHONE_MAKE.fullmatch(made) else made}"


@functools.lru_cache(maxsize=1024)  # bounded: a pattern with a group filled in is one per value said
def _held(pattern: str) -> re.Pattern[str]:
    """A rule's pattern of the known fact it looks for (``held``, ``slot``, ``holds`` …: its groups filled in),
    compiled once."""
    return re.compile(_DATA.expand(pattern, "held", {"EN_ROLE_PATTERN": EN_ROLE_PATTERN}))


def _respanned(fired: Fired, target: Target, context: Context) -> str | None:
    """The known fact with the group ``old`` of its ``held`` pattern said as the rule says it; None if alike."""
    old = _held(fired.rule.render(fired.rule.values["held"], fired.match)).search(target[0])
    if not old or old.group("old").lower() == fired.text.lower():
        return None
    return target[0][: old.start("old")] + fired.text + target[0][old.end("old") :]


#: what a rule says, from its match and the known fact it found: ``make = "…"`` (else its template)
_MAKERS: dict[str, Callable[[Fired, Target, Context], str | None]] = {
    "template": lambda fired, target, context: fired.text,
    "partner": lambda fired, t, c: (
        f"用户的{t[1].split(':')[1] if t[1].startswith('relationship:') else '对象'}叫{fired.text}"
    ),
    # the known value, said otherwise (none when it is said so already, or not said as is)
    "replace": lambda fired, t, c: t[0].replace(t[2], fired.text, 1) if t[2] != fired.text and t[2] in t[0] else None,
    "by_slot": lambda fired, t, c: fired.rule.render(
        fired.rule.values["by_slot"].get(t[1], fired.rule.template), fired.match
    ),
    # a pet no longer kept, by its species (of the slot, or named in the fact)
    "pet_gone": lambda fired, t, c: (
        (species := (t[1].split(":", 1)[1] if t[1].startswith("keeps:") else None) or species_of(t[0]))
        and f"用户不再养{species}了"
    ),
    "phone": _phone,
    "in_turn": _in_turn,
    "respan": _respanned,
    # the same, said as a correction ("The user actually …")
    "respan_marked": lambda fired, t, c: (new := _respanned(fired, t, c)) and marked_as_correction(new),
}


def _target(fired: Fired, context: Context) -> Target | None:
    """The known fact a rule looks for: by its ``finder``, or by its ``slots``, its ``kinds`` of slot, a
    pattern of its ``slot`` or one ``either`` finds in the fact; and one its ``held`` pattern finds in, a
    slot value its ``value`` pattern finds in (said as is in the fact: ``in_fact``), of the last ``recent``."""
    if fired.known:  # read with the rule's ``known`` pattern
        return fired.known.string, "", ""
    values, known = fired.rule.values, context["known"]
    slots, kinds = values.get("slots", ()), values.get("kinds", ())
    slot, either, held, value = (
        _held(fired.rule.render(values[key], fired.match)) if key in values else None
        for key in ("slot", "either", "held", "value")
    )
    if "finder" in values:
        test = _FINDERS[values["finder"]](fired.match)
    elif slots or kinds or slot or either:
        test = lambda f, s, v: (  # noqa: E731
            s in slots
            or s.split(":", 1)[0] in kinds
            or bool(slot and slot.search(s))
            or bool(either and either.search(f))
        )
    elif held or "recent" in values:
        test = lambda f, s, v: True  # noqa: E731
    else:
        return None
    found: Target | None = known.latest(
        lambda f, s, v: (
            test(f, s, v)
            and (not held or bool(held.search(f)))
            and (not value or bool(value.search(v)))
            and (v in f or not values.get("in_fact"))
        ),
        values.get("recent", 0),
    )
    return found


def _differs(fired: Fired, target: Target) -> bool:
    """What the rule says is not what the known fact (or its value) says already, and the fact holds what it
    must (``holds``)."""
    values, said = fired.rule.values, functools.partial(fired.rule.render, found=fired.match)
    if "holds" in values and not _held(said(values["holds"])).search(target[0]):
        return False
    if "differs" in values and said(values["differs"]) in target[0]:
        return False
    if "differs_i" in values and said(values["differs_i"]).lower() in target[0].lower():
        return False
    return "differs_value" not in values or said(values["differs_value"]) not in target[2]


def _changed(fired: Fired, context: Context) -> Outcome:
    """A rule's change: the known fact it looks for, what it says instead, and whether it ends the clause."""
    stop = fired.rule.values.get("stop", "always")
    target = _target(fired, context)
    if target is None:
        return [], stop == "always"
    new = _MAKERS[fired.rule.values.get("make", "template")](fired, target, context)
    new = new if new and _differs(fired, target) else None
    also = [(fired.rule.values["also"], target[0])] if new and "also" in fired.rule.values else []
    return ([(new, target[0]), *also] if new else []), stop != "made" or bool(new)


def _fired(rule: Rule, said: str, context: Context) -> Outcome:
    """What ``rule`` makes of ``said`` (the changes, and whether it decides); ([], False) if it does not
    fire. ``trim``: a pattern taken off ``said`` first; ``reads = "said"``: the whole English message."""
    trim, said = rule.values.get("trim"), context["said"] if rule.values.get("reads") == "said" else said
    # a rule with a ``known`` pattern reads the latest known facts (the last ``recent``, when given) first
    read = {**context, "known": context["known"].facts[::-1][: rule.values.get("recent")]} if rule.known else context
    fired = rule.fire(re.sub(trim, "", said) if trim else said, read)
    if fired is None:
        return [], False
    return _HANDLERS.get(rule.values.get("handler", ""), _changed)(fired, context)


def _first_events(rules: Registry, said: str, context: Context) -> list[Event] | None:
    """The changes the first rule of ``rules`` that decides finds in ``said``; None if none decides."""
    for rule in rules.rules:
        events, stop = _fired(rule, said, context)
        if events or stop:
            return events
    return None


def _first_change(rules: Registry, said: str, known_facts: Sequence[str]) -> Event | None:
    """The first change the first rule of ``rules`` that decides finds in ``said``, read alone against the
    known facts."""
    known = _Known([f for f in known_facts if isinstance(f, str)])
    return next(iter(_first_events(rules, said, {"text": said, "known": known}) or []), None)


#: a clause as the rules read it, and what in it may name someone else (``[rows]``, rewritten in turn)
_WHOSE = _DATA.compiled_rows("_WHOSE")
_CLAUSE_SAID = _DATA.compiled_rows("_CLAUSE_SAID")


def _clause_events(pieces: Sequence[str], message: Context) -> list[Event]:
    """Each clause's change, said of the user: in turn ([[registries.in_turn]]), or by the rules
    ([[registries.clause]], or [[registries.alone]] for a clause without Chinese)."""
    found: list[Event] = []
    # the clauses that say what took an old thing's place, found once (not once a clause: issue 25)
    switching = {p for p in pieces if RE._SWITCHED_TO.match(p) or RE._IN_TURN.match(p)}
    for piece in pieces:
        clause = rewritten(piece, _CLAUSE_SAID)
        # "后来她改学了二胡", "这学期又换成象棋了": what a relative (or the user) known to do a
        # thing does in its place, said without naming them again
        event = _first_events(_IN_TURN_RULES, clause, message)
        context = {**message, "switched": bool(switching - {piece})}
        # else by the rules, which read nothing of a clause that is not the user's own
        found += event or _first_events(_CLAUSE if RE._HAN.search(clause) else _ALONE, clause, context) or []
    return found


def _message_events(pieces: Sequence[str], context: Context) -> list[Event]:
    """The changes the rules of [[registries.message]] find, each on the message or on its clauses."""
    found: list[Event] = []
    decided: set[str] = set()  # the groups in which a rule decided
    for rule in _MESSAGE.rules:
        if rule.values.get("group") in decided:
            continue
        for said in pieces if rule.values.get("on") == "pieces" else [context["text"]]:
            events, stop = _fired(rule, said, context)
            found += events
            if (events or stop) and not rule.values.get("every"):
                decided.add(rule.values.get("group", rule.id))
                break
    return found


_SAYS = _DATA.compiled_rows("_SAYS", EN_ROLE_PATTERN=EN_ROLE_PATTERN)


_VOCABULARY = VOCABULARY.extended(
    predicates={
        # the message says so: ``[rows] _SAYS``, each a pattern, the predicate it makes (and what it reads)
        **{row[1]: pattern_test(row[0], row[2] if row[2:] else "text") for row in _SAYS},
        "others": lambda value, context: bool(context.get("others")),
        "named_topic": lambda value, context: bool(
            _named_topic(context.get("text", ""), getattr(context.get("known"), "facts", ()))
        ),
        "switched": lambda value, context: bool(context.get("switched")),
        "changed_once": simple(lambda fact: "改" in fact),
        "told_else": lambda value, context: told_of_someone_else(context.get("text", "")),
        "unreal": simple(is_unreal),
        "unreal_message": lambda value, context: is_unreal(context.get("text", "")),
        # (of the whole English message where the rule reads only what is so)
        "conditional": lambda value, context: is_conditional(context.get("said", context.get("text", ""))),
        # a clause that names someone else, once what names no one it is about is taken out (``[rows] _WHOSE``)
        "names_else": simple(
            lambda clause: bool(re.search(r"[你您他她]|" + ZH_ROLE_PATTERN, rewritten(clause, _WHOSE)))
        ),
        # "现在在北京" right after "用户在天津工作": a chain of places worked in
        "chain": lambda value, context: (
            bool(RE._CHINESE_NAME.fullmatch(value))
            and any(RE._WORKED_IN.match(f) for f in getattr(context.get("known"), "facts", ())[-1:])
        ),
        "known": lambda value, context: bool(getattr(context.get("known"), "facts", context.get("known"))),
        # a car or phone known: the English swaps of neither read the thing said last, or named
        "car_or_phone": lambda value, context: any(
            slot.split(":", 1)[0] in ("vehicle", "phone")
            for fact in getattr(context.get("known"), "facts", ())
            for slot, _ in slots_of(fact)
        ),
        "job": simple(looks_like_job),
        "correction": lambda value, context: is_correction(context.get("text", value)),
        # advice, a plan, or someone else named in the message: not what is done now
        "advised_or_planned": lambda value, context: _advised(text := context.get("text", value)) or is_unreal(text),
    },
    filters={
        "strip": str.strip,
        "lower": str.lower,
        "no_article": lambda value: RE._EN_ARTICLE_NAME.sub("", value),
        "no_lead": lambda value: RE._EN_LEAD_WORDS.sub("", value),
        "no_when": lambda value: RE._EN_WHEN_TAIL.sub("", value),
        "esc": re.escape,
        "no_one": lambda value: value.replace("人偷", "偷"),
        "shape": _value_shape,
        "no_that": lambda topic: RE._THAT_THING_END.sub("", topic),
        # the word an English habit one quits is said with ("smok" in "smoking")
        "quit_word": lambda value: "".join(EN_QUITTABLE.findall(value)[:1]).lower(),
        "pursued": _pursued,
    },
    readers={
        # the topic (two characters or more) a known fact shares with the message, "" if none
        "topic_named": lambda fact, context: (_named_topic(context.get("text", ""), [fact]) or ("",))[0],
    },
    comparisons={
        "inside": lambda part, whole: part in whole,
        # "碳酸饮料" in what names one of the kind (可乐, 雪碧: ``[tables.QUIT_KINDS]``)
        "kind_named": lambda kind, said: any(k in said for k in QUIT_KINDS.get(kind, ())),
        # "forget what I said about my middle name": a word after "about" (three letters or more) in a fact
        "about": lambda about, fact: bool(
            (set(RE._EN_LOWER_WORD.findall(about.lower())) - {"what", "said", "the"})
            & set(RE._EN_LOWER_WORD.findall(fact))
        ),
        # a verb of keeping a habit up, said in a fact (练: 健身, 锻炼 too); none said: any
        "kept_up": lambda verb, fact: verb in fact or (verb == "练" and bool(RE._PRACTISED.search(fact))),
    },
)
_CLAUSE = registry(_DATA, "clause", _VOCABULARY)
_ALONE = registry(_DATA, "alone", _VOCABULARY)
_TAKEN_BACK = registry(_DATA, "taken_back", _VOCABULARY)
_MESSAGE = registry(_DATA, "message", _VOCABULARY)
_BARE_VALUE = registry(_DATA, "bare_value", _VOCABULARY)
_RENAMED_KIND = registry(_DATA, "renamed_kind", _VOCABULARY)
_IN_TURN_RULES = registry(_DATA, "in_turn", _VOCABULARY, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)
_RECOLOURED = registry(_DATA, "recoloured", _VOCABULARY)
_PURSUED = registry(_DATA, "pursued", _VOCABULARY)
_FELL_THROUGH = registry(_DATA, "fell_through", _VOCABULARY, ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)
_CALLED_OFF_RULES = registry(_DATA, "called_off", _VOCABULARY)
_ENGLISH_SAID = registry(_DATA, "english_said", _VOCABULARY)
_NAMED_INSTEAD = registry(_DATA, "named_instead", _VOCABULARY)
_EN_EXTRA = {"_EN_NAME_NOT_THE": _EN_NAME_NOT_THE, "CAR_MAKES": CAR_MAKES, "EN_ROLE_PATTERN": EN_ROLE_PATTERN}
_ENGLISH = registry(_DATA, "english", _VOCABULARY, **_EN_EXTRA)
