"""English rules: first-person statements rewritten about "the user".

A few slot rules (where the user lives, works, their name, age, relatives)
give canonical texts the judge can compare ("The user lives in Paris"); any
other first-person statement is restated as said by ``generic_en``
("i teach piano for a living" → "The user teaches piano for a living").
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.rules_common import (
    GENERIC_CONFIDENCE,
    HEDGED_CONFIDENCE,
    _fact,
    _Item,
    _pref,
)
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN

# ==========================================================================
# English (minimal)
# ==========================================================================

_EN_STYLE = re.compile(
    r"\b(?:short|shorter|brief|concise|succinct|detailed|thorough|direct|to the point|simple|formal|casual)\b",
    re.IGNORECASE,
)
_EN_FORMAT = re.compile(
    r"\b(?:bullet(?: point)?s?|lists?|tables?|code(?: blocks?)?|markdown|paragraphs?)\b", re.IGNORECASE
)
_EN_LANGUAGE = re.compile(r"\b(?:english|chinese|mandarin|jargon)\b", re.IGNORECASE)
_EN_TIME = re.compile(r"\b(?:mornings?|evenings?|nights?|weekends?|after \d+|before \d+)\b", re.IGNORECASE)
_EN_CONTENT = re.compile(
    r"^(?:reading|watching|listening to|learning|talking about|articles|books|news|videos|stories)\b", re.IGNORECASE
)
_EN_JOB = re.compile(
    r"(?:er|or|ist|ian|ant|ent|ee|manager|engineer|student|teacher|doctor|nurse|lawyer|chef|scientist)$", re.IGNORECASE
)


def _en_verb3(phrase: str) -> str:
    """'wake up at 7' → 'wakes up at 7': the user's habits in the third person."""
    first, _, tail = phrase.partition(" ")
    low = first.lower()
    if low == "have":
        verb = "has"
    elif low == "do":
        verb = "does"
    elif re.search(r"(?:s|sh|ch|x|z|o)$", low):
        verb = first + "es"
    elif re.search(r"[^aeiou]y$", low):
        verb = first[:-1] + "ies"
    else:
        verb = first + "s"
    return f"{verb} {tail}".strip()


def _en_place(value: str) -> str | None:
    m = re.match(r"^(?P<p>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", value.strip())
    return m.group("p") if m else None


def _en_pref_category(obj: str) -> str | None:
    if _EN_LANGUAGE.search(obj):
        return "language"
    if _EN_FORMAT.search(obj):
        return "format"
    if _EN_STYLE.search(obj):
        return "communication_style"
    if _EN_TIME.search(obj):
        return "time"
    return None


def _en_clause(text: str, said: str) -> _Item | None:
    """A handful of first-person English statements, rewritten about "the user"."""
    t = re.sub(r"\s+", " ", text.strip().rstrip(".!"))
    t = re.sub(r"^(?:well|also|oh|btw|by the way|actually|so),?\s+", "", t, flags=re.IGNORECASE)
    t = t.replace("’", "'")
    I_AM = r"(?:i'm|i am|im)"

    m = re.match(
        rf"^(?:i (?:now |currently )?live in|{I_AM} (?:now )?(?:living|based) in|i(?:'ve| have)? (?:just )?moved to) (?P<v>.+)$",
        t,
        re.IGNORECASE,
    )
    if m and _en_place(m.group("v")):
        return _fact(f"The user lives in {_en_place(m.group('v'))}", "location")
    m = re.match(
        rf"^(?:my name is|my name's|{I_AM} called|call me) (?P<v>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)$", t, re.IGNORECASE
    )
    if m:
        return _fact(f"The user's name is {m.group('v')}", "personal_info")
    m = re.match(rf"^{I_AM} (?P<v>\d{{1,3}})(?: years old| years of age| yo)?$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user is {m.group('v')} years old", "personal_info")
    m = re.match(r"^i work (?P<prep>at|for) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(r"^i work (?P<prep>in|as) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        place = _en_place(m.group("v")) if m.group("prep").lower() == "in" else None
        if place:
            return _fact(f"The user works in {place}", "location")
        return _fact(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN})(?:'s name is| is called| is named) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user's {m.group('role').lower()}'s name is {m.group('v')}", "relationship")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN}) (?P<rest>(?:is|works|lives|likes|has) .+)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user's {m.group('role').lower()} {m.group('rest')}", "relationship")
    m = re.match(rf"^{I_AM} (?P<art>an?) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        job = "work" if _EN_JOB.search(m.group("v")) else "other"
        return _fact(f"The user is {m.group('art').lower()} {m.group('v')}", job)
    m = re.match(r"^i (?:don't|do not) (?P<v>eat|drink|smoke)\b ?(?P<x>.*)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user does not {m.group('v').lower()} {m.group('x')}".strip(), "habit")
    m = re.match(r"^i (?:don't|do not) have (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user does not have {m.group('v')}", "other")
    m = re.match(r"^i (?:have|own|have got|'ve got) (?P<v>.+)$", t, re.IGNORECASE)
    if m and not re.match(r"^(?:a question|to|an idea|no idea|been)\b", m.group("v"), re.IGNORECASE):
        kind = (
            "relationship"
            if re.search(rf"\b(?:{EN_ROLE_PATTERN})s?\b|\bchildren\b|\bkids\b", m.group("v"), re.IGNORECASE)
            else "other"
        )
        return _fact(f"The user has {m.group('v')}", kind)
    m = re.match(r"^i (?P<adv>always|usually|often|normally|never) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return _fact(f"The user {m.group('adv').lower()} {_en_verb3(m.group('v'))}", "habit")

    m = re.match(
        r"^i(?P<adv> really| much| strongly| also| just)? (?P<verb>prefer|like|love|enjoy|want)(?P<x> .+)$",
        t,
        re.IGNORECASE,
    )
    if m:
        obj = m.group("x").strip()
        category = _en_pref_category(obj)
        if category or m.group("verb").lower() == "prefer":
            if _EN_CONTENT.match(obj):
                category = category or "content"
            return _pref(f"Prefers {obj}", category or "other", said)
        if m.group("verb").lower() == "want":
            return None
        if _EN_CONTENT.match(obj):
            return _pref(f"Likes {obj}", "content", said)
        adverb = (m.group("adv") or "").strip().lower()
        return _fact(
            f"The user {adverb + ' ' if adverb else ''}{_en_verb3(m.group('verb').lower())} {obj}", "preference"
        )
    m = re.match(r"^i (?P<verb>(?:don't|do not) (?:like|enjoy|want)|hate|dislike) (?P<x>.+)$", t, re.IGNORECASE)
    if m:
        obj = m.group("x").strip()
        category = _en_pref_category(obj)
        if category:
            return _pref(f"Dislikes {obj}", category, said)
        verb = m.group("verb").lower()
        said_verb = {"hate": "hates", "dislike": "dislikes"}.get(verb, "does not " + verb.split()[-1])
        return _fact(f"The user {said_verb} {obj}", "preference")
    m = re.match(
        r"^(?:please )?(?:reply|answer|respond|write|talk)(?: to me)? in (?P<l>english|chinese|mandarin)$",
        t,
        re.IGNORECASE,
    )
    if m:
        return _pref(f"Prefers replies in {m.group('l').capitalize()}", "language", said)
    m = re.match(
        r"^(?:please )?(?:keep (?:it|answers|replies)|be) (?P<s>short|brief|concise|detailed|direct)$", t, re.IGNORECASE
    )
    if m:
        return _pref(f"Prefers {m.group('s').lower()} answers", "communication_style", said)
    return None


# ==========================================================================
# English: whatever else the user says of themself, restated as said
# ==========================================================================

_ADVERBS = r"(?:really|also|just|recently|still|finally|actually|currently|totally|even|only|never|always|usually|often|sometimes|now|once|already|mostly)"
_MODALS = {
    "can",
    "could",
    "should",
    "would",
    "must",
    "might",
    "may",
    "will",
    "shall",
    "cannot",
    "can't",
    "won't",
    "used",
}
_IRREGULAR_PAST = frozenset(
    [
        "was",
        "were",
        "had",
        "did",
        "got",
        "went",
        "made",
        "took",
        "saw",
        "came",
        "found",
        "gave",
        "knew",
        "left",
        "lost",
        "met",
        "ran",
        "said",
        "sold",
        "sent",
        "spent",
        "told",
        "thought",
        "won",
        "wrote",
        "bought",
        "brought",
        "began",
        "became",
        "felt",
        "fell",
        "grew",
        "kept",
        "built",
        "ate",
        "drove",
        "flew",
        "taught",
        "caught",
        "heard",
        "held",
        "paid",
        "sat",
        "slept",
        "stood",
        "swam",
        "understood",
        "wore",
        "broke",
        "chose",
        "forgot",
        "hid",
        "hung",
        "led",
        "lent",
        "let",
        "put",
        "quit",
        "read",
        "rode",
        "rose",
        "sang",
        "set",
        "shot",
        "shut",
        "sang",
        "spoke",
        "stole",
        "struck",
        "swore",
        "threw",
        "woke",
    ]
)
#: contractions as people type them, with or without the apostrophe ("i m", "don t")
_CONTRACTIONS = (
    (r"\bi(?:'m| m)\b", "i am"),
    (r"\bi(?:'ve| ve)\b", "i have"),
    (r"\bi(?:'d| d)\b", "i would"),
    (r"\bi(?:'ll| ll)\b", "i will"),
    (r"\b(do|does|did|is|are|was|were|have|has|could|would|should)(?:n't|n t)\b", r"\1 not"),
    (r"\bcan(?:'t| t)\b", "cannot"),
    (r"\bwon(?:'t| t)\b", "will not"),
)
_EN_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "personal_info",
        re.compile(
            r"\b(?:\d+|years? old|male|female|man|woman|boy|girl|name|named|birthday|born|tall|short|hair|eyes|skin|blind|deaf|diabetic|allergic|health)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "relationship",
        re.compile(
            rf"\b(?:{EN_ROLE_PATTERN})s?\b|\b(?:married|divorced|single|engaged|family|parents|children|kids?|grand\w+|twins?|girlfriends|boyfriends|dating)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "work",
        re.compile(
            r"\b(?:work|works|worked|working|job|jobs|career|business|company|salary|living|volunteer\w*|retired|college|school|university|student|studying|teacher|class|graduat\w+)\b",
            re.IGNORECASE,
        ),
    ),
    (
        "location",
        re.compile(
            r"\b(?:live|lives|living|moved|move|from|grew up|house|home|city|country|town|countryside)\b", re.IGNORECASE
        ),
    ),
    (
        "habit",
        re.compile(
            r"\b(?:always|usually|often|never|every|regularly|daily|sometimes|eat|eats|drink|drinks)\b", re.IGNORECASE
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:like|likes|love|loves|enjoy|enjoys|prefer|prefers|hate|hates|favou?rite|afraid|fan)\b", re.IGNORECASE
        ),
    ),
)
_EN_HEDGES = re.compile(r"\b(?:maybe|probably|perhaps|i think|i guess|kind of|sort of)\b", re.IGNORECASE)
_EN_OPENERS = re.compile(
    r"^(?:(?:hey|hi|hello|well|oh|yeah|yes|so|also|btw|by the way|actually|anyway|haha|lol|wow|um|uh)\b[\s,!.]*)+",
    re.IGNORECASE,
)


def _third_person_verb(verb: str) -> str:
    """'race' → 'races', 'have' → 'has', past tenses and modals unchanged."""
    low = verb.lower()
    if low in _MODALS or low in _IRREGULAR_PAST or low.endswith("ed") or low in ("am", "is"):
        return "is" if low == "am" else verb
    return _en_verb3(verb)


def en_third_person(text: str) -> str:
    """'i fix bikes for my job' → 'the user fixes bikes for the user's job'."""
    t = text.replace("’", "'")
    for pattern, replacement in _CONTRACTIONS:
        t = re.sub(pattern, replacement, t, flags=re.IGNORECASE)
    t = re.sub(
        rf"\bi (?P<adv>(?:{_ADVERBS} )*)(?P<verb>[a-z]+)\b",
        lambda m: f"the user {m.group('adv')}{_third_person_verb(m.group('verb'))}",
        t,
        flags=re.IGNORECASE,
    )
    t = re.sub(
        r"\b(?:the user|i) (?P<adv>(?:\w+ly |" + _ADVERBS + r" )*)am\b", r"the user \g<adv>is", t, flags=re.IGNORECASE
    )
    t = re.sub(r"\bi\b", "the user", t, flags=re.IGNORECASE)
    t = re.sub(r"\bmy\b", "the user's", t, flags=re.IGNORECASE)
    t = re.sub(r"\bmine\b", "the user's", t, flags=re.IGNORECASE)
    t = re.sub(r"\bmyself\b", "themself", t, flags=re.IGNORECASE)
    t = re.sub(r"\bme\b", "the user", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+([,.;:!?])", r"\1", t)
    return t[:1].upper() + t[1:]


def en_category(text: str) -> str:
    for category, words in _EN_CATEGORY_WORDS:
        if words.search(text):
            return category
    return "other"


def clean_en(text: str) -> str:
    text = _EN_OPENERS.sub("", re.sub(r"\s+", " ", text.strip()))
    return text.strip(" .!,;")


def generic_en(said: str) -> _Item | None:
    """A first-person English statement restated about "the user"."""
    text = clean_en(said)
    if not re.search(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b|\bi (?:m|ve|d|ll)\b", text, re.IGNORECASE):
        return None
    third = en_third_person(text)
    confidence = HEDGED_CONFIDENCE if _EN_HEDGES.search(text) else GENERIC_CONFIDENCE
    return _Item("fact", third, en_category(text), confidence, generic=True)


def is_en_fragment(said: str) -> bool:
    """A piece with no subject of its own ("two cats and a parrot")."""
    text = clean_en(said)
    return bool(text) and not re.match(
        r"^(?:you|your|he|she|it|it's|they|we|this|that|there|what|who)\b", text, re.IGNORECASE
    )
