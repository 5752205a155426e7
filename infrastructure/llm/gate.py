"""The LLM path's gate: which calls a message needs, so that no change is kept from the model (ADR 0028).

The offline extractor's ``SignalDetector`` is tuned to flag what its own rules
can read (recall ≥ 0.75 at ≤ 55 % flagged on DuLeMon); as the LLM path's gate it
kept the change itself from the model ("she just started first grade",
"下周我要去日本出差"). This gate turns the question round: a message is kept
from the LLM only when it is *plainly* nothing stateable, and everything else
passes. Clause by clause:

* small talk (thanks, greetings, acknowledgements, laughter, emoji) and
  chit-chat made only of closed-class words (time of day, weather, a mood, an
  intensifier, a particle: "今天好冷啊", "ugh, Mondays") state nothing;
* a question or a request to the assistant ("帮我写个脚本", "can you suggest…?")
  states nothing unless it carries something stateable: a number, another
  person or pet of the user's life, the user's own possession, a word of change
  or correction, or words of a fact the user is known to hold;
* any other clause is a statement and may state or change a fact: it passes.

The detector's own signals still count (and alone decide the preference call of
the ``separate`` prompt set, except for a message it read nothing in, which gets
both calls: whether it is a fact or a preference is the prompts' to say), so the
gate passes at least what it passed before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from factledger.infrastructure.offline.clauses import Clause, is_question, is_small_talk, split_clauses
from factledger.infrastructure.offline.signals import SignalDetector
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: closed-class words that alone make chit-chat: when, weather, a mood or a verdict, how much, particles
_ZH_CHIT_CHAT = re.compile(
    r"今天|昨天|明天|今晚|昨晚|今早|最近|这几天|这两天|刚才|刚刚|早上|上午|中午|下午|晚上|周[一二三四五六日末]|星期[一二三四五六日天]|"
    r"天气|下雨|下雪|晴天|阴天|太阳|刮风|雾霾|好冷|好热|冷|热|闷|凉快|暖和|"
    r"开心|高兴|难过|伤心|郁闷|无聊|紧张|激动|舒服|难受|崩溃|无语|累死|累|困|饿|渴|烦|忙|爽|不错|还行|一般|棒|糟糕|"
    r"好|挺|很|太|真的|真|超级|超|有点|有些|特别|非常|又|都|也|就|还|是|死了|"
    r"确实|同意|没错|可不是|对|"
    r"啊|呀|呢|吧|了|哦|哈|嗯|唉|哎|诶|呜|嘿|耶|啦|嘛|噢|的|哇|呗"
)
_EN_CHIT_CHAT = _words(
    "ugh oh ah aw meh hmm hm phew whew yay omg wow lol haha hahaha lmao hi hey hello again yo bye monday "
    "mondays tuesday tuesdays wednesday thursday friday fridays saturday sunday weekend today tonight "
    "morning evening night day week weather rain rainy raining snow snowy sunny cold hot warm chilly so "
    "such a an the it it's its is was what this that kinda kind of sort honestly really very pretty "
    "quite too totally jealous tired sleepy bored boring happy sad hungry busy great good bad nice cool "
    "awesome terrible awful fun crazy fine ok okay well yeah yes no nope thanks thank you same me agreed true "
    "right exactly indeed definitely absolutely"
)
#: a clause said to the assistant: a request, or a question opening with what it asks
_ZH_REQUEST = re.compile(
    r"^(?:请|麻烦|帮我|帮忙|给我|替我|你|您|能不能|可不可以|可以|推荐|告诉我|说说|讲讲|介绍|有什么|有没有|怎么|如何|为什么|为啥)"
)
_EN_REQUEST = re.compile(
    r"^(?:can|could|would|will|please|help|tell|give|show|write|suggest|recommend|what|how|why|"
    r"when|where|who|which|any|do|does|should)\b",
    re.IGNORECASE,
)
#: what makes even a question stateable
_NUMBER = re.compile(r"\d|[一二三四五六七八九十两俩仨百千万][岁级个只条口套辆台年月号层楼]")
_ZH_OTHER_LIFE = re.compile(
    r"我的|我家|我们家|俺家|我们公司|我们组|我们学校|"
    + ZH_ROLE_PATTERN
    + r"|娃|孩子|宝宝|闺女|老大|老二|狗|猫|宠物|他|她|它"
)
_EN_OTHER_LIFE = re.compile(r"\b(?:my|our|mine|he|she|his|her|they|their|" + EN_ROLE_PATTERN + r")\b", re.IGNORECASE)
_ZH_CHANGE = re.compile(
    r"说错|纠正|打错|记错|更正|其实|改成|改回|换成|换了|不再|已经|现在|搬|辞职|离职|入职|跳槽|分手|分了|结婚|离婚|"
    r"取消|开玩笑|逗你|升职|毕业|退休|戒了"
)
_EN_CHANGE = re.compile(
    r"\b(?:actually|correction|correct|i meant|meant|now|no longer|anymore|used to|moved|switched|changed|quit|"
    r"hired|promoted|just|nvm|never mind|cancel\w*|retired|graduated|married|divorced|broke up)\b",
    re.IGNORECASE,
)
_HAN = re.compile(r"[\u3400-\u9fff]")
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
#: words of a known fact that say nothing of it ("用户", "the user")
_FACT_FRAME = re.compile(r"用户|the user|user's", re.IGNORECASE)
_EN_STOP = _words("the user users and with has have had was were that this for from lives works")


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def is_chit_chat(text: str) -> bool:
    """Small talk, or nothing but closed-class words: a time, the weather, a mood, a particle, emoji."""
    if is_small_talk(text):
        return True
    folded = _folded(text)
    if re.search(r"\d", folded):
        return False
    if _HAN.search(folded):
        rest = _ZH_CHIT_CHAT.sub("", folded)
        return not re.sub(r"[\s\W_]+", "", rest)  # punctuation and emoji say nothing
    return all(word in _EN_CHIT_CHAT for word in _EN_WORD.findall(folded))


def _is_request(clause: Clause) -> bool:
    text = clause.text.strip()
    return is_question(clause) or bool(_ZH_REQUEST.match(text) or _EN_REQUEST.match(text))


def known_terms(known_facts: Iterable[str]) -> frozenset[str]:
    """What a message must say to mention a known fact: its Chinese character pairs, its English words."""
    terms: set[str] = set()
    for fact in known_facts:
        text = _FACT_FRAME.sub(" ", _folded(fact))
        for run in re.findall(r"[\u3400-\u9fff]+", text):
            terms.update(run[i : i + 2] for i in range(len(run) - 1))
        terms.update(w for w in _EN_WORD.findall(text) if len(w) > 2 and w not in _EN_STOP)
    return frozenset(terms)


def mentions_known(text: str, terms: frozenset[str]) -> bool:
    if not terms:
        return False
    folded = _folded(text)
    words = set(_EN_WORD.findall(folded))
    pairs = {folded[i : i + 2] for i in range(len(folded) - 1) if _HAN.match(folded[i])}
    return not terms.isdisjoint(words | pairs)


def stateable_marks(text: str, terms: frozenset[str]) -> list[str]:
    """Why a clause may state or change a fact even when it asks: what it carries."""
    marks = []
    if _NUMBER.search(text):
        marks.append("number")
    if _ZH_OTHER_LIFE.search(text) or _EN_OTHER_LIFE.search(text):
        marks.append("someone")
    if _ZH_CHANGE.search(text) or _EN_CHANGE.search(text):
        marks.append("change")
    if mentions_known(text, terms):
        marks.append("known_fact")
    return marks


class LLMGate:
    """Decides the calls for one message on the LLM path: the spec's signal dict, widened."""

    def __init__(self, detector: Any = None) -> None:
        self.detector = detector or SignalDetector()

    def detect(self, message: str, known_facts: Sequence[str] = ()) -> dict[str, Any]:
        """The detector's signals, with ``has_fact_signal`` set for every clause that may state a fact.

        A message the detector reads as only a preference ("周末别给我发消息")
        gets no fact call unless a clause carries something stateable."""
        signals = self.detector.detect(message)
        if not isinstance(message, str) or signals.get("has_fact_signal"):
            return signals
        terms = known_terms(known_facts)
        found: list[str] = []
        statement = False
        for clause in split_clauses(message):
            if is_chit_chat(clause.text):
                continue
            found += [m for m in stateable_marks(clause.text, terms) if m not in found]
            statement = statement or not _is_request(clause)
        if statement and not signals.get("has_pref_signal") and "statement" not in found:
            found.append("statement")
        if not found:
            return signals
        widened = {**signals, "has_fact_signal": True, "fact_categories": [*signals["fact_categories"], *found]}
        if not signals.get("has_pref_signal"):
            # the detector read nothing: a fact or a preference ("还是改回整段写吧"), the prompts decide
            widened["has_pref_signal"] = True
            widened["pref_categories"] = [*signals["pref_categories"], "unread"]
        return widened
