"""Slots: which attribute of the user a third-person fact talks about.

The offline judge and embedder have no language model, so they need another
way to see that "用户住在杭州" and "用户住在上海" are about the same thing
(where the user lives) with different values, while "用户在杭州工作" is about
something else. This module is that shared table: a few patterns over the
fact texts the rule extractor writes (and the obvious paraphrases an LLM
writes), each naming a slot.

Slot names are plain strings:

* user attributes: ``residence``, ``work_location``, ``employer``,
  ``employment``, ``name``, ``surname``, ``age``, ``job``, ``gender``,
  ``origin``, ``responsibility``, ``birthday``, ``study_location`` (where one
  studies) …;
* a relative's attribute: ``relationship:<role>:<attribute>``, the role in
  its canonical Chinese form so "my wife" and "我老婆" share a slot;
* polarity slots, whose value is ``yes`` or ``no``: ``possession:<thing>``,
  ``likes:<thing>``, ``eats:<thing>`` … so that 用户有车 / 用户没有车 land on
  the same slot and contradict each other (a liking whatever its verb, degree
  or negation: 特别爱吃火锅 / 不喜欢火锅 are ``likes:火锅`` yes / no).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import TypeVar

from factledger.infrastructure.offline.registry import Predicate, Registries, Registry, Vocabulary
from factledger.infrastructure.offline.rule_data import rules

_DATA = rules("slots")

# Roles: relationship nouns and their canonical form (whether one person has only one of them is
# ``is_exclusive_slot``'s: a new surname for "the boss" replaces the old one, a new surname for "a
# colleague" is another colleague).
ROLE_SYNONYMS: dict[str, str] = _DATA.mapping("ROLE_SYNONYMS")
_ZH_ROLES = sorted((r for r in ROLE_SYNONYMS if not r.isascii()), key=len, reverse=True)
_EN_ROLES = sorted((r for r in ROLE_SYNONYMS if r.isascii()), key=len, reverse=True)
#: regex alternation of the Chinese role words, longest first so 女朋友 beats 朋友
ZH_ROLE_PATTERN = "|".join(_ZH_ROLES)
EN_ROLE_PATTERN = "|".join(_EN_ROLES)
ZH_ROLE_QUALIFIER = _DATA.text("ZH_ROLE_QUALIFIER")
RE = _DATA.patterns(ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, EN_ROLE_PATTERN=EN_ROLE_PATTERN)

EXCLUSIVE_SLOTS: frozenset[str] = frozenset(_DATA.words("EXCLUSIVE_SLOTS"))
POLARITY_PREFIXES = _DATA.words("POLARITY_PREFIXES")
# word lists shared with the extractor
JOB_SUFFIXES = _DATA.words("JOB_SUFFIXES")
GENDER_WORDS = _DATA.words("GENDER_WORDS")
#: an English word that names a job when it is a noun: -er, -ist, -ian … or a known title
EN_JOB_WORD = RE.EN_JOB_WORD

_CANONICAL = _DATA.compiled_rows("_CANONICAL")
_SPECIES = _DATA.compiled_rows("_SPECIES", re.IGNORECASE)
_CONSUMING = _DATA.compiled_rows("_CONSUMING")
_MARITAL_WORDS = _DATA.compiled_rows("_MARITAL_WORDS", re.IGNORECASE)
#: what goes around the thing liked: a tail ("anymore", "these days") and a light verb ("eating", 吃)
_EN_LIKED_THING = _DATA.compiled_rows("_EN_LIKED_THING", re.IGNORECASE)
_ZH_LIKED_THING = _DATA.compiled_rows("_ZH_LIKED_THING")
_EN_NUMBERS = _DATA.mapping("_EN_NUMBERS")
CAR_MAKES = _DATA.text("CAR_MAKES")


def looks_like_organisation(name: str) -> bool:
    """True for "阿里巴巴集团", "一家公司", "Google": where one works, not a city.

    Latin names inside Chinese text are nearly always companies ("在Google工作");
    Chinese place names carry no such suffix.
    """
    return bool(RE._ORGANISATION.search(name.strip()))


def looks_like_job(title: str) -> bool:
    """True for "程序员", "一名产品经理", "做前端的" …; false for "杭州人", "好人"."""
    title = RE._COUNTED.sub("", title.strip())
    return len(title) <= 12 and not title.endswith("人") and title.endswith(JOB_SUFFIXES)


def normalise(text: str) -> str:
    """Width-folded, lower-cased text with whitespace and punctuation removed."""
    return RE._PUNCT.sub("", unicodedata.normalize("NFKC", text or "").lower())


def canonical(text: str) -> str:
    """``normalise`` minus particles and time adverbs: the judge's notion of "same words"."""
    return rewritten(unicodedata.normalize("NFKC", text or "").lower(), _CANONICAL)


def _clean_value(value: str) -> str:
    """A value without the punctuation around it and the particles after it."""
    return RE._PARTICLES.sub("", value.strip().strip("。.,，!！?？;；:：'\"“”‘’ ")).strip()


def _strip_measure(thing: str) -> str:
    return RE._MEASURE.sub("", thing.strip())


def _liked_thing(said: str, rows: Sequence[tuple[re.Pattern[str], str]]) -> str:
    """The thing a liking is of (one slot per thing liked, whatever the verb, the degree or the
    negation), without the tail and the light verb around it ("eating hot pot anymore": hot pot, 吃火锅: 火锅)."""
    return _strip_measure(_clean_value(rewritten(_clean_value(said), rows))).lower()


Otherwise = TypeVar("Otherwise")


def first_row(rows: Sequence[tuple[re.Pattern[str], str]], text: str, otherwise: Otherwise) -> str | Otherwise:
    """What the first row ``[pattern, output]`` of a data table whose pattern ``text`` holds gives,
    else ``otherwise``: a word list read as "which kind is this"."""
    return next((output for pattern, output in rows if pattern.search(text)), otherwise)


def rewritten(text: str, rows: Sequence[tuple[re.Pattern[str], str]]) -> str:
    """``text`` through each row ``[pattern, replacement]`` of a data table in turn."""
    for pattern, replacement in rows:
        text = pattern.sub(replacement, text)
    return text


def pattern_test(pattern: re.Pattern[str], where: str) -> Predicate:
    """A rule's predicate of one pattern of a data table: the value ``fullmatch``es, ``match``es or
    holds (``search``) it, or the context's text ``where`` (the message …) holds it."""
    if where in ("fullmatch", "match", "search"):
        return lambda value, context: bool(getattr(pattern, where)(value))
    return lambda value, context: bool(pattern.search(str(context.get(where, ""))))


def species_of(thing: str) -> str | None:
    """'狸花猫' → 猫, '柴犬' → 狗; None when the word names no pet."""
    return first_row(_SPECIES, thing, None)


_VOCABULARY = Vocabulary(
    predicates={
        "said": lambda value, context: bool(_clean_value(value)),
        "gender": lambda value, context: value in GENDER_WORDS,
        "job": lambda value, context: looks_like_job(value),
        "organisation": lambda value, context: looks_like_organisation(value),
        "job_word": lambda value, context: bool(EN_JOB_WORD.search(value)),
        "bare_title": lambda value, context: bool(RE._EN_BARE_TITLE.search(value)),
        "two_statements": lambda value, context: bool(RE._EN_TWO_STATEMENTS.search(value)),
        "pet": lambda value, context: bool(species_of(value)) and len(value.split()) <= 3,  # in a few words
    },
    filters={
        "lower": str.lower,
        "clean": _clean_value,
        "first_clause": lambda value: RE._CLAUSE_BREAK.split(value)[0],
        "measure": _strip_measure,
        "number": lambda n: _EN_NUMBERS.get(n.lower(), n.lower()),
        "cn_number": lambda n: _number(n),
        "before_comma": lambda value: RE._COMMA.split(value)[0],
        "pet_kind": lambda thing: species_of(thing) or _strip_measure(thing),
        "en_liked": lambda said: _liked_thing(said, _EN_LIKED_THING),
        "zh_liked": lambda said: _liked_thing(RE._LIKING_PARTICLES.sub("", said), _ZH_LIKED_THING),
        "marital": lambda said: first_row(_MARITAL_WORDS, said, ""),
        "yes_no": lambda negated: "no" if negated else "yes",
        "role": lambda role: ROLE_SYNONYMS.get(role, role),
        # how much of it: quitting, given up, the amount said, or yes
        "consumption": lambda said: first_row(
            _CONSUMING, said, next((amount.group(0).lower() for amount in RE._AMOUNT.finditer(said)), "yes")
        ),
    },
)
RULES = Registries(_DATA, _VOCABULARY)


def _match_predicates(predicate: str, lang: str) -> list[tuple[str, str]]:
    """Every slot ``predicate`` (said in ``lang``, "en" or "zh") fills: in Chinese the partner by name
    and how many of a thing first, then a named pet, its breed and what it is; the main slot first."""
    found = _pairs(RULES[f"{lang}_extra"], predicate) + _pairs(RULES.consumed, predicate)[:1]
    found += _pairs(RULES[f"{lang}_liking"], predicate)[:1]
    found += _pairs(RULES[f"{lang}_marital"], predicate) + _pairs(RULES[f"{lang}_polarity"], predicate)[:1]
    if lang == "zh":
        first_clause = RE._COMMA.split(predicate)[0]
        found = _pairs(RULES.zh_partner, predicate) + _pairs(RULES.zh_count, first_clause) + found
        found += _pairs(RULES.zh_pet, predicate)
    if found and found[0][0].startswith(("consumes:", "marital", "relationship:伴侣")):
        return found
    main = _main_slot(predicate, lang)
    return [main, *found] if main else found


def _pairs(rules_: Registry, text: str) -> list[tuple[str, str]]:
    """(slot, value) of every rule of ``rules_`` that fires: its ``slot`` and its template."""
    return [(fired.rule.render(fired.rule.values["slot"], fired.match), fired.text) for fired in rules_.every(text)]


def _main_slot(predicate: str, lang: str) -> tuple[str, str] | None:
    """The slot of the first predicate rule whose value is of its kind; a rule whose value is not
    ("住了十几年") leaves the rest to try, one with no value at all ends the search. A rule's
    ``template`` writes the value otherwise than as said ("a Pixel 6" → Pixel 6, 二十九岁半 → 29半);
    its ``refine`` names a registry that reads the value again, its own ``slot`` with it ("是X" split
    into the slot it actually fills: ``zh_is``)."""
    for fired in RULES[f"{lang}_predicates"].every(predicate):
        said = fired.match.group("v")
        value = _clean_value(said if lang == "en" else RE._CLAUSE_BREAK.split(said)[0])
        if not value:
            return None
        if "refine" not in fired.rule.values:
            return fired.rule.render(fired.rule.values["slot"], fired.match), fired.text or value
        refined = RULES[fired.rule.values["refine"]].first(value)
        if refined:
            return refined.rule.values["slot"], refined.text
    return None


_CN_DIGITS = _DATA.table("_CN_DIGITS")
_CN_UNITS = _DATA.table("_CN_UNITS")


def _number(text: str) -> str:
    """'二十九' → '29', '029' → '29'; anything else ('几千', '上万') as said."""
    if text.isdigit() and text.isascii():
        # not int(): it refuses a run of over 4,300 digits (a 16,000-digit "age" raised: issue 25)
        return text.lstrip("0") or "0"
    if text.isdigit():
        return str(int(text)) if len(text) < 100 else text
    if not RE._CN_NUMERAL.fullmatch(text):
        return text
    total, current = 0, 0
    for ch in text:
        if ch in _CN_UNITS:  # 十, 百: the digit before (one when none) times the unit
            total, current = total + (current or 1) * _CN_UNITS[ch], 0
        else:
            current = _CN_DIGITS[ch]
    return str(total + current)


def slots_of(fact_text: str) -> list[tuple[str, str]]:
    """Every (slot, value) a third-person fact fills, the main one first; [] when none applies.

    A fact restated with more said after it ("用户的女儿今年5岁，在上幼儿园") is
    read by its first clause when the whole says nothing a slot knows.
    """
    return list(_slots_of(fact_text)) if isinstance(fact_text, str) else []


# A user's known facts are read again for every new item of every message: read each text once.
@functools.lru_cache(maxsize=16_384)
def _slots_of(fact_text: str) -> tuple[tuple[str, str], ...]:
    text = unicodedata.normalize("NFKC", fact_text).strip()
    # "用户家老爷子…": a relative of the user's, as "用户的老爷子…" says it
    text = re.sub(r"^用户家的?(?=(?:" + ZH_ROLE_PATTERN + "))", "用户的", text)
    # an emoji or a symbol at the end says nothing of the value ("挤地铁去公司😮‍💨")
    text = RE._TRAILING_SYMBOLS.sub("", text) or text
    # "These days the user is in Leeds", "And as of this month the user is …": when, then what;
    # "昨天刚过完生日，用户正式30了": the scene first, then the statement
    for leading, not_a_lead in ((RE._EN_LEAD, RE._EN_LEAD_NOT), (RE._ZH_LEAD, RE._ZH_LEAD_NOT)):
        lead = leading.match(text)
        if lead and not not_a_lead.search(lead.group(0)):
            text = text[lead.end() :]
            text = text[:1].upper() + text[1:]  # "the user …" as a statement opens; 用户 stays as it is
    found = _slots(text) or _slots(RE._CLAUSE_OR_BUT.split(text)[0])
    if not found and RE._THE_USER.match(text):
        # "The user said that wrong, the user is actually 31": the clause that says what
        clauses = RE._EN_CLAUSE_BREAK.split(text)[1:3]
        said = (_slots(c[:1].upper() + c[1:]) for c in clauses if RE._THE_USER.match(c))
        found = next(filter(None, said), [])
    whose = re.match(r"^用户(?:的(?:" + ZH_ROLE_PATTERN + "))?", text)
    if whose:
        # "用户上周又换，现在用的是vivo X100", "用户在读研一，学的是材料": a later clause of
        # the same statement says what, or says more
        for clause in RE._CLAUSE_BREAK.split(text)[1:3]:
            if clause and not re.match(r"^(?:用户|他|她|它|" + ZH_ROLE_PATTERN + ")", clause):
                seen = {slot for slot, _ in found}
                # an aside ("有点高", "没怎么变") is not a second attribute
                found += [
                    pair
                    for pair in _slots(whose.group(0) + clause)
                    if pair[0] not in seen and not pair[0].startswith((*POLARITY_PREFIXES, "consumes:"))
                ]
    return tuple(found)


_EN_PREDICATE_TIDY: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows("_EN_PREDICATE_TIDY")


def _slots(text: str) -> list[tuple[str, str]]:
    partner = _pairs(RULES.partner_named, text)
    if partner:
        return partner
    zh = RE._ZH_SUBJECT.match(text)
    m = zh or RE._EN_SUBJECT.match(text)
    if m is None:
        return []
    lang, role = "zh" if zh else "en", m.group("role")
    if zh:
        predicate = RE._ZH_COPULA_BEFORE_WHERE.sub("", RE._ZH_PREDICATE_LEAD.sub("", text[m.end() :]))
    else:
        # "The user's name is Tom" leaves "name is Tom", which ``en_predicates`` reads
        predicate = rewritten(text[m.end() :].strip(), _EN_PREDICATE_TIDY)
    found = _match_predicates(predicate, lang)
    if role is not None and lang == "en" and not found:
        # "The user's partner is Jake", "The user's partner Jake and the user have been together …"
        found = _pairs(RULES.en_named, predicate)[:1]
    if role is not None:
        canonical_role = ROLE_SYNONYMS.get(role.lower(), role)
        return [(f"relationship:{canonical_role}:{slot}", value) for slot, value in found]
    return found


def slot_of(fact_text: str) -> tuple[str, str] | None:
    """The main (slot, value) a third-person fact fills, or None when no slot applies.

    >>> slot_of("用户住在杭州")
    ('residence', '杭州')
    >>> slot_of("用户的老板姓张")
    ('relationship:老板:surname', '张')
    """
    return next(iter(slots_of(fact_text)), None)


def is_liking_slot(slot: str) -> bool:
    """likes:火锅, relationship:女儿:likes:西兰花: how someone feels about a thing."""
    return slot.startswith("likes:") or (slot.startswith("relationship:") and ":likes:" in slot)


def is_polarity_slot(slot: str) -> bool:
    """Polarity slots hold yes/no: a different value is a contradiction, not an update."""
    if slot.startswith("relationship:"):
        slot = slot.split(":", 2)[2]
    return slot.startswith(POLARITY_PREFIXES)


_PLURAL_ROLES = frozenset(_DATA.words("_PLURAL_ROLES"))
_ONE_CHILD_ATTRIBUTES = frozenset(_DATA.words("_ONE_CHILD_ATTRIBUTES"))
_PLURAL_ATTRIBUTES = frozenset(_DATA.words("_PLURAL_ATTRIBUTES"))


def is_exclusive_slot(slot: str) -> bool:
    """True when a new value replaces the old one (one residence, one boss's surname)."""
    if slot.startswith("relationship:"):
        _, role, attribute = slot.split(":", 2)
        if role == "孩子" and attribute in _ONE_CHILD_ATTRIBUTES:
            return True  # "孩子上二年级了", "孩子在上海上学": most who say 孩子 mean their one child
        return role not in _PLURAL_ROLES and is_exclusive_slot(attribute)
    if slot.startswith(("attr:", "favourite:", "frame:")):
        return slot.split(":", 1)[1] not in _PLURAL_ATTRIBUTES
    return slot in EXCLUSIVE_SLOTS or slot.startswith(("consumes:", "pet:", "count:", "measure:"))


# --------------------------------------------------------------------------
# Negation
# --------------------------------------------------------------------------

_ZH_NEGATIONS: tuple[tuple[str, tuple[str, ...]], ...] = _DATA.rows("_ZH_NEGATIONS")
_EN_CONTRACTIONS = _DATA.compiled_rows("_EN_CONTRACTIONS")
_EN_NEGATIONS: tuple[tuple[str, tuple[str, ...]], ...] = _DATA.rows("_EN_NEGATIONS")


_VERB_ENDINGS: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows("_VERB_ENDINGS", re.IGNORECASE)


def third_person_verb(verb: str, first: Sequence[tuple[re.Pattern[str], str]] = ()) -> str:
    """'race' → 'races', 'fix' → 'fixes', 'carry' → 'carries', 'have' → 'has': an English verb after he or
    she; the rows ``first`` (a verb kept as said …) tried before the endings."""
    rows = (*first, *_VERB_ENDINGS)
    return next(pattern.sub(ending, verb, count=1) for pattern, ending in rows if pattern.search(verb))


def _positive_forms(text: str) -> tuple[frozenset[str], bool]:
    """(canonical texts the negation-free statement may read as, whether it was negated)."""
    lowered = unicodedata.normalize("NFKC", text or "").lower().strip()
    english = bool(RE._LATIN.search(lowered)) and not RE._CJK.search(lowered)
    if english:
        lowered = rewritten(lowered, _EN_CONTRACTIONS)
        positive, negated = RE._EN_DO_NOT.subn(lambda m: third_person_verb(m.group(1)), lowered, count=1)
        if negated:  # "does not drive": "drives"
            return frozenset({canonical(positive)}), True
    for marker, replacements in _EN_NEGATIONS if english else _ZH_NEGATIONS:
        if marker in lowered:
            return frozenset(canonical(lowered.replace(marker, r, 1)) for r in replacements), True
    return frozenset({canonical(lowered)}), False


def negation_pair(a: str, b: str) -> bool:
    """True when one fact is the other negated: 用户有车 / 用户没有车, has / does not have."""
    slots_a, slots_b = dict(slots_of(a)), dict(slots_of(b))
    for slot, value in slots_a.items():
        if slot in slots_b and is_polarity_slot(slot):
            return value != slots_b[slot]
    forms_a, negated_a = _positive_forms(a)
    forms_b, negated_b = _positive_forms(b)
    return negated_a != negated_b and bool(forms_a & forms_b - {""})
