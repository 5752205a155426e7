"""An offline stand-in for the spec's CONFLICT_CHECK prompt.

It answers the same four-way question (duplicate / update / conflict /
different) from the surface of the two texts: their normalised words, the
slot each fills (see ``slots``), whether one negates the other and, for
preferences about replies, the dimension each takes a side on (see
``dimensions``). It is deliberately conservative: anything it cannot place is
``DIFFERENT``, which in the pipeline means "keep both", the answer that loses
nothing.

Besides one slot with two values, it knows a few kinds of change that name
no slot:

* related slots: a job title and "works at X as Y", an employer and "quit";
  "single" / "broke up" against facts about a partner;
* a reversal: "用户现在更喜欢Y" / "The user now prefers Y" replaces a liking
  said with the same verb;
* a restriction: "用户其实只会X" / "The user only has X" takes back a bigger
  claim of the same kind;
* giving up: "用户不考了" / "The user gave up on X" ends a pursuit that
  shares its verb or object ("用户在准备考研").

How a pair is decided is data: ``[[registries.relation]]`` in ``rules/judge.toml``, an ordered
registry of named rules (ADR 0042), each with examples of (new fact, known fact) → relation; the
first that fires decides. A rule reads the new fact with its pattern and the known one with its
``known`` pattern, comparing their groups (``same(verb|liking, known.verb|liking)``); or it tests
the known fact by name (``fact_known()``, ``in_known(t)``, or one of the readers below,
``same_frame_update()``: Python kept for what compares slots, values and frames). It answers its
template, whose ``{known.NAME}`` is a group of the known fact or what those tests read
("update: slot {known.slot} {known.old} → {known.new}"). Related slots (a job and "works at X as Y",
a partner and "single") are ``[[registries.related]]``, rules over a slot of each fact.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from difflib import SequenceMatcher

from factledger.domain.values import Relation, RelationVerdict
from factledger.infrastructure.content_ids import behaviour_id
from factledger.infrastructure.offline.changes import (
    BROKE_UP,
    EN_QUITTABLE,
    HABIT,
    LAPSED,
    LET_GO,
    NO_LONGER_SO,
    PARTNERED,
    QUIT_HABIT,
    QUIT_KINDS,
    STUDIES,
    STUDYING_NOW,
    TRADE,
    TRAVEL,
    WORKPLACE,
)
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.registry import Context, Predicate, Vocabulary, registry, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.slots import (
    EN_ROLE_PATTERN,
    ZH_ROLE_PATTERN,
    canonical,
    is_exclusive_slot,
    is_liking_slot,
    is_polarity_slot,
    looks_like_organisation,
    negation_pair,
    normalise,
    rewritten,
    slots_of,
    species_of,
)
from factledger.infrastructure.offline.topics import succeeds, topics_of

_DATA = rules("judge")
RE = _DATA.patterns(ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, EN_ROLE_PATTERN=EN_ROLE_PATTERN)


def offline_judge_id() -> str:
    """``offline-rules/<hash>``: from the content of the rules that make it up, never bumped by hand (ADR 0031)."""
    return behaviour_id("offline-rules", "judge")


def _same_value(a: str, b: str) -> bool:
    """Values match when equal after normalising, or one refines the other (杭州 / 杭州市)."""
    a, b = normalise(a), normalise(b)
    if not a or not b:
        return False
    if a == b:
        return True
    shorter, longer = sorted((a, b), key=len)
    # containment only for names of places and things: "3" is not "30", "张" not "张伟",
    # "一包" not "一包半"
    if RE._NUMERAL.search(shorter):
        return False
    return len(shorter) >= 2 and shorter in longer


@functools.lru_cache(maxsize=16_384)
def _is_fact(text: str) -> bool:
    return bool(RE._FACT.match(text))


def _may_relate(old: str, new: str) -> bool:
    """A topic, a slot or a word (two Chinese characters, or an English word of four letters)
    in common (every reader here is cached per text)."""
    if set(topics_of(old)) & set(topics_of(new)):
        return True
    if {s.split(":", 1)[0] for s, _ in slots_of(old)} & {s.split(":", 1)[0] for s, _ in slots_of(new)}:
        return True
    return bool(_words(old) & _words(new))


def _may_change(old: str, new: str) -> bool:
    """Whether one fact may update or contradict another: the new one says a change (a negation, an
    ending, a switch, a correction, a time word: ``RE._CHANGE_SAID``), or they share a topic, a slot,
    a family of slots (work: employer, job, business…; a partner and being single) or a word.
    Every rule below needs one of these (checked on every pair the tests and dev sets judge)."""
    return _says_change(new) or _may_relate(old, new) or bool(_families(old) & _families(new))


@functools.lru_cache(maxsize=16_384)
def _says_change(text: str) -> bool:
    return bool(RE._CHANGE_SAID.search(RE._SUBJECT.sub("", text)))


@functools.lru_cache(maxsize=16_384)
def _families(text: str) -> frozenset[tuple[str, str]]:
    """(whose, what) of each slot, with the slots a change moves between as one family."""
    found = set()
    for slot, value in slots_of(text):
        role, attribute, _ = _slot_line(slot, value).split("\t", 2)
        if RE._WORK.fullmatch(attribute):
            attribute = "work"
        if RE._PARTNER.fullmatch(role) or attribute == "marital":
            role, attribute = "partner", "partner"
        found.add((role, attribute))
    return frozenset(found)


@functools.lru_cache(maxsize=16_384)
def _words(text: str) -> frozenset[str]:
    body = RE._SUBJECT.sub("", text)
    chinese = {body[i : i + 2] for i in range(len(body) - 1) if re.fullmatch(r"[\u4e00-\u9fff]{2}", body[i : i + 2])}
    return frozenset(chinese - _COMMON_BIGRAMS) | frozenset(w.lower() for w in re.findall(r"[A-Za-z]{4,}", body))


_COMMON_BIGRAMS = frozenset(_DATA.words("_COMMON_BIGRAMS"))


UNREAD = _DATA.text("UNREAD")


#: what a reader of two facts read of them, for its rule's template ({known.NAME}); None: not so
_Read = dict[str, str] | bool | None
#: an answer, why, and the id of the rule that gave it ("judge.<rule>"; empty: no rule read the pair)
_Judged = tuple[Relation, str, str]


class RuleJudge:
    """Implements ``RelationJudge`` with slot and negation rules; no network, deterministic."""

    @property
    def judge_id(self) -> str:
        return offline_judge_id()

    def judge(self, old_fact: str, new_fact: str) -> RelationVerdict:
        relation, reason, rule_id = _decide(old_fact or "", new_fact or "")
        compared = reason != UNREAD
        return RelationVerdict(relation, offline_judge_id(), raw_answer=reason, compared=compared, rules=(rule_id,))


# A pure function of the two texts: extraction (which known fact a new one replaces, what only
# echoes it) and deciding ask about the same pairs, message after message; each is read once.
@functools.lru_cache(maxsize=65_536)
def _decide(old_fact: str, new_fact: str) -> _Judged:
    """The first rule of ``[[registries.relation]]`` (``rules/judge.toml``) that fires: its relation
    and why; ``different`` for want of a reason when none does."""
    read: dict[str, str] = {}
    old_fact, new_fact = unicodedata.normalize("NFKC", old_fact), unicodedata.normalize("NFKC", new_fact)
    fired = _RELATIONS.first(new_fact, {"known": (old_fact,), "read": read})
    if fired is None:
        return Relation.DIFFERENT, UNREAD, ""  # no rule read the pair: a default, no rule's answer
    # its template, with ``{known.NAME}``: what its tests read of the known fact (or of the pair)
    reason = RE.KNOWN_VALUE.sub(lambda m: str(read.get(m.group(1)) or ""), fired.text)
    return Relation(fired.text.split(":", 1)[0]), reason, fired.rule.id


@functools.lru_cache(maxsize=16_384)
def _slots_compared(old: str, new: str) -> tuple[dict[str, str], ...]:
    """Each slot both fill, its values compared: how (``_slot_kind``), slot, old and new value. A fact
    may fill several ("用户的狗叫豆豆，是只泰迪"): one value that changed is a change."""
    new_by_slot = dict(_partnered(slots_of(new)))
    # "is actually allergic to sesame": the value said wrong, said again
    corrected = bool(RE._CORRECTED.search(new)) and not RE._CORRECTED.search(old)
    return tuple(
        {
            "how": _slot_kind(slot, value, new_by_slot[slot], corrected),
            "slot": slot,
            "old": value,
            "new": new_by_slot[slot],
        }
        for slot, value in _partnered(slots_of(old))
        if slot in new_by_slot
    )


def _slot_kind(slot: str, old_value: str, new_value: str, corrected: bool) -> str:
    """How two values of one slot compare: the same, opposite (polarity), one in place of the other
    (exclusive, or corrected), or several values (a second colleague's surname is another colleague)."""
    if _same_value(old_value, new_value):
        return "same"
    if is_polarity_slot(slot):
        return "polarity"
    if is_exclusive_slot(slot):
        return "exclusive"
    return "corrected" if corrected else "several"


def _related_slots(old: str, new: str) -> _Read:
    """Related attributes: a new job and the old "works at X as Y", a partner and "single": the first
    rule of ``[[registries.related]]`` that fires on a slot of the old fact and one of the new."""
    for old_slot in _partnered(slots_of(old)):
        for new_slot in _partnered(slots_of(new)):
            fired = _RELATED.first(_slot_line(*new_slot), {"known": (_slot_line(*old_slot),)})
            if fired is not None:
                how, why = fired.text.split(": ", 1)
                return {"how": how, "why": why}
    return None


def _slot_line(slot: str, value: str) -> str:
    """A slot as the related rules read it: "whose\tattribute\tvalue" (whose: empty for the user's own;
    'relationship:老婆:name' → "老婆\tname\t…", 'residence' → "\tresidence\t…")."""
    whose, attribute = slot.split(":", 2)[1:] if slot.startswith("relationship:") else ("", slot)
    return f"{whose}\t{attribute}\t{value}"


def _partnered(slots: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One partner at a time: 对象, 男朋友, 老公 … are one role when two facts are compared."""
    return [(RE._PARTNER_SLOT.sub("relationship:伴侣:", slot), value) for slot, value in slots]


def _recommended_instead(asked: str, old: str) -> _Read:
    """'推荐书的时候用户喜欢武侠' then '偏好推荐时推悬疑': what to recommend (``asked``), first said as a
    liking of one choice, then asked for as another of the same topic (not two choices of two topics)."""
    old = RE._WHY_FIRST.sub("", old)  # without the clause before it that tells why it is asked
    if "推" not in old or old.startswith("偏好推荐"):
        return None
    before, now = topics_of(old), topics_of(asked)
    for topic, held in before.items():
        fresh = now.get(topic, frozenset()) - held
        if fresh and not any(h in f or f in h for h in held for f in fresh):
            return {"new": sorted(fresh)[0], "old": sorted(held)[0]}
    return None


def _by_dimension(old: str, new: str) -> _Read:
    """'偏好简短的回复风格' then '偏好详细的回复风格': one dimension, the other side."""
    old_sides, new_sides = dimensions(old), dimensions(new)
    shared = [d for d in old_sides if d in new_sides]
    if not shared:
        return None
    changed = [d for d in shared if old_sides[d] != new_sides[d]]
    if changed:
        d = changed[0]
        return {"how": "update", "dimension": d, "old": old_sides[d], "new": new_sides[d]}
    if len(old_sides) == len(shared) or len(new_sides) == len(shared):
        d = shared[0]
        return {"how": "duplicate", "dimension": d, "new": new_sides[d]}
    return None


_LIKING_FAMILY = _DATA.mapping("_LIKING_FAMILY")


def _as_fact(text: str) -> str:
    """A preference written without its subject ("更喜欢看X", "Prefers Y") as a statement about the user."""
    text = text.strip()
    if _is_fact(text):
        return text
    if RE._CHINESE.search(text):
        return "用户" + text
    return "The user " + text[:1].lower() + text[1:]


def _liking_turned(old: str, new: str) -> bool:
    """'喜欢看科幻电影' (a preference) then '用户不再喜欢科幻电影' (a fact): the liking of one thing,
    the other way, whether each was said as a fact or as a preference and whatever its verb."""
    if _is_fact(old) and _is_fact(new):
        return False  # two facts: ``negation_pair`` read their slots already
    old_likes = {slot: value for slot, value in slots_of(_as_fact(old)) if is_liking_slot(slot)}
    return any(slot in old_likes and old_likes[slot] != value for slot, value in slots_of(_as_fact(new)))


def _kind(text: str) -> str:
    # late import: the rule modules import this one's neighbours
    from factledger.infrastructure.offline.rules_common import USER
    from factledger.infrastructure.offline.rules_en import en_category
    from factledger.infrastructure.offline.rules_zh_facts import zh_category

    if RE._CHINESE.search(text):
        return zh_category(text, USER)
    return en_category(text)


def _restricts(new: str, old: str) -> bool:
    """'用户钢琴过了十级' then '用户其实只会弹简单的曲子': the smaller claim is of the same kind as the
    bigger one it takes back (its verb, a word in common or the category)."""
    m = RE._ZH_ONLY_VERB.search(new) or RE._EN_ONLY_VERB.search(new)
    same_verb = bool(m and m.group("verb").lower() in old.lower())
    shared = set(RE._RESTRICTION_NOISE.sub("", new)) & set(old[2:]) - {" "}
    return same_verb or bool(shared & set("去会有是能做玩吃喝学考")) or _kind(old) == _kind(new)


_COLLOCATIONS = _DATA.mapping("_COLLOCATIONS")
_OUT_OF_WORK = frozenset(_DATA.words("_OUT_OF_WORK"))
_EN_STOP_WORDS = frozenset(_DATA.words("_EN_STOP_WORDS"))
_UNSAID = _DATA.compiled_rows("_UNSAID", re.IGNORECASE)


def _gave_up_zh(given: str, old: str) -> bool:
    """What is given up ("不考了") shares a character with the pursuit known ("在准备考研"), or is a
    verb done with what it names (弹 with 琴: ``[tables._COLLOCATIONS]``)."""
    done_with = _COLLOCATIONS.get(given[:1], "")
    have = set(RE._ZH_PURSUIT_WORDS.sub("", old))
    return bool(set(re.sub(r"[^\u4e00-\u9fff]", "", given)) & have or (done_with and re.search(done_with, old)))


def _stems(text: str) -> set[str]:
    """The first five letters of each English word of ``text`` (of three letters or more, not a stop word)."""
    return {w[:5] for w in re.findall(r"[a-z']+", text.lower()) if w not in _EN_STOP_WORDS and len(w) > 2}


_EN_FRAME_NOISE = frozenset(_DATA.words("_EN_FRAME_NOISE"))


def _frame_tokens(text: str, whole: bool = False) -> list[str]:
    """The words a statement is made of, without particles: characters in Chinese, words in English
    (of its first clause, unless ``whole``)."""
    if RE._CHINESE.search(text):
        return list(RE._ZH_FRAME_NOISE.sub("", text if whole else _first_clause(text)))
    words = re.findall(r"[a-z0-9']+", (text if whole else re.split(r"[,;—–]", text)[0]).lower())
    return [w for w in words if w not in _EN_FRAME_NOISE]


def _said_of(text: str, whole: bool = False) -> list[str]:
    """The frame's words after its subject: 用户 is two characters, "the user" one word once "the"
    is dropped as a particle (taking two dropped the English verb: "is determined to make it work"
    and "is trying to make the plan work" then differed in "it" alone)."""
    tokens = _frame_tokens(text, whole)
    return tokens[2:] if RE._CHINESE.search(text) else tokens[1:]


def _reframed(old: str, new: str) -> _Read:
    """'用户在杭州读研' then '用户其实在宁波读研': a correction said in the old statement's frame.

    The new fact is marked as a correction (其实 / actually, written by the
    extractor for a correcting message), says the same of the same person
    ("用户…" / "用户的女儿…"), and differs from the old one in one place: the
    value. Words around it ("在…读研", "teaches at … Elementary") stay.
    """
    zh, en = RE._ZH_ACTUALLY.match(new), RE._EN_ACTUALLY.match(new)
    found = zh or en
    if found is None or not _is_fact(old) or RE._ZH_ACTUALLY.match(old) or RE._EN_ACTUALLY.match(old):
        return None
    role = found.group("role") or ""
    if (zh and not old.startswith("用户" + role)) or (en and not old.lower().startswith(("the user" + role).lower())):
        return None
    if role == "" and RE._RELATIVES.match(old):
        return None  # the user's own fact does not correct a relative's
    a, b = _frame_tokens(old)[2:], _frame_tokens(new)[2:]
    if not a or not b:
        return None
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    kept = sum(i2 - i1 for tag, i1, i2, _, _ in ops if tag == "equal")
    replaced = [(a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in ops if tag == "replace"]
    if len(replaced) != 1:
        return None
    before, after = ("".join(x) if zh else " ".join(x) for x in replaced[0])
    if RE._NEGATED.search(before) or RE._NEGATED.search(after):
        return None
    numeric = bool(RE._NUMERAL.search(before) and RE._NUMERAL.search(after))
    if kept < (1 if numeric or en else 2):
        return None
    if zh and role:
        # a relative's words count only after who it is: "用户的老公做菜超辣" shares 老公 with
        # "用户的老公其实是重庆的" but no frame; "是四川人" and "是重庆的" share 是
        own = len(_frame_tokens("用户" + role)) - 2
        said_old = old[len("用户" + role) :]
        said_new = RE._ACTUALLY_FIRST.sub("", new[len("用户" + role) :])
        if kept - own < 2 and not (said_old.startswith("是") and said_new.startswith("是")):
            return None
    if len(before) > (10 if zh else 40) or len(after) > (10 if zh else 40):
        return None
    return {"old": before, "new": after}


def _first_clause(text: str) -> str:
    return RE._CLAUSE_END.split(text, maxsplit=1)[0]


def _alike(a: list[str], b: list[str]) -> int:
    """How many words ``a`` and ``b`` start with alike."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _same_frame(old: str, new: str) -> _Read:
    """'用户驾照是C2' then '用户驾照是C1', '用户在一家奶茶店打工' then '用户在星巴克打工': the
    same words around one value, for something a person has one of at a time.

    The statement's frame (its words without particles) is the same but for
    one short span, on the same person, neither negated; the words around the
    span say a one-value attribute (叫, 住, 体重, works, lives …) and nothing
    that people have many of (养, 喜欢, 会, has, likes …), so a second pet or
    a second language stays a second one. (Two facts of the same person: the rule's tests.)
    """
    first_old = _first_clause(old)
    zh = bool(RE._CHINESE.search(old))
    a, b = _said_of(old), _said_of(new)  # without 用户 / the user
    if a == b:  # "用户血压有点高，上次量是150": the value is in a later clause
        a, b = _said_of(old, whole=True), _said_of(new, whole=True)
    # the words both start and end with; what is left in between is each one's value
    head = _alike(a, b)
    tail = _alike(a[head:][::-1], b[head:][::-1])
    glue = "" if zh else " "
    before, after = glue.join(a[head : len(a) - tail]), glue.join(b[head : len(b) - tail])
    around = glue.join(a[:head]) + " " + glue.join(a[len(a) - tail :])
    # ("the user's" is one word: "The user's phone carrier is …" keeps one word of the frame after it)
    possessed = not zh and head >= 1 and bool(RE._EN_POSSESSED.match(old))
    if not before or not after or (head + tail < 2 and not possessed):
        return None
    if len(before) > (8 if zh else 30) or len(after) > (8 if zh else 30):
        return None
    # "用户家兔子两岁" then "用户家狗三岁": whose (the thing right after 家 / 的) changed with the
    # figure, so it is another one's figure
    if zh and head and a[head - 1] in ("家", "的") and RE._HAS_NUMBER.search(before) and RE._HAS_NUMBER.search(after):
        whose_before, whose_after = RE._HAS_NUMBER.sub("", before), RE._HAS_NUMBER.sub("", after)
        if whose_before and whose_after and whose_before != whose_after:
            return None
    one, many = (RE._ZH_ONE_VALUE, RE._ZH_MANY_VALUES) if zh else (RE._EN_ONE_VALUE, RE._EN_MANY_VALUES)
    # in English the frame drops "is a", which says a one-value attribute ("is a junior developer")
    said = around if zh else first_old
    measured = RE._MEASURE.fullmatch(before) and RE._MEASURE.fullmatch(after)  # "血糖7.2" then "血糖5.8"
    # a thing's colour, one at a time: "用户的包是黑色的" then "用户的包是棕色的"
    hue = a[len(a) - tail] if tail else ""  # the word after the value: 色 after 黑
    coloured = zh and hue == "色" and all(re.fullmatch(r"[\u4e00-\u9fff]{1,2}", v) for v in (before, after))
    # a figure in the same words is the figure now, however many the words say one may have
    if not (one.search(said) or measured or coloured) or (many.search(said) and not measured):
        return None
    return {"old": before, "new": after}


_NOT_CONTENT = set(_DATA.text("_NOT_CONTENT")) | set(" ,，")


def _amounts(text: str) -> dict[str, str]:
    found = {m.group("u").lower(): m.group("n") for m in RE._QUANTITY.finditer(text)}
    found.update({"code:" + m.group("u"): m.group("n") for m in RE._CODE.finditer(text)})
    return found


def _same_subject(old: str, new: str) -> bool:
    """Both about the user, or both about the same relative ("用户的女儿…", "The user's son …")."""
    a, b = RE._WHOSE.match(old), RE._WHOSE.match(new)
    if a is None or b is None:
        return a is None and b is None
    return (a.group("zh") or a.group("en") or "").lower() == (b.group("zh") or b.group("en") or "").lower()


def _remeasured(old: str, new: str) -> _Read:
    """'用户每天喝三杯咖啡' then '用户现在改成一天一杯': the same unit, a new amount, said as a change.

    Both facts are the user's own (or the same relative's); the new one says
    it changed (改成, 减到, 考下, now …), and measures in a unit the old one
    used (杯, 斤, 级, N1/N3 …) with another number. When the new fact says
    more than the amount, it must also share a word with the old one.
    """
    if not (_is_fact(old) and _is_fact(new)) or RE._NEGATED.search(new.split("，")[0]):
        return None
    if not _same_subject(old, new):
        return None
    first = _first_clause(new)
    before, after = _amounts(old), _amounts(first)
    if len(before) == 1 and len(after) == 1 and RE._QUANTITY.sub("#", old) == RE._QUANTITY.sub("#", first):
        (unit,) = after
        if unit in before and canonical(before[unit]) != canonical(after[unit]):
            # "用户每天喝两罐可乐" / "用户每天喝一罐可乐": the same statement, another amount
            return {"unit": unit, "old": before[unit], "new": after[unit]}
    if not RE._REMEASURE.search(first):
        return None
    shared = [u for u in after if u in before and canonical(before[u]) != canonical(after[u])]
    if not shared:
        return None
    bare = RE._BARE_AMOUNT.fullmatch(first)
    words_old = set(old) - _NOT_CONTENT
    words_new = set(RE._QUANTITY.sub("", first)) - _NOT_CONTENT - set(RE._REMEASURE.pattern)
    if not bare and not (words_old & words_new) and not shared[0].startswith("code:"):
        return None
    unit = shared[0].removeprefix("code:")
    return {"unit": unit, "old": before[shared[0]], "new": after[shared[0]]}


def remeasure(old: str, new: str) -> str | None:
    """The old fact with the new amount, when ``new`` only says the amount changed.

    '用户每天喝三杯咖啡' and '用户现在改成一天一杯' → '用户每天喝一杯咖啡': what is
    measured stays named, so a later "不喝咖啡了" still finds it.
    """
    if _remeasured(old, new) is None:
        return None
    first = _first_clause(new)
    if not RE._ONLY_NEW_AMOUNT.fullmatch(first):
        return None
    after = _amounts(first)
    for m in RE._QUANTITY.finditer(old):
        unit = m.group("u").lower()
        if unit in after and canonical(after[unit]) != canonical(m.group("n")):
            return old[: m.start("n")] + after[unit] + old[m.end("n") :]
    return None


def _read_as(how: str, found: _Read) -> _Read:
    """A reading of two facts, when it reads the pair so (its "how": ``update``, ``duplicate``)."""
    return found if isinstance(found, dict) and found["how"] == how else None


def _of_known(test: Callable[[str, str], object]) -> Predicate:
    """A predicate of a group's value and the known fact (none in the context: it does not hold).
    A test that answers with a match of the known fact (or a mapping) keeps its groups in
    ``context["read"]``, for the template's ``{known.NAME}``."""

    def holds(value: str, context: Context) -> bool:
        found = bool(context.get("known")) and test(value, context["known"][0])
        if isinstance(found, (re.Match, dict)) and isinstance(context.get("read"), dict):
            context["read"].update(found.groupdict() if isinstance(found, re.Match) else found)
        return bool(found)

    return holds


#: the tests relation rules that read the new fact themselves make of the known one (``value``: a group)
_KNOWN: dict[str, Callable[[str, str], object]] = {
    # the readers of two facts (old, new): Python for what compares slots, values and frames
    "by_dimension_update": lambda new, old: _read_as("update", _by_dimension(old, new)),
    "by_dimension_duplicate": lambda new, old: _read_as("duplicate", _by_dimension(old, new)),
    "related_update": lambda new, old: _read_as("update", _related_slots(old, new)),
    "related_duplicate": lambda new, old: _read_as("duplicate", _related_slots(old, new)),
    "reframed_update": lambda new, old: _reframed(old, new),
    "remeasured_update": lambda new, old: _remeasured(old, new),
    "same_frame_update": lambda new, old: _same_frame(old, new),
    "fact_known": lambda value, old: _is_fact(old),
    "filled": lambda value, old: bool(value),
    "restricts": _restricts,
    "liked_instead": _recommended_instead,
    # asked of every known fact and recent preference against every new fact: a pair with nothing in
    # common, neither saying that anything changed, is told apart cheaply, so a message's cost stays
    # flat however many facts are known
    "may_relate": lambda new, old: _may_relate(old, new),
    "may_change": lambda new, old: _may_change(old, new),
    # the same words once punctuation and particles (了/的/现在…) are gone
    "same_words": lambda new, old: (words := canonical(old)) and words == canonical(new),
    # one says the other is not so (``slots.negation_pair``), or turns a liking the other way
    "negates": lambda new, old: negation_pair(old, new) or _liking_turned(old, new),
    # a new choice of something the old fact names a choice of ("改喝乌龙茶" after "每天一瓶可乐")
    "succeeds": lambda new, old: (
        (found := succeeds(old, new)) and dict(zip(("topic", "old", "new"), found, strict=True))
    ),
    # both fill slots (the first of each: {known.slot}, {known.new_slot})
    "both_slotted": lambda new, old: (
        (a := _partnered(slots_of(old))) and (b := _partnered(slots_of(new))) and {"slot": a[0][0], "new_slot": b[0][0]}
    ),
    # the first slot both fill whose values compare as ``how`` ({known.slot}, {known.old}, {known.new})
    **{
        f"slot_{how}": functools.partial(
            lambda how, new, old: next((c for c in _slots_compared(old, new) if c["how"] == how), None), how
        )
        for how in ("same", "polarity", "exclusive", "corrected", "several")
    },
    "negated_known": lambda value, old: RE._NEGATED.search(old),
    "negated": lambda value, old: RE._NEGATED.search(value),
    "same_subject": lambda value, old: _same_subject(old, value),
    "in_known": lambda value, old: value in old,
    "said_in_known": lambda value, old: value in old[2:],
    # "用户有一辆雅迪电动车": one of the kind named at its end (电动车 is a 车, "a red Honda bike" a bike)
    "has_kind": lambda kind, old: (
        (had := RE._ZH_HAS.match(old.strip()) or RE._EN_HAS.match(old.strip()))
        and len(kind) <= len(had.group("obj").strip())
        and had.group("obj").strip().lower().endswith(kind.lower().rstrip("s"))
    ),
    "pursued": lambda value, old: re.search(r"(?:在|开始|准备)" + value, old),
    "habit_known": lambda value, old: HABIT.search(old),
    "quit_kind": lambda value, old: (
        (HABIT.search(old) or re.search(r"喝|吃", old)) and any(k in old for k in QUIT_KINDS.get(value, ()))
    ),
    "quittable_known": lambda value, old: EN_QUITTABLE.search(old),
    "partner_known": lambda value, old: (
        PARTNERED.match(old) or any(s == "partner" or s.startswith("relationship:伴侣") for s, _ in slots_of(old))
    ),
    "same_pet": lambda value, old: value.lower() in old.lower() or (species_of(value) or 0) == species_of(old),
    # the kind of pet given up ("用户不再养猫了"), named by the known fact, which keeps none itself
    "pet_known": lambda kind, old: (
        species_of(old) == kind and not any(s.startswith("keeps:") for s, _ in slots_of(old))
    ),
    # work known: a job, an employer … or a trade plied at a workplace, not in a city ("在工地打工")
    "worked_known": lambda value, old: bool(
        {s for s, _ in slots_of(old)} & {"job", "employment", "business", "employer"}
        or (all(s == "work_location" and WORKPLACE.search(v) for s, v in slots_of(old)) and TRADE.search(old))
    ),
    # a job the new fact says ("用户现在做保安"), and whether the known fact names it
    "job_said": lambda new, old: any(s == "job" for s, _ in slots_of(new)),
    "job_known": lambda new, old: (
        (job := next((v for s, v in slots_of(new) if s == "job"), None)) is not None and job in old
    ),
    # a switch said of a relative ("用户的女儿改学…") that the known fact says nothing of
    "switched_by_another": lambda new, old: bool(
        (m := RE._SWITCHED.match(new)) and m.group("who") and not old.startswith("用户" + m.group("who"))
    ),
    "studies_known": lambda value, old: STUDIES.search(old),
    "studying_known": lambda value, old: STUDYING_NOW.search(old) and "毕业" not in old,
    "drinking_known": lambda value, old: "alcohol" in topics_of(old),
    "gave_up_zh": _gave_up_zh,
    "gave_up_en": lambda given, old: _stems(given) & _stems(old),
    "plan_word": lambda value, old: value in ("计划", "安排"),
    "shares_chars": lambda value, old: set(value) & set(old[2:]) - set("的了是去要在"),
    "shares_words": lambda value, old: (
        set(re.findall(r"[a-z]{3,}", value.lower())) & set(re.findall(r"[a-z]{3,}", old.lower())) - _EN_STOP_WORDS
    ),
    "had": lambda value, old: (value == "它" or value in old) and RE._HAD.search(old),
    "fact": lambda value, old: _is_fact(value),
    # named by its make: "用户开一辆比亚迪"
    "car_known": lambda value, old: value in ("车", "车子", "爱车") and any(s == "vehicle" for s, _ in slots_of(old)),
}

_RELATED = registry(
    _DATA,
    "related",
    Vocabulary(
        predicates={"filled": simple(bool), "organisation": simple(looks_like_organisation)},
        comparisons={"same_value": _same_value},
    ),
)
_RELATIONS = registry(
    _DATA,
    "relation",
    Vocabulary(
        predicates={name: _of_known(test) for name, test in _KNOWN.items()},
        # a known fact that begins with what the new one denies, said long enough to be one
        comparisons={
            # both negated, or neither
            "negated_alike": lambda a, b: bool(RE._NEGATED.search(a)) == bool(RE._NEGATED.search(b)),
            "begins": lambda whole, stem: len(stem) >= 4 and whole.startswith(stem),
            # the known fact is the same person's ("用户" and ``who``) and says ``verb`` of something before
            "did_before": lambda old, who, verb: (
                (not who or old.startswith("用户" + who)) and bool(re.search(verb + r"(?!了)\S", old[2 + len(who) :]))
            ),
        },
        filters={
            "canonical": canonical,
            # the work the fact says was left ("辞职"; not "待业": out of work is no job left), or ""
            "left_work": lambda fact: next(
                (v for s, v in slots_of(fact) if s.endswith("employment_status") and v not in _OUT_OF_WORK), ""
            ),
            # the kind of pet the fact says is kept no more ("用户不再养猫了": 猫), or ""
            "pet_given_up": lambda fact: next(
                (s[6:] for s, v in slots_of(fact) if s.startswith("keeps:") and v == "no"), ""
            ),
            "lower": str.lower,
            # a fact's first clause ("不在…" there says where the user is not, not where they are)
            "first": _first_clause,
            # what a denial says, the negation taken out ([rows] _UNSAID)
            "unsaid": lambda said: rewritten(said, _UNSAID),
            # a count's statement: the count a mark, without the words said with it
            "recount": lambda text: RE._RECOUNT_NOISE.sub("", RE._COUNT.sub("#", text)),
            # verbs of one liking are one verb ([tables._LIKING_FAMILY])
            "liking": lambda verb: _LIKING_FAMILY.get(verb.lower(), verb.lower()),
        },
    ),
    NO_LONGER_SO="|".join(map(re.escape, NO_LONGER_SO)),
    LET_GO="|".join(map(re.escape, LET_GO)),
    LAPSED=re.escape(LAPSED),
    QUIT_HABIT=re.escape(QUIT_HABIT),
    BROKE_UP=re.escape(BROKE_UP),
    TRAVEL=TRAVEL,
)
