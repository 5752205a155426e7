"""English rules: first-person statements rewritten about "the user".

A few slot rules (where the user lives, works, their name, age, relatives)
give canonical texts the judge can compare ("The user lives in Paris"); any
other first-person statement is restated as said by ``generic_en``
("i teach piano for a living" → "The user teaches piano for a living").

The rules are ordered registries in ``rules/rules_en.toml`` (ADR 0042): ``request`` (how to reply),
``change`` (changes said as events) and ``clause`` (the rest); this module keeps their vocabulary.
"""

from __future__ import annotations

import functools
import re

from factledger.infrastructure.offline.changes import is_unreal
from factledger.infrastructure.offline.registry import Context, Registries, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import (
    GENERIC_CONFIDENCE,
    HEDGED_CONFIDENCE,
    VOCABULARY,
    Item,
    finding,
    named_rule,
)
from factledger.infrastructure.offline.slots import (
    EN_JOB_WORD,
    EN_ROLE_PATTERN,
    first_row,
    pattern_test,
    rewritten,
    species_of,
    third_person_verb,
)

_DATA = rules("rules_en")
RE = _DATA.patterns()
_CODE_NAMES = _DATA.mapping("_CODE_NAMES")
_CUT_DOWN_NOUNS = _DATA.mapping("_CUT_DOWN_NOUNS")
_UNIT_SIDE = _DATA.mapping("_UNIT_SIDE")
_CLAUSE_TIDY = _DATA.compiled_rows("_CLAUSE_TIDY", re.IGNORECASE)
_EN_PREF_CATEGORIES = _DATA.compiled_rows("_EN_PREF_CATEGORIES", re.IGNORECASE)
_A_OR_AN = _DATA.compiled_rows("_A_OR_AN", re.IGNORECASE)
_VEHICLE_ARTICLE = _DATA.compiled_rows("_VEHICLE_ARTICLE", re.IGNORECASE)
_TONES = _DATA.compiled_rows("_TONES", re.IGNORECASE)
_OTHER_TONES = _DATA.compiled_rows("_OTHER_TONES", re.IGNORECASE)
_KIN = _DATA.compiled_rows("_KIN", re.IGNORECASE, EN_ROLE_PATTERN=EN_ROLE_PATTERN)
_PATTERN_TESTS = _DATA.compiled_rows("_PATTERN_TESTS", re.IGNORECASE, EN_ROLE_PATTERN=EN_ROLE_PATTERN)


def _cut_down_noun(value: str, context: Context) -> str:
    """Of what one cut down, as the message says it ("cut down to 2 a day" after "I smoke":
    cigarettes), or ""."""
    thing = RE._CUT_DOWN_THING.search(str(context.get("message", "")))
    word = thing.group(0).lower() if thing else ""
    return _CUT_DOWN_NOUNS.get(word, word)


_VOCABULARY = VOCABULARY.extended(
    predicates={
        **{name: pattern_test(pattern, where) for pattern, name, where in _PATTERN_TESTS},
        "job": simple(lambda value: bool(EN_JOB_WORD.search(value))),
        "species": simple(lambda value: bool(species_of(value))),
    },
    filters={
        "strip": str.strip,
        "capitalize": str.capitalize,
        "place": lambda value: getattr(RULES.place.first(value), "text", ""),
        "place_first": lambda value: getattr(RULES.place_first.first(value), "text", ""),
        "article": lambda value: rewritten(value, _A_OR_AN),
        "job_head": lambda value: RE._JOB_TAIL.split(value)[0],
        "vehicle": lambda value: rewritten(value.strip(), _VEHICLE_ARTICLE),
        # "wake up at 7" → "wakes up at 7": the user's habits in the third person
        "verb3": lambda phrase: RE._FIRST_WORD.sub(lambda verb: third_person_verb(verb[0]), phrase, count=1).strip(),
        "word": lambda value: value.strip().lower() + " " if value.strip() else "",
        "spaced": lambda value: " " + value if value else "",
        "not_now": lambda value: RE._NOT_NOW.sub("", value),
        # the reply category a liking of a thing is a preference of, when it is said of answers; else ""
        "pref_category": lambda obj: first_row(_EN_PREF_CATEGORIES, obj, ""),
        "disliking": lambda verb: {"hate": "hates", "dislike": "dislikes"}.get(verb, "does not " + verb.split()[-1]),
        "role_or_partner": lambda role: (
            role.lower() if role and re.fullmatch(EN_ROLE_PATTERN, role, re.I) else "partner"
        ),
        "unit_side": lambda unit: _UNIT_SIDE.get(unit.lower(), "metric"),
        "unit_named": lambda unit: "" if unit.lower() in ("metric", "imperial") else f" ({unit.lower().capitalize()})",
        "code_name": lambda language: _CODE_NAMES.get(language.lower(), language.capitalize()) if language else "",
        "spelling": lambda side: "American" if side.lower() in ("american", "us") else "British",
        "plural": lambda form: form.lower() if form.lower().endswith("s") else form.lower() + "s",
        "tone": lambda style: first_row(_TONES, style, "casual") if style else "",
        "other_tone": lambda style: first_row(_OTHER_TONES, style, "formal") if style else "",
        "length": lambda said: "short" if said.lower() in ("shorter", "briefer") else "detailed",
        "per_day": lambda per: per or "day",
    },
    readers={"cut_down_noun": _cut_down_noun},
    choosers={
        "pref_category": lambda value, context: first_row(_EN_PREF_CATEGORIES, value.strip(), ""),
        "content_or_other": lambda value, context: "content" if RE._EN_CONTENT.match(value.strip()) else "other",
        "job_or_other": lambda value, context: "work" if EN_JOB_WORD.search(value) else "other",
        "kin_or_other": lambda value, context: first_row(_KIN, value, "other"),
    },
)
RULES: Registries = Registries(_DATA, _VOCABULARY, EN_ROLE_PATTERN=EN_ROLE_PATTERN)


def en_clause(text: str, said: str, message: str = "") -> Item | None:
    """A handful of first-person English statements, rewritten about "the user": how to reply, asked or
    stated (units, emoji, tone, jargon, code language, length); a change said as an event, with or
    without "I", unless it is not real (moved to X, got promoted to Y, turned 30, now driving Z); the rest."""
    t = rewritten(text.strip(), _CLAUSE_TIDY)
    context = {"message": message or said}
    return (
        finding(RULES.request, t, said, {"message": ""}, behaviour=True)
        or (None if is_unreal(t) else finding(RULES.change, t, t, context, restate=en_third_person))
        or finding(RULES.clause, t, said, context, restate=en_third_person)
    )


# whatever else the user says of themself, restated as said
_CONTRACTIONS: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows("_CONTRACTIONS", re.IGNORECASE)
_EN_CATEGORY_WORDS: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows(
    "_EN_CATEGORY_WORDS", re.IGNORECASE, EN_ROLE_PATTERN=EN_ROLE_PATTERN
)


#: the user's verb in the third person: "am" is "is", past tenses and modals stay as said
_SAID_VERBS = _DATA.compiled_rows("_SAID_VERBS", re.IGNORECASE)
_said_verb = functools.partial(third_person_verb, first=_SAID_VERBS)
_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = _DATA.compiled_rows("_PRONOUNS", re.IGNORECASE)


def en_third_person(text: str) -> str:
    """'i fix bikes for my job' → 'the user fixes bikes for the user's job'."""
    t = rewritten(text.replace("’", "'"), _CONTRACTIONS)
    # whole words only: not the I of "E-R-I-N" or "I-95", nor "i" inside a word
    t = RE._I_VERB.sub(lambda m: f"the user {m.group('adv')}{_said_verb(m.group('verb'))}", t)
    t = rewritten(t, _PRONOUNS)
    # "I'm 41 and teach math": the second verb is the user's too
    if RE._THE_USER.match(t):
        first, comma, rest = t.partition(",")
        t = RE._COORDINATED.sub(lambda m: _said_verb(m.group("verb")), first, count=1) + comma + rest
    return t[:1].upper() + t[1:]


#: the spec's fact category for a statement no slot rule recognised: the first row of words it holds
en_category = functools.partial(first_row, _EN_CATEGORY_WORDS, otherwise="other")


def clean_en(text: str) -> str:
    text = RE._EN_OPENERS.sub("", RE._SPACES.sub(" ", text.strip()))
    return text.strip(" .!,;")


@named_rule("rules_en.generic")
def generic_en(said: str) -> Item | None:
    """A first-person English statement restated about "the user"."""
    text = clean_en(said)
    if not RE._FIRST_PERSON.search(text):
        return None
    third = en_third_person(text)
    if RE._NOTHING_SAID.fullmatch(third):
        return None  # "no I don't", "me too": nothing said on its own
    confidence = HEDGED_CONFIDENCE if RE._EN_HEDGES.search(text) else GENERIC_CONFIDENCE
    return Item("fact", third, en_category(text), confidence, generic=True)


def is_en_fragment(said: str) -> bool:
    """A piece with no subject of its own ("two cats and a parrot")."""
    text = clean_en(said)
    return bool(text) and not RE._OWN_SUBJECT.match(text)
