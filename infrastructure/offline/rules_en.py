"""English rules: first-person statements rewritten about "the user".

A few slot rules (where the user lives, works, their name, age, relatives)
give canonical texts the judge can compare ("The user lives in Paris"); any
other first-person statement is restated as said by ``generic_en``
("i teach piano for a living" → "The user teaches piano for a living").
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.changes import is_unreal
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import (
    GENERIC_CONFIDENCE,
    HEDGED_CONFIDENCE,
    Item,
    fact_item,
    named_rule,
    preference_item,
)
from factledger.infrastructure.offline.slots import EN_JOB_WORD, EN_ROLE_PATTERN, species_of

_DATA = rules("rules_en")

# ==========================================================================
# English (minimal)
# ==========================================================================

_EN_STYLE = _DATA.regex("_EN_STYLE", re.IGNORECASE)
_EN_FORMAT = _DATA.regex("_EN_FORMAT", re.IGNORECASE)
_EN_LANGUAGE = _DATA.regex("_EN_LANGUAGE", re.IGNORECASE)
_EN_TIME = _DATA.regex("_EN_TIME", re.IGNORECASE)
_EN_CONTENT = _DATA.regex("_EN_CONTENT", re.IGNORECASE)
_EN_JOB = EN_JOB_WORD


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


def _en_place_in(value: str) -> str | None:
    """'our new place in Portland last week' → Portland: the place named after "in"."""
    m = re.search(r"\bin (?P<p>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", value)
    return m.group("p") if m else None


_EN_ABOUT_ANSWERS = _DATA.regex("_EN_ABOUT_ANSWERS", re.IGNORECASE)


def _en_pref_category(obj: str) -> str | None:
    """The reply category a liking of ``obj`` is a preference of, when it is said of answers; else None."""
    if _EN_LANGUAGE.search(obj) and (_EN_ABOUT_ANSWERS.search(obj) or re.search(r"\bjargon\b", obj, re.I)):
        return "language"
    if _EN_FORMAT.search(obj):
        return "format"
    if _EN_STYLE.search(obj) and _EN_ABOUT_ANSWERS.search(obj):
        return "communication_style"
    if _EN_TIME.search(obj):
        return "time"
    return None


_SUBJ = _DATA.text("_SUBJ")
_EN_ADV = _DATA.text("_EN_ADV")
_NATURAL_LANGUAGES = _DATA.text("_NATURAL_LANGUAGES")
_LANGUAGE_NAMES = _DATA.text("_LANGUAGE_NAMES")


def _article(word: str) -> str:
    return "an" if re.match(r"[aeiou]", word, re.IGNORECASE) else "a"


@named_rule("rules_en.request")
def _en_request_preference(t: str, said: str) -> Item | None:
    """How to reply, asked or stated: units, emoji, tone, jargon, code language, length."""
    m = re.search(
        r"\b(?:use|using|switch(?:ing)? to|go with|stick (?:to|with)|prefer|give me|in|with) (?:the )?"
        r"(?P<u>metric|imperial|celsius|fahrenheit|kilometers|kilometres|miles|kilograms|kilos|pounds)\b",
        t,
        re.IGNORECASE,
    )
    if m:
        unit = m.group("u").lower()
        side = "imperial" if unit in ("imperial", "fahrenheit", "miles", "pounds") else "metric"
        named = "" if unit == side else f" ({unit.capitalize()})"
        return preference_item(f"Prefers {side} units{named}", "format", said, behaviour=True)
    m = re.search(
        r"\b(?:code|examples?|snippets?|scripts?|samples?)\b[^.]*?\bin (?P<l>" + _LANGUAGE_NAMES + r")\b"
        r"|\b(?:use|write|switch(?:ing)? to|show(?: me)?|give me) (?P<l2>"
        + _LANGUAGE_NAMES
        + r")(?: for| in)? (?:the |your )?"
        r"(?:code|examples?|snippets?|samples?)\b",
        t,
        re.IGNORECASE,
    )
    if m:
        language = m.group("l") or m.group("l2")
        name = {"golang": "Go", "javascript": "JavaScript", "typescript": "TypeScript", "php": "PHP", "sql": "SQL"}.get(
            language.lower(), language[:1].upper() + language[1:].lower()
        )
        return preference_item(f"Prefers code examples in {name}", "tool", said, behaviour=True)
    m = re.search(
        r"\b(?:use|write in|prefer|switch(?:ing)? to|stick to) (?P<v>american|british|us|uk)(?: english)?(?: spelling)?\b",
        t,
        re.IGNORECASE,
    )
    if m:
        side = "American" if m.group("v").lower() in ("american", "us") else "British"
        return preference_item(f"Prefers {side} English spelling", "language", said, behaviour=True)
    m = re.search(
        r"\b(?:reply|answer|respond|write|talk|speak|explain(?: (?:things|stuff|it|everything))?|chat|text)(?: to)?(?: me)? in (?P<l>"
        + _NATURAL_LANGUAGES
        + r")\b"
        r"|\bswitch(?:ing)? (?:back )?to (?P<l2>" + _NATURAL_LANGUAGES + r")\b"
        # "English is fine from now on", "Spanish only, please", "back to French going forward"
        r"|^(?:(?:ok|okay|actually|so|well|but)[, ]+)*(?:(?:just|plain|back to) )?(?P<l3>" + _NATURAL_LANGUAGES + r")"
        r" (?:is fine|is ok(?:ay)?|works|only|please|from now on|going forward|again)\b",
        t,
        re.IGNORECASE,
    )
    if m:
        language = (m.group("l") or m.group("l2") or m.group("l3")).capitalize()
        return preference_item(f"Prefers replies in {language}", "language", said, behaviour=True)
    if re.search(
        r"\bparagraphs? (?:read|work|are|is) better\b|\bno more (?:lists|bullets|bullet points|tables)\b"
        r"|\b(?:use|prefer|in|write(?: in)?|give me|switch(?:ing)? to|rather have|back to) (?:full |proper |whole |normal |regular |plain )?paragraphs\b|\bprose\b"
        # "paragraphs please", "full sentences", "drop the bullets", "bullets feel choppy": prose asked for
        r"|\bparagraphs,? please\b|\bwrite (?:it )?normally\b"
        r"|\b(?:flowing|normal) text,? (?:please|instead)\b|\b(?:want|prefer|give me|just) (?:flowing|normal|plain) text\b"
        r"|\b(?:full|complete) sentences,? (?:please|instead|from now on|going forward)\b"
        r"|(?:^|[,;] ?)(?:in )?(?:full|complete) sentences(?: please)?\s*[.!]*$"
        r"|\b(?:stop|skip|drop|lose|ditch|no more|enough with|quit) (?:with |using )?(?:the )?(?:bullet(?:ed)?[- ]?points?|bullets|lists)\b"
        r"|\b(?:bullets|bullet points|lists) (?:are|feel|look|seem|get)\b[^.]{0,20}\b(?:annoying|choppy|robotic|too much|hard to read|weird|odd|broken|messy)",
        t,
        re.IGNORECASE,
    ):
        return preference_item("Prefers paragraphs", "format", said, behaviour=True)
    m = re.search(
        r"\b(?:use|prefer|in|with|give me|answer (?:me )?with|as|switch(?:ing)? to|rather have) (?:some |short )?"
        r"(?P<f>bullet(?:ed)?[- ]points?|bullets|(?:numbered |bulleted )?lists?|tables?)\b",
        t,
        re.IGNORECASE,
    )
    if (
        m
        and re.search(r"\b(?:answers?|answer me|repl(?:y|ies)|respon(?:d|ses?)|explanations?|format)\b", t, re.I)
        and not re.search(r"\b(?:no|not|don't|never|without|stop)\b[^.]{0,20}?\b(?:bullet|lists?|tables?)", t, re.I)
    ):
        # in the user's words: "bullet points", "numbered lists", "tables"
        form = m.group("f").lower()
        return preference_item(f"Prefers {form if form.endswith('s') else form + 's'}", "format", said, behaviour=True)
    if re.search(
        r"\b(?:no|without|skip the|drop the|stop (?:using|with)(?: the)?|fewer|less|lose the) (?:more )?emojis?\b|\bplain[- ]text\b",
        t,
        re.IGNORECASE,
    ):
        return preference_item("Prefers plain-text replies", "format", said, behaviour=True)
    if re.search(
        r"\b(?:use|add|more|with|include|love|like|throw in) (?:some |more |lots of |a few )?emojis?\b",
        t,
        re.IGNORECASE,
    ):
        return preference_item("Prefers replies with emoji", "format", said, behaviour=True)
    if re.search(
        r"\b(?:no|avoid|skip|without|less|fewer|drop the|cut the) (?:\w+ )?jargon\b|\bexplain (?:it |things )?like i'?m (?:five|5|a beginner)\b"
        r"|\beli5\b|\b(?:use|with|more|give me) (?:simple words|plain (?:english|language)|analogies|simple terms)\b"
        r"|\bexplain (?:it |things |stuff |everything )?(?:to me )?like i'?m (?:five|5|a (?:kid|child|beginner))\b",
        t,
        re.IGNORECASE,
    ):
        return preference_item("Prefers plain explanations with analogies", "language", said, behaviour=True)
    if re.search(
        r"\b(?:technical terms?|jargon) (?:is|are) (?:fine|ok|okay|welcome)\b|\b(?:go|get|be) (?:more )?technical\b"
        r"|\buse (?:the )?(?:technical|proper) terms?\b|\byou can use jargon\b",
        t,
        re.IGNORECASE,
    ):
        return preference_item("Prefers technical explanations with proper terms", "language", said, behaviour=True)
    m = re.search(
        r"\b(?:be|keep (?:it|things)|talk|sound|stay|write|reply|answer)(?: to me)? (?:more |a bit |a little |way )?(?:more )?"
        r"(?P<s>casual|formal|relaxed|professional|chatty|informal)\b|\blike a friend\b"
        r"|\b(?:talk|speak|write|reply|answer|chat)(?: to me| with me)? (?P<s2>casually|formally|professionally)\b"
        # "Answer me in a formal tone"
        r"|\b(?:talk|speak|write|reply|answer|respond)(?: to me| with me| me)? in an? (?:more )?"
        r"(?P<s3>casual|formal|relaxed|professional|friendly|informal) (?:tone|way|voice|manner|register)\b",
        t,
        re.IGNORECASE,
    )
    if m:
        style = (m.group("s") or m.group("s2") or m.group("s3") or "casual").lower()
        tone = "formal" if style.startswith(("formal", "professional")) else "casual"
        if re.search(
            r"\b(?:no need to|don't|do not|not|never|needn't|stop being)\s+(?:\w+\s+)?$", t[: m.start()], re.I
        ):
            tone = "casual" if tone == "formal" else "formal"  # "no need to be formal"
        return preference_item(f"Prefers a {tone} tone", "communication_style", said, behaviour=True)
    m = re.search(
        r"\b(?P<s>shorter|briefer|longer|more detailed|more detail|in more depth|in depth)\b(?: answers| replies| responses)?"
        r"(?: please| from now on| going forward)*$|(?:^|[,;] ?)(?:please )?(?:go into|give me) (?:more |the )?(?P<d>detail(?:ed (?:version|answers?|explanations?))?)s?\b",
        t,
        re.IGNORECASE,
    )
    if m:
        short = (m.group("s") or "").lower() in ("shorter", "briefer")
        return preference_item(
            f"Prefers {'short' if short else 'detailed'} answers", "communication_style", said, behaviour=True
        )
    return None


def _en_vehicle(value: str) -> str:
    value = value.strip()
    if re.match(r"^(?:an?|the) ", value, re.IGNORECASE):
        return value  # the article as said: "an SUV"
    value = re.sub(r"^my ", "", value, flags=re.IGNORECASE)
    return f"{_article(value)} {value}"


@named_rule("rules_en.change")
def _en_change(t: str, message: str) -> Item | None:
    """Changes said as events, with or without "I": moved to X, got promoted to Y, turned 30, now driving Z."""
    if is_unreal(t):
        return None
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:moved|relocated|moved back|moved out)(?: back)? (?:to|into) (?P<v>.+)$", t, re.IGNORECASE
    ) or re.match(
        r"^(?:i|we)\b[^.]*?\b(?:and|then|finally) (?:just )?(?:moved|relocated)(?: back)? (?:to|into) (?P<v>.+)$",
        t,
        re.IGNORECASE,
    )
    if m:
        place = _en_place(m.group("v")) or _en_place_in(m.group("v"))
        if place:
            return fact_item(f"The user lives in {place}", "location")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:got|was|been|am|i'm|i am) (?P<verb>promoted|bumped up|moved up) to (?:an? |the )?(?P<v>[\w' -]+)$",
        t,
        re.IGNORECASE,
    )
    if m:
        job = m.group("v").strip()
        if _EN_JOB.search(job):
            return fact_item(f"The user is {_article(job)} {job}", "work")
        return fact_item(f"The user was {m.group('verb').lower()} to {job}", "work")
    m = re.match(
        r"^(?:i'm|i am|im) (?:now|currently) (?P<v>(?:an? |the )?[\w' -]+?(?: (?:at|in|for|with) .+)?)$",
        t,
        re.IGNORECASE,
    )
    if m and _EN_JOB.search(re.split(r" (?:at|in|for|with) ", m.group("v"))[0]):
        return fact_item(f"The user is now {m.group('v')}", "work")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:became|started as|started working as|am working as|now work as|got (?:a )?(?:new )?job as) (?:an? )?(?P<v>[\w' -]+)$",
        t,
        re.IGNORECASE,
    )
    if m:
        job = m.group("v").strip()
        return fact_item(f"The user works as {_article(job)} {job}", "work")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:got|landed|started|accepted|took) (?:a |my )?(?:new )?job (?:at|with) (?P<v>.+)$"
        # a name, in capitals whatever the flag: "joined a fire-fighting brigade" names no employer
        rf"|^{_SUBJ}{_EN_ADV}joined (?P<v2>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*)*)",
        t,
        re.IGNORECASE,
    )
    if m:
        return fact_item(f"The user works at {m.group('v') or m.group('v2')}", "work")
    # "started at Fable Labs this week", "began with Norvik on Monday": a new employer, said by its name
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:started|began|start|am starting|started working|began working) (?:at|with|for) "
        r"(?P<v>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*)*)",
        t,
        re.IGNORECASE,
    )
    if m and not re.search(r"\b(?:University|College|School|Academy|Institute)\b|^(?:I|The)$", m.group("v")):
        return fact_item(f"The user works at {m.group('v')}", "work")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:quit|left) (?:my job at |the job at )?(?:the |my )?(?P<old>[\w' -]+?),? and (?:then )?"
        r"(?:started|began|am now|now work|joined|got a job)(?: working)? (?:at|with|for)? ?(?:an? |the )?(?P<new>[\w' &-]+)$",
        t,
        re.IGNORECASE,
    )
    if m and re.match(r"\w+ing (?:for|at|with|as)\b", m.group("new")):
        # "Quit that and started driving for DoorDash": the work is the doing, not a place
        return fact_item(f"The user quit their job and is now {m.group('new')}", "work")
    if m:
        return fact_item(f"The user works at {_article(m.group('new'))} {m.group('new')}", "work")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?P<verb>gave up(?: on)?|stopped|dropped|abandoned|quit) "
        r"(?P<v>(?:the|my|on) [\w' -]+|[\w' -]+ing\b.*|[A-Z][\w'-]+(?: lessons| classes)?)$",
        t,
        re.IGNORECASE,
    )
    if m:
        return fact_item(en_third_person(f"The user {m.group('verb').lower()} {m.group('v')}"), "other")
    m = re.match(
        r"^(?:(?:sadly|unfortunately),? )?(?:my|our) (?P<pet>[\w -]+?) (?:passed away|died|ran away|got lost|was rehomed)\b",
        t,
        re.IGNORECASE,
    )
    if m and species_of(m.group("pet")):
        return fact_item(f"The user no longer has a {species_of(m.group('pet'))}", "other")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:adopted|rescued|got|brought home) (?P<v>(?:an?|another|two|three) [\w -]+?)(?: (?:yesterday|today|last \w+|this \w+))?$",
        t,
        re.IGNORECASE,
    )
    if m and species_of(m.group("v")):
        return fact_item(f"The user has {m.group('v')}", "other")
    m = re.match(rf"^{_SUBJ}{_EN_ADV}graduated(?P<rest> from .+)?$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user graduated{m.group('rest') or ''}", "work")
    m = re.match(rf"^{_SUBJ}{_EN_ADV}(?:quit|left) (?:my|the) job\b", t, re.IGNORECASE)
    if m:
        return fact_item("The user quit the user's job", "work")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:got|was|been) (?:laid off|fired|let go)\b|^{_SUBJ}{_EN_ADV}lost my job\b",
        t,
        re.IGNORECASE,
    )
    if m:
        return fact_item("The user is unemployed", "work")
    m = re.match(rf"^{_SUBJ}{_EN_ADV}(?:retired|am retired|i'm retired)\b", t, re.IGNORECASE)
    if m:
        return fact_item("The user is retired", "work")
    m = re.match(
        rf"^{_SUBJ}(?P<adv>(?:just |recently |finally |officially )*)turned (?P<v>\d{{1,3}})\b", t, re.IGNORECASE
    )
    if m:
        return fact_item(f"The user {m.group('adv').lower()}turned {m.group('v')}", "personal_info")
    m = re.match(
        rf"^my (?P<role>{EN_ROLE_PATTERN}) (?P<adv>(?:just |finally |officially )*)(?P<verb>turned|is now) (?P<v>\d{{1,3}})\b",
        t,
        re.IGNORECASE,
    )
    if m:
        said = f"{m.group('adv').lower()}{m.group('verb').lower()}"
        return fact_item(f"The user's {m.group('role').lower()} {said} {m.group('v')}", "relationship")
    m = re.match(rf"^{_SUBJ}{_EN_ADV}got (?P<v>married|engaged|divorced)\b", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user is {m.group('v').lower()}", "relationship")
    m = re.match(
        rf"^(?:i|we|(?P<n>[A-Z][\w'-]*) and i|i and (?P<n2>[A-Z][\w'-]*)) (?:just |finally |officially )?"
        rf"(?:broke up|split up|separated|called it quits|are done|ended things)\b(?: with (?:my )?(?P<r>{EN_ROLE_PATTERN}|\w+))?",
        t,
        re.IGNORECASE,
    )
    if m:
        role = (
            m.group("r") if m.group("r") and re.fullmatch(EN_ROLE_PATTERN, m.group("r"), re.IGNORECASE) else "partner"
        )
        return fact_item(f"The user broke up with the user's {role.lower()}", "relationship")
    m = re.match(
        r"^(?:(?:i'm|i am|im) (?:now )?(?:seeing|dating|going out with|with)|(?:now )?(?:seeing|dating)) "
        r"(?:someone|a (?:guy|girl|man|woman))?\s*(?:named |called )?(?P<n>[A-Z][\w'-]*)",
        t,
    )
    # "now seeing someone named Theo" without "I'm" is the user's only when no one else is spoken of
    if m and not re.match(r"(?i:i'm|i am|im)\b", t):
        someone = rf"\b(?:{EN_ROLE_PATTERN}|he|she|they|friend|roommate|coworker|colleague)s?\b"
        if re.search(someone, message, re.IGNORECASE):
            m = None
    if m:
        return fact_item(f"The user is dating {m.group('n')}", "relationship")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:cut (?:down|back)|went down|am down|i'm down)(?: to (?P<n>[\w.]+))?(?: (?:a|per) (?P<per>day|week))?",
        t,
        re.IGNORECASE,
    )
    if m:
        thing = re.search(r"coffee|cigarette|smok|beer|wine|alcohol|drink|soda|sugar|vap", message, re.IGNORECASE)
        if thing and m.group("n"):
            noun = {"smok": "cigarettes", "cigarette": "cigarettes", "vap": "vapes", "drink": "drinks"}.get(
                thing.group(0).lower(), thing.group(0).lower()
            )
            return fact_item(f"The user cut down to {m.group('n')} {noun} a {m.group('per') or 'day'}", "habit")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:quit|gave up|stopped) (?P<v>coffee|caffeine|smoking|cigarettes|drinking|alcohol|booze|sugar|soda|vaping|meat)\b(?P<rest>.*)$",
        t,
        re.IGNORECASE,
    )
    if m:
        return fact_item(f"The user quit {m.group('v').lower()}{m.group('rest')}", "habit")
    m = re.match(r"^i (?:now |currently )?drive (?P<v>.+)$", t, re.IGNORECASE) or re.match(
        rf"^{_EN_ADV}(?:now |currently )?driving (?P<v>.+)$", t, re.IGNORECASE
    )
    if m:
        return fact_item(f"The user drives {_en_vehicle(m.group('v'))}", "other")
    m = re.match(
        rf"^{_SUBJ}{_EN_ADV}(?:sold|traded(?: in)?|got rid of|wrecked|totaled) (?:it|that|my (?:old )?\w+|the (?:old )?\w+)(?: in)?"
        r"(?:,? and|,| &)? (?:then )?(?:got|bought|picked up|switched to|replaced it with|upgraded to) (?:an? |the )?(?P<v>.+)$",
        t,
        re.IGNORECASE,
    )
    if m and re.search(r"\bcar\b|\bdrive|\bdriving|\btruck\b|\bsuv\b", message + " " + t, re.IGNORECASE):
        return fact_item(f"The user drives {_en_vehicle(m.group('v'))}", "other")
    return None


@named_rule("rules_en.clause")
def _en_clause(text: str, said: str, message: str = "") -> Item | None:
    """A handful of first-person English statements, rewritten about "the user"."""
    t = re.sub(r"\s+", " ", text.strip())
    t = re.sub(r"[\s.!~]*(?:[^\w\s.,'’&+#-]\s*)*$", "", t)  # trailing punctuation and emoji
    t = re.sub(
        r"^(?:(?:well|also|oh|btw|by the way|actually|so|and|but|big news|good news|update|guess what|now|and now|so now|anyway),?\s+)+",
        "",
        t,
        flags=re.IGNORECASE,
    )
    t = t.replace("’", "'")
    I_AM = r"(?:i'm|i am|im)"

    item = _en_request_preference(t, said) or _en_change(t, message or said)
    if item is not None:
        return item

    m = re.match(
        rf"^(?:i (?:now |currently )?live in|{I_AM} (?:now )?(?:living|based) in|i(?:'ve| have)? (?:just )?moved to) (?P<v>.+)$",
        t,
        re.IGNORECASE,
    )
    if m and _en_place(m.group("v")):
        return fact_item(f"The user lives in {_en_place(m.group('v'))}", "location")
    # "call me Dr. Patel, please", "just call me Anika": a title goes with the name, a please does not
    m = re.match(
        rf"^(?:(?:please|just|now)[, ]+)*(?:my name is|my name's|{I_AM} called|call me) "
        r"(?P<v>(?:(?:Dr|Mr|Mrs|Ms|Prof)\.? )?(?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z])[\w'-]*)*)(?:,? (?:please|thanks|pls))?$",
        t,
        re.IGNORECASE,
    )
    if m:
        return fact_item(f"The user's name is {m.group('v')}", "personal_info")
    m = re.match(rf"^{I_AM} (?:now )?(?P<v>\d{{1,3}})(?: years old| years of age| yo)?(?: now)?$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user is {m.group('v')} years old", "personal_info")
    m = re.match(r"^i (?:now |currently )?work (?P<prep>at|for) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(r"^i (?:now |currently )?work (?P<prep>in|as) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        place = _en_place(m.group("v")) if m.group("prep").lower() == "in" else None
        if place:
            return fact_item(f"The user works in {place}", "location")
        return fact_item(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN})(?:'s name is| is called| is named) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user's {m.group('role').lower()}'s name is {m.group('v')}", "relationship")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN}) (?P<rest>(?:is|works|lives|likes|has) .+)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user's {m.group('role').lower()} {m.group('rest')}", "relationship")
    m = re.match(rf"^{I_AM} (?:now )?the (?P<v>[\w' -]+?)(?P<tail> (?:at|in|for|of|with) .+)?$", t, re.IGNORECASE)
    if m and _EN_JOB.search(m.group("v")):
        return fact_item(f"The user is the {m.group('v')}{m.group('tail') or ''}", "work")
    m = re.match(rf"^{I_AM} (?P<art>an?) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        job = "work" if _EN_JOB.search(m.group("v")) else "other"
        return fact_item(f"The user is {m.group('art').lower()} {m.group('v')}", job)
    m = re.match(r"^i (?:don't|do not) (?P<v>eat|drink|smoke)\b ?(?P<x>.*)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user does not {m.group('v').lower()} {m.group('x')}".strip(), "habit")
    m = re.match(r"^i (?:don't|do not) (?:actually |really |even )?have (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user does not have {m.group('v')}", "other")
    m = re.match(r"^i (?:have|own|have got|'ve got) (?P<v>.+)$", t, re.IGNORECASE)
    if m and not re.match(r"^(?:a question|to|an idea|no idea|been)\b", m.group("v"), re.IGNORECASE):
        kind = (
            "relationship"
            if re.search(rf"\b(?:{EN_ROLE_PATTERN})s?\b|\bchildren\b|\bkids\b", m.group("v"), re.IGNORECASE)
            else "other"
        )
        return fact_item(f"The user has {m.group('v')}", kind)
    m = re.match(r"^i (?P<adv>always|usually|often|normally|never) (?P<v>.+)$", t, re.IGNORECASE)
    if m:
        return fact_item(f"The user {m.group('adv').lower()} {_en_verb3(m.group('v'))}", "habit")

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
            return preference_item(f"Prefers {obj}", category or "other", said)
        if m.group("verb").lower() == "want":
            return None
        if _EN_CONTENT.match(obj):
            return preference_item(f"Likes {obj}", "content", said)
        adverb = (m.group("adv") or "").strip().lower()
        return fact_item(
            f"The user {adverb + ' ' if adverb else ''}{_en_verb3(m.group('verb').lower())} {obj}", "preference"
        )
    m = re.match(r"^i (?P<verb>(?:don't|do not) (?:like|enjoy|want)|hate|dislike) (?P<x>.+)$", t, re.IGNORECASE)
    if m:
        obj = m.group("x").strip()
        category = _en_pref_category(obj) or ("content" if _EN_CONTENT.match(obj) and "want" not in t.lower() else None)
        if category:
            return preference_item(f"Dislikes {re.sub(r' (?:any ?more|now)$', '', obj)}", category, said)
        verb = m.group("verb").lower()
        said_verb = {"hate": "hates", "dislike": "dislikes"}.get(verb, "does not " + verb.split()[-1])
        return fact_item(f"The user {said_verb} {obj}", "preference")
    m = re.match(
        r"^(?:please )?(?:reply|answer|respond|write|talk)(?: to me)? in (?P<l>english|chinese|mandarin)$",
        t,
        re.IGNORECASE,
    )
    if m:
        return preference_item(f"Prefers replies in {m.group('l').capitalize()}", "language", said)
    m = re.match(
        r"^(?:please )?(?:keep (?:it|answers|replies)|be) (?P<s>short|brief|concise|detailed|direct)$", t, re.IGNORECASE
    )
    if m:
        return preference_item(f"Prefers {m.group('s').lower()} answers", "communication_style", said)
    return None


# ==========================================================================
# English: whatever else the user says of themself, restated as said
# ==========================================================================

_ADVERBS = _DATA.text("_ADVERBS")
_MODALS = set(_DATA.words("_MODALS"))
_IRREGULAR_PAST = frozenset(_DATA.words("_IRREGULAR_PAST"))
_CONTRACTIONS = _DATA.rows("_CONTRACTIONS")
_EN_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (category, re.compile(words, re.IGNORECASE))
    for category, words in _DATA.rows("_EN_CATEGORY_WORDS", EN_ROLE_PATTERN=EN_ROLE_PATTERN)
)
_EN_HEDGES = _DATA.regex("_EN_HEDGES", re.IGNORECASE)
_EN_OPENERS = _DATA.regex("_EN_OPENERS", re.IGNORECASE)


def _third_person_verb(verb: str) -> str:
    """'race' → 'races', 'have' → 'has', past tenses and modals unchanged."""
    low = verb.lower()
    if low in _MODALS or low in _IRREGULAR_PAST or low.endswith("ed") or low in ("am", "is"):
        return "is" if low == "am" else verb
    return _en_verb3(verb)


_I = _DATA.text("_I")


def en_third_person(text: str) -> str:
    """'i fix bikes for my job' → 'the user fixes bikes for the user's job'."""
    t = text.replace("’", "'")
    for pattern, replacement in _CONTRACTIONS:
        t = re.sub(pattern, replacement, t, flags=re.IGNORECASE)
    # whole words only: not the I of "E-R-I-N" or "I-95", nor "i" inside a word
    t = re.sub(
        rf"{_I} (?P<adv>(?:{_ADVERBS} )*)(?P<verb>[a-z]+)\b",
        lambda m: f"the user {m.group('adv')}{_third_person_verb(m.group('verb'))}",
        t,
        flags=re.IGNORECASE,
    )
    t = re.sub(
        r"(?:\bthe user|" + _I + r") (?P<adv>(?:\w+ly |" + _ADVERBS + r" )*)am\b",
        r"the user \g<adv>is",
        t,
        flags=re.IGNORECASE,
    )
    t = re.sub(_I, "the user", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<![\w'-])my(?![\w'-])", "the user's", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<![\w'-])mine(?![\w'-])", "the user's", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<![\w'-])myself(?![\w'-])", "themself", t, flags=re.IGNORECASE)
    t = re.sub(r"(?<![\w'-])me(?![\w'-])", "the user", t, flags=re.IGNORECASE)
    t = re.sub(r"\s+([,.;:!?])", r"\1", t)
    # "I'm 41 and teach math": the second verb is the user's too
    if re.match(r"the user\b", t, re.IGNORECASE):
        t = (
            re.sub(
                r"(?<=\band )(?P<verb>" + _COORDINATED_VERBS + r")\b",
                lambda m: _third_person_verb(m.group("verb")),
                t.split(",")[0],
                count=1,
                flags=re.IGNORECASE,
            )
            + t[len(t.split(",")[0]) :]
        )
    return t[:1].upper() + t[1:]


_COORDINATED_VERBS = _DATA.text("_COORDINATED_VERBS")


def en_category(text: str) -> str:
    for category, words in _EN_CATEGORY_WORDS:
        if words.search(text):
            return category
    return "other"


def clean_en(text: str) -> str:
    text = _EN_OPENERS.sub("", re.sub(r"\s+", " ", text.strip()))
    return text.strip(" .!,;")


@named_rule("rules_en.generic")
def generic_en(said: str) -> Item | None:
    """A first-person English statement restated about "the user"."""
    text = clean_en(said)
    if not re.search(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b|\bi (?:m|ve|d|ll)\b", text, re.IGNORECASE):
        return None
    third = en_third_person(text)
    if re.fullmatch(
        r"(?:(?:no|nah|yes|yeah|well|oh),? )*the user(?: (?:does|do|is|am|did|has|have|was|will|would|can|could))?(?: not)?(?: either| too)?",
        third,
        re.IGNORECASE,
    ):
        return None  # "no I don't", "me too": nothing said on its own
    confidence = HEDGED_CONFIDENCE if _EN_HEDGES.search(text) else GENERIC_CONFIDENCE
    return Item("fact", third, en_category(text), confidence, generic=True)


def is_en_fragment(said: str) -> bool:
    """A piece with no subject of its own ("two cats and a parrot")."""
    text = clean_en(said)
    return bool(text) and not re.match(
        r"^(?:you|your|he|she|it|it's|they|we|this|that|there|what|who)\b", text, re.IGNORECASE
    )
