"""What the rule modules share: the finding type, subjects, third-person rewriting.

Package-internal: ``rules_zh_prefs``, ``rules_zh_facts`` and ``rules_en`` build
``_Item``s with these helpers and ``extractor`` assembles them.

Confidence and strength follow the spec's bands: an explicit statement that
fills a known slot is a fact at 0.9, one restated as said 0.8, a hedged one
(可能, 好像, I think) 0.6; an explicit preference 0.8, a strongly worded one
(非常/特别/最/一定…) 0.95, one read from behaviour (a one-off request,
a habit) 0.6.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple, ParamSpec, TypeVar

from factledger.infrastructure.offline.clauses import is_english
from factledger.infrastructure.offline.registry import Context, Registry, Vocabulary, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.slots import ZH_ROLE_PATTERN, rewritten, species_of

_DATA = rules("rules_common")
RE = _DATA.patterns()

FACT_CONFIDENCE = 0.9  # an explicit statement filling a known slot
GENERIC_CONFIDENCE = 0.8  # an explicit statement restated as said (no slot recognised)
HEDGED_CONFIDENCE = 0.6  # "可能", "好像", "I think": said, but not firmly
PREF_STRENGTH = 0.8
STRONG_PREF_STRENGTH = 0.95
INFERRED_PREF_STRENGTH = 0.6  # read from behaviour (a one-off request, a habit), not stated as a liking

CJK = _DATA.text("CJK")
_THIRD_PERSON = _DATA.compiled_rows("_THIRD_PERSON", ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)


class Item(NamedTuple):
    """One finding: a fact (``kind == "fact"``) or a preference."""

    kind: str
    text: str
    category: str
    score: float = FACT_CONFIDENCE
    evidence: str = ""
    generic: bool = False  # restated as said rather than by a slot rule: may absorb what follows
    replaces: str = ""  # the known fact this one restates with a new value (a correction), if any
    # the ids of the rules that produced it, "<module>.<rule>" (``named_rule``), recorded with it (issue 27)
    rules: tuple[str, ...] = ()

    def traced(self, *rules: str) -> Item:
        """This finding, with ``rules`` after the ids it has (those that fired after the ones that made it)."""
        return self._replace(rules=tuple(dict.fromkeys((*self.rules, *rules))))


class Subject(NamedTuple):
    """Whom a clause is about: the user, a relative of the user's, something the user has …"""

    kind: str  # "user" | "role" | "owned" | "assistant" | "unknown"
    phrase: str = "用户"  # how the fact text names it: 用户 / 用户的老板 / 用户的公司
    explicit: bool = False  # named in this clause, not carried over


USER = Subject("user")

_Args = ParamSpec("_Args")
_Found = TypeVar("_Found", Item, Item | None)


def named_rule(rule_id: str) -> Callable[[Callable[_Args, _Found]], Callable[_Args, _Found]]:
    """Gives what a rule function finds its id, ``<module>.<rule>`` (issue 27), unless a rule it
    called, more specific, gave one already: the id then travels with the finding into the
    extraction, the verdict and the events, where ``why`` reads it."""

    def mark(find: Callable[_Args, _Found]) -> Callable[_Args, _Found]:
        @functools.wraps(find)
        def marked(*args: _Args.args, **kwargs: _Args.kwargs) -> _Found:
            item = find(*args, **kwargs)
            return item if item is None or item.rules else item.traced(rule_id)

        return marked

    return mark


def fact_item(text: str, category: str) -> Item:
    # Last guard: whatever path built the text, a fact never speaks in the first person.
    return Item("fact", third_person(text), category)


def preference_item(text: str, category: str, said: str, behaviour: bool = False) -> Item:
    """A preference; ``behaviour`` marks one read from what the user does or asks for
    ("简短点", "我平时用VSCode") rather than said as a liking: the spec's 0.5–0.7 band,
    unless the words themselves state a liking or are strongly worded."""
    if RE._STRONG.search(said):
        strength = STRONG_PREF_STRENGTH
    elif behaviour and not RE._STATED_LIKING.search(said):
        strength = INFERRED_PREF_STRENGTH
    else:
        strength = PREF_STRENGTH
    # evidence quotes the clause as said, in the message's language (spec: "用户说'直接说重点'")
    evidence = f"The user said '{said}'" if is_english(said) else f"用户说'{said}'"
    return Item("preference", text, category, strength, evidence)


def third_person(text: str) -> str:
    """我 → 用户, 我的 → 用户的, 我们公司 → 用户的公司 (``_THIRD_PERSON``): how the spec wants facts written."""
    return rewritten(text, _THIRD_PERSON)


def tidy(value: str) -> str:
    """A value as said, without trailing particles or quotes."""
    value = value.strip().strip("'\"“”‘’「」 ")
    return RE._TRAILING_PARTICLES.sub("", value).strip()


#: what every module's registries may name: ``tidy`` / ``third_person`` / ``lower`` / ``species`` (a pet's kind, or
#: "") filters, ``said(v)`` (a value left after tidying) and ``given(v)`` (a value not empty)
VOCABULARY = Vocabulary(
    predicates={"said": lambda value, context: bool(tidy(value)), "given": simple(bool)},
    filters={"tidy": tidy, "third_person": third_person, "lower": str.lower, "species": lambda v: species_of(v) or ""},
)


def finding(
    rules: Registry,
    text: str,
    said: str,
    context: Context | None = None,
    *,
    who: str = "",
    kind: str = "fact",
    behaviour: bool = False,
    restate: Callable[[str], str] | None = None,
) -> Item | None:
    """What the first rule of ``rules`` that fires on ``text`` finds, traced to that rule, by its ``kind``
    (else ``kind``): nothing ("nothing"); a preference, read from behaviour when ``behaviour`` (unless the
    rule says), its ``refused`` template when it matched a refusal ("no need to be formal"); else a fact
    said of ``who``, ``restate``d when the rule asks (its ``restate``)."""
    fired = rules.first(text, context)
    values = fired.rule.values if fired else {}
    if fired is None or values.get("kind", kind) == "nothing":
        return None
    text = fired.text
    if "refused" in values and fired.match.groupdict().get("neg"):
        text = fired.rule.render(values["refused"], fired.match)
    behaviour = values.get("behaviour", behaviour)
    if behaviour or values.get("kind", kind) == "preference":
        return preference_item(text, fired.category, said, behaviour).traced(fired.rule.id)
    if restate and values.get("restate"):
        text = restate(text)
    return fact_item(who + text, fired.category).traced(fired.rule.id)
