"""The spec's SignalDetector: a cheap test of whether a message may hold facts or preferences.

The spec's keyword lists are kept verbatim (``FACT_SIGNALS``, ``PREF_SIGNALS``)
and ``detect`` still returns exactly the spec's four keys. Run on real dialogue
the bare lists flag only a quarter of the turns that carry persona information,
and half of what they flag is chat ("那就以后聊" hits 以后), so the detector
reads the message clause by clause (see ``clauses``) and adds, measured on the
labelled files of data/eval:

* first-person statements beyond fixed phrases: 我/我的/我家 + any verb of
  being, having, living, working, liking … in Chinese, and I'm / I live / my
  wife / I prefer … in English, unless the first person only frames the
  exchange ("我明白你的意思", "I'm sure you'll manage");
* topics that are the speaker's even without 我: family and relationship
  words ("老板姓张", "要接孩子放学"), work and school words
  ("加班的日子真的好累");
* negation (我不/我没/别/不要) and requests on how to reply;
* pastimes without 我: one proposed or shared ("明天一起去游泳吗", "陪我一起下棋")
  or kept up as a subject-less habit ("周末常去露营"); English narration without
  "I" ("Took the dog to the vet."), values ("honesty is key") and opinions of a
  work ("it's a moving war novel");
* exclusions: small talk (谢谢, 好的, 哈哈), questions (asking states nothing;
  a question to the assistant may still ask for a reply style), and the
  spec's time and frequency words (早上, 每次, 经常 …) count only next to
  another signal, since on their own they are mostly chat.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

from factledger.infrastructure.offline.clauses import (
    EN_ELLIPSIS,
    Clause,
    dialect,
    en_mentions_self,
    fold_cjk_spaces,
    is_english,
    is_question,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
    standing_request,
    strip_exchange,
    zh_mentions_self,
)
from factledger.infrastructure.offline.registry import Vocabulary, registry
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN
from factledger.infrastructure.offline.wishes import answer_wish

_DATA = rules("signals")
RE = _DATA.patterns()


Patterns = dict[str, tuple[re.Pattern[str], ...]]


def _pattern_table(key: str) -> Patterns:
    """The rows ``key`` of the data file, ``[category, pattern]``, as patterns by category, in order,
    compiled once: the detector reads every clause of a message through about a hundred of them."""
    table: dict[str, list[re.Pattern[str]]] = {}
    extra = {"ZH_ROLE_PATTERN": ZH_ROLE_PATTERN, "EN_ROLE_PATTERN": EN_ROLE_PATTERN, "EN_ELLIPSIS": EN_ELLIPSIS}
    for category, pattern in _DATA.rows(key, **extra):
        table.setdefault(category, []).append(re.compile(pattern))
    return {category: tuple(patterns) for category, patterns in table.items()}


#: the spec's keyword lists, by category, in its order
_FACT_SIGNALS = {category: list(words) for category, words in _DATA.table("_FACT_SIGNALS").items()}
_PREF_SIGNALS = {category: list(words) for category, words in _DATA.table("_PREF_SIGNALS").items()}
#: where the speaker talks about themself
_FACT_PATTERNS = _pattern_table("_FACT_PATTERNS")
#: any statement, no 我 needed
_TOPIC_PATTERNS = _pattern_table("_TOPIC_PATTERNS")
#: pastimes the speaker shares or keeps up without naming themself (not when another subject is named)
_PASTIME_PATTERNS = _pattern_table("_PASTIME_PATTERNS")
#: English opinions and values: said by the speaker even without "I"
_OPINION_PATTERNS = _pattern_table("_OPINION_PATTERNS")
_PREF_PATTERNS = _pattern_table("_PREF_PATTERNS")
#: preferences about how to reply: they count in requests as well as statements
_REQUEST_PATTERNS = _pattern_table("_REQUEST_PATTERNS")
_ASKED = registry(_DATA, "asked", Vocabulary())
#: the order categories are given in: the spec's first, in its order, then the added ones
_FACT_ORDER = {
    c: n for n, c in enumerate(dict.fromkeys([*_FACT_SIGNALS, *_FACT_PATTERNS, *_TOPIC_PATTERNS, *_PASTIME_PATTERNS]))
}
_PREF_ORDER = {
    c: n for n, c in enumerate(dict.fromkeys([*_PREF_SIGNALS, *_PREF_PATTERNS, *_REQUEST_PATTERNS, *_OPINION_PATTERNS]))
}


class SignalDetector:
    """检测消息中是否可能包含 fact 或 preference (the spec's detector, extended)."""

    # The spec's lists, verbatim (rules/signals.toml).
    FACT_SIGNALS: ClassVar[dict[str, list[str]]] = _FACT_SIGNALS
    PREF_SIGNALS: ClassVar[dict[str, list[str]]] = _PREF_SIGNALS

    #: categories that say only "the speaker said something about themself"
    GENERIC_CATEGORIES = frozenset({"activity", "state"})
    #: the spec's modifiers: they name a category only next to another signal
    MODIFIER_CATEGORIES = frozenset({"time", "frequency"})
    #: what a question to the assistant may still signal: how to answer, never facts
    REQUEST_CATEGORIES = frozenset({"style_request", "dislike", "time", "format", "language"})

    def detect(self, text: str) -> dict[str, Any]:
        """返回检测结果: ``has_fact_signal``, ``has_pref_signal``, ``fact_categories``, ``pref_categories``."""
        facts: list[str] = []
        prefs: list[str] = []
        # anything but a string is read as "" (``dialect``), which has no clause
        for clause in split_clauses(fold_cjk_spaces(dialect(text))):
            clause_facts, clause_prefs = self._categories(clause)
            facts += clause_facts
            # "希望回答时多给代码示例", "能不能以后回答短一点？": how to answer, wished or asked politely
            prefs += clause_prefs or (["style_request"] if answer_wish(clause) else [])
        fact_categories = sorted(dict.fromkeys(facts), key=lambda c: _FACT_ORDER.get(c, len(_FACT_ORDER)))
        pref_categories = sorted(dict.fromkeys(prefs), key=lambda c: _PREF_ORDER.get(c, len(_PREF_ORDER)))
        return {
            "has_fact_signal": bool(fact_categories),
            "has_pref_signal": bool(pref_categories),
            "fact_categories": fact_categories,
            "pref_categories": pref_categories,
        }

    # -- internals ---------------------------------------------------------

    def _categories(self, clause: Clause) -> tuple[list[str], list[str]]:
        """Fact and preference categories one clause raises, before a wish on how to answer."""
        if is_small_talk(clause.text):
            return [], []
        text = clause.text.lower()
        english = is_english(text)
        if is_question_to_assistant(clause):
            return [], [c for c in self._hits(text, {}, _REQUEST_PATTERNS) if c in self.REQUEST_CATEGORIES]
        if is_question(clause):
            # asking states nothing, save what the asker owns: "我能带上我最喜欢的米老鼠吗", or the
            # pastime they propose sharing: "明天一起去钓鱼吗" (rules ``asked``)
            fired = None if english else _ASKED.first(text)
            return [fired.text] if fired and fired.text else [], []
        addressed = bool((RE._EN_LISTENER if english else RE._LISTENER).search(text))
        facts, prefs = self._stated(text, english, addressed)
        # how to reply is the user's to ask, whoever the clause names
        prefs = self._hits(text, {"style_request": self.PREF_SIGNALS["style_request"]}, _REQUEST_PATTERNS, found=prefs)
        if not prefs and (
            standing_request(clause.text)
            or (not english and RE._ASKS_TO_RECOMMEND.search(clause.text))
            or RE._EN_LANGUAGE_FROM_NOW.search(text)
        ):
            prefs.append("style_request")  # "以后推荐清淡的吧", "还是用简体吧", "German is fine from now on"
        # "我现在有点困", "我先去吃个饭", "I'm gonna grab lunch": the moment, not the person;
        # "要不是你一直支持我…", "我回头告诉你": the exchange; "我们这附近…": a group, not the speaker
        in_passing = RE._PASSING.search(text) or (not english and RE._ZH_IN_PASSING.search(text))
        if set(facts) <= self.GENERIC_CATEGORIES and not prefs and in_passing:
            facts = []
        if facts or prefs:
            # the spec's time and frequency words qualify a statement that already says something
            prefs = self._hits(text, {c: self.PREF_SIGNALS[c] for c in self.MODIFIER_CATEGORIES}, found=prefs)
        return facts, prefs

    def _stated(self, text: str, english: bool, addressed: bool) -> tuple[list[str], list[str]]:
        """Fact and preference categories of a statement, before requests on how to reply."""
        about_self = en_mentions_self(text) if english else zh_mentions_self(text)
        facts: list[str] = []
        prefs: list[str] = []
        if about_self:
            said = strip_exchange(text)
            facts = self._hits(said, self.FACT_SIGNALS, _FACT_PATTERNS, _TOPIC_PATTERNS)
            if len(facts) > 1 and "activity" in facts:
                facts.remove("activity")  # the catch-all only when nothing more specific applies
            prefs = self._hits(said, self.PREF_SIGNALS, _PREF_PATTERNS)
        elif not addressed:
            facts = self._hits(text, {"location": ["坐标"]}, _TOPIC_PATTERNS)
            # subject-less liking is the speaker's in Chinese ("平时喜欢简短的回复")
            if not english and not RE._SOMEONE_ELSE_FIRST.match(text):
                prefs = self._hits(text, {}, _PREF_PATTERNS)
        if english and (not addressed or RE._EN_WORK_OPINION_RE.search(text.replace("’", "'"))):
            # a value or an opinion of a work is the speaker's even when "I" is left out; said to the
            # listener, "it's important that you rest" is advice, while a work stays an opinion
            prefs = self._hits(text.replace("’", "'"), {}, _OPINION_PATTERNS, found=prefs)
        elif not english and not RE._ZH_OTHER_SUBJECT.search(text) and not addressed:
            facts = self._hits(strip_exchange(text), {}, _PASTIME_PATTERNS, found=facts)
        return facts, prefs

    @staticmethod
    def _hits(text: str, signals: dict[str, list[str]], *tables: Patterns, found: list[str] | None = None) -> list[str]:
        """``found``, then the categories whose spec keywords or added patterns (of any of ``tables``)
        occur in ``text`` (in no order that matters: ``detect`` gives them in the spec's)."""
        hits = list(found or ())
        if text:
            hits += [c for c, words in signals.items() if c not in hits and any(w in text for w in words)]
            for table in tables:
                hits += [c for c, patterns in table.items() if c not in hits and any(p.search(text) for p in patterns)]
        return hits


__all__ = [
    "Clause",
    "SignalDetector",
    "dialect",
    "is_question",
    "is_question_to_assistant",
    "is_small_talk",
    "split_clauses",
]
