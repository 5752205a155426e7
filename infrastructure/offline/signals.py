"""The spec's SignalDetector: a cheap test of whether a message may hold facts or preferences.

The spec's keyword lists are kept verbatim (``FACT_SIGNALS``, ``PREF_SIGNALS``)
and ``detect`` still returns exactly the spec's four keys. Three things are
added, because the bare lists both miss and over-fire on ordinary chat:

* patterns (``FACT_PATTERNS``, ``PREF_PATTERNS``) for first-person statements,
  family words without 我 ("老板姓张"), subject-less liking ("平时喜欢简短的回复")
  and a little English;
* small talk ("谢谢", "好的", "ok") is ignored outright;
* questions put to the assistant ("你能帮我写个函数吗？") say nothing about
  the user, so they raise no fact signal, only reply-style requests.

The clause helpers here are shared with the rule extractor, so both read a
message the same way.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, NamedTuple

from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN

# --------------------------------------------------------------------------
# Clauses
# --------------------------------------------------------------------------


class Clause(NamedTuple):
    """One clause of a message and the punctuation that ended it ("" at the end)."""

    text: str
    terminator: str


# Clause ends: CJK and ASCII punctuation; "." only before a space or the end,
# so "3.5" and "v1.2" stay whole.
_CLAUSE_BREAK = re.compile(r"([，。；！？,;!?\n…~～]+|\.(?=\s|$))")
# Conjunctions that start a new clause. They carry no fact themselves.
_ZH_CONJUNCTIONS = re.compile(r"(?:但是|可是|不过|而且|并且|另外|然后|所以|同时|还有就是)")
_EN_CONJUNCTIONS = re.compile(r"\s+(?:but|and then|and|so)\s+(?=(?:i|i'm|my|i've)\b)", re.IGNORECASE)


def split_clauses(text: str) -> list[Clause]:
    """Split a message on punctuation and clause-joining conjunctions, keeping each terminator."""
    text = unicodedata.normalize("NFKC", text or "")
    pieces = _CLAUSE_BREAK.split(text)
    clauses: list[Clause] = []
    # split() alternates text, separator, text, separator, …
    for i in range(0, len(pieces), 2):
        body = pieces[i]
        terminator = pieces[i + 1].strip() if i + 1 < len(pieces) else ""
        parts = [p for p in _EN_CONJUNCTIONS.split(body)]
        parts = [q for p in parts for q in _ZH_CONJUNCTIONS.split(p)]
        for j, part in enumerate(parts):
            part = part.strip()
            if part:
                clauses.append(Clause(part, terminator if j == len(parts) - 1 else ""))
    return clauses


_SMALL_TALK = re.compile(
    r"(?:谢谢|多谢|感谢|谢啦|谢了|好的|好滴|好吧|好呀|好|嗯|恩|哦|噢|喔|哈|呵|嘿|嘻|"
    r"你好|您好|早上好|晚上好|晚安|再见|拜拜|收到|明白|知道了|懂了|了解|行|可以|没问题|不客气|"
    r"对|是的|没错|棒|厉害|牛|辛苦了?|okay|ok|k|thanks|thankyou|thx|ty|hi|hello|hey|bye|"
    r"yes|yeah|yep|no|nope|sure|cool|great|nice|lol|ha|gotit|np|666|的|啦|呀|了|吧|啊)+"
)


def is_small_talk(text: str) -> bool:
    """True when nothing but greetings, thanks and acknowledgements is left (or nothing at all)."""
    # punctuation, emoji and spaces go, so "thank you!" folds to "thankyou"
    folded = re.sub(r"[\s\W_]+", "", unicodedata.normalize("NFKC", text or "").lower())
    return not folded or _SMALL_TALK.fullmatch(folded) is not None


_QUESTION_END = re.compile(r"(?:吗|么|呢|嘛)$")
_QUESTION_WORDS = re.compile(r"什么|为什么|怎么|怎样|哪|谁|几|多少|是不是|能不能|可不可以|会不会|有没有")
_ADDRESSES_ASSISTANT = re.compile(r"^(?:请问|那|那么|所以)?\s*(?:你|您)|(?:你|您)(?:能|可以|会|知道|觉得|是|有|帮|给|说)")


def is_question(clause: Clause) -> bool:
    """A question of any kind: it asks, so it states no fact."""
    text = clause.text.strip()
    if clause.terminator and clause.terminator[0] in "?？":
        return True
    return bool(_QUESTION_END.search(text)) or (
        bool(_QUESTION_WORDS.search(text)) and not re.search(r"[a-zA-Z]", text)
    )


def is_question_to_assistant(clause: Clause) -> bool:
    """A question whose subject is the assistant ("你能…吗？", "can you …?")."""
    if not is_question(clause):
        return False
    text = clause.text.strip()
    return bool(_ADDRESSES_ASSISTANT.search(text) or re.search(r"\byou\b", text, re.IGNORECASE))


# --------------------------------------------------------------------------
# Detector
# --------------------------------------------------------------------------

_FAMILY = ZH_ROLE_PATTERN
_I = r"(?:我们|我的|我)"


class SignalDetector:
    """检测消息中是否可能包含 fact 或 preference (the spec's detector, extended)."""

    # The spec's lists, verbatim.
    FACT_SIGNALS: dict[str, list[str]] = {
        "identity": ["我是", "我叫", "我姓", "我的名字"],
        "location": ["我在", "我住", "我工作在", "我们公司在", "坐标"],
        "relationship": ["我老板", "我同事", "我老婆", "我老公", "我女朋友",
                         "我男朋友", "我爸", "我妈", "我儿子", "我女儿"],
        "work": ["我们公司", "我负责", "我的工作", "我是做", "我的职位"],
        "possession": ["我的车", "我的房", "我的电脑", "我的手机"],
        "state": ["我有", "我没有", "我会", "我不会"],
    }

    PREF_SIGNALS: dict[str, list[str]] = {
        "explicit": ["我喜欢", "我偏好", "我习惯", "我倾向于"],
        "dislike": ["我不喜欢", "我讨厌", "我不想", "别给我", "不要"],
        "style_request": ["简短点", "详细点", "直接说", "说重点", "不用解释", "解释一下"],
        "time": ["早上", "晚上", "周末", "工作日", "以后", "每次", "总是"],
        "frequency": ["经常", "很少", "从不", "一直", "偶尔"],
    }

    # Additions: general patterns per category (new categories come after the spec's).
    FACT_PATTERNS: dict[str, list[str]] = {
        "identity": [
            _I + r"(?:现在|今年|也|还|不|并不)?(?:是|叫|姓|今年|名字)",
            r"\bmy name\b", r"\b(?:i'm|i am|im)\b", r"\bcall me\b",
        ],
        "location": [
            _I + r"(?:现在|目前|已经|也|一直)?(?:在|住|家在|搬)",
            # a time word may come between: "我最近搬去深圳了", "我去年住在北京"
            r"我[^，。,.!?！？]{0,4}?(?:住在|住|搬到|搬去|搬来|搬回|搬家)",
            r"\bi (?:now |currently )?live\b", r"\bi(?:'ve| have)? moved\b", r"\bbased in\b",
        ],
        "relationship": [
            r"(?:^|[我的家])(?:" + _FAMILY + r")",
            r"(?:" + _FAMILY + r")(?:也|今年|现在)?(?:姓|叫|是|在|住|今年|喜欢|不喜欢|有|不吃)",
            r"\bmy (?:" + EN_ROLE_PATTERN + r")\b",
        ],
        "work": [
            _I + r"(?:负责|从事|是做|在.{1,15}(?:上班|工作|做|当))",
            r"\bi work\b", r"\bmy job\b",
        ],
        "possession": [r"我的(?:车|房|电脑|手机|家)"],
        "state": [r"我(?:也|还)?(?:有|没有|没|会|不会)", r"\bi (?:have|own|don't have|do not have)\b"],
        "habit": [
            _I + r"(?:每天|每周|每晚|经常|常常|通常|一般|平时|总是|从不|很少|偶尔|习惯|不吃|不喝|不抽)",
            r"\bi (?:always|usually|often|never|don't eat|do not eat)\b",
        ],
    }

    PREF_PATTERNS: dict[str, list[str]] = {
        "explicit": [r"喜欢|偏好|倾向|爱看|爱听|感兴趣|更爱|希望", r"\bi (?:prefer|like|love|enjoy)\b"],
        "dislike": [r"讨厌|不喜欢|不想|别(?!人|的|处)|不要|不用|受不了",
                    r"\bi (?:don't|do not) like\b|\bi (?:hate|dislike)\b|\bdon't\b"],
        "style_request": [r"简短|简洁|精简|短一?点|详细|具体点|直接|重点|啰嗦|废话|口语化|正式一?点",
                          r"\b(?:short|brief|concise|detailed|direct|to the point)\b"],
        "time": [r"上午|中午|下午|夜里|深夜|半夜|下班后|\d+点", r"\b(?:morning|evening|night|weekend)s?\b"],
        "format": [r"列表|表格|分点|分条|要点|代码块|markdown|段落|图表", r"\b(?:bullet|list|table)s?\b"],
        "language": [r"(?:用|说|讲|以)(?:中文|英文|英语|汉语|日语|普通话)|(?:中文|英文|英语)(?:回复|回答)|术语",
                     r"\bin (?:english|chinese)\b"],
        "tool": [r"(?:用|使用)\s*[A-Za-z]", r"(?:用|通过)(?:微信|钉钉|飞书|QQ|邮件|邮箱)"],
    }

    #: what a question to the assistant may still signal: how to answer, never facts
    REQUEST_CATEGORIES = frozenset({"style_request", "dislike", "time", "format", "language"})

    def detect(self, text: str) -> dict[str, Any]:
        """返回检测结果: ``has_fact_signal``, ``has_pref_signal``, ``fact_categories``, ``pref_categories``."""
        result: dict[str, Any] = {
            "has_fact_signal": False,
            "has_pref_signal": False,
            "fact_categories": [],
            "pref_categories": [],
        }
        if not isinstance(text, str):
            return result

        statements: list[str] = []
        requests: list[str] = []
        for clause in split_clauses(text):
            if is_small_talk(clause.text):
                continue
            if is_question_to_assistant(clause):
                requests.append(clause.text)
            elif not is_question(clause):
                statements.append(clause.text)
            # other questions ("我是不是该换工作？") state nothing either

        body = "，".join(statements)
        asked = "，".join(requests)
        result["fact_categories"] = self._hits(body, self.FACT_SIGNALS, self.FACT_PATTERNS)
        result["pref_categories"] = self._hits(body, self.PREF_SIGNALS, self.PREF_PATTERNS)
        for category in self._hits(asked, self.PREF_SIGNALS, self.PREF_PATTERNS):
            if category in self.REQUEST_CATEGORIES and category not in result["pref_categories"]:
                result["pref_categories"].append(category)
        result["has_fact_signal"] = bool(result["fact_categories"])
        result["has_pref_signal"] = bool(result["pref_categories"])
        return result

    @staticmethod
    def _hits(text: str, signals: dict[str, list[str]], patterns: dict[str, list[str]]) -> list[str]:
        """Categories whose spec keywords or added patterns occur in ``text``, spec order first."""
        if not text:
            return []
        lowered = text.lower()
        hits: list[str] = []
        for category in list(signals) + [c for c in patterns if c not in signals]:
            if any(s in text for s in signals.get(category, ())) or any(
                re.search(p, lowered) for p in patterns.get(category, ())
            ):
                hits.append(category)
        return hits
