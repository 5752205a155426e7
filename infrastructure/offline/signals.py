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
    asks_to_recommend,
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
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN
from factledger.infrastructure.offline.wishes import is_answer_wish

_DATA = rules("signals")

_FAMILY = _DATA.text("_FAMILY", ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)
_PETS = _DATA.text("_PETS")
_WORK_WORDS = _DATA.text("_WORK_WORDS")
_NOT_MINE = _DATA.text("_NOT_MINE")
_I = _DATA.text("_I")
_PASSING = _DATA.regex("_PASSING")
_MOMENT = _DATA.regex("_MOMENT")
_EN_I = _DATA.text("_EN_I")
_LISTENER_THEN_ME = _DATA.regex("_LISTENER_THEN_ME")
_ME_THEN_LISTENER = _DATA.regex("_ME_THEN_LISTENER")
_ONLY_WE = _DATA.regex("_ONLY_WE")

_ZH_HOBBY = _DATA.text("_ZH_HOBBY")
_ZH_JOINT_PASTIME = _DATA.regex("_ZH_JOINT_PASTIME")
_ZH_HABITUAL_PASTIME = _DATA.regex("_ZH_HABITUAL_PASTIME")
_ZH_OTHER_SUBJECT = _DATA.regex("_ZH_OTHER_SUBJECT")
_ZH_CHANGE = _DATA.text("_ZH_CHANGE")
_EN_CHANGE = _DATA.text("_EN_CHANGE")
_ZH_CORRECTION = _DATA.text("_ZH_CORRECTION")
_EN_CORRECTION = _DATA.text("_EN_CORRECTION")

_EN_VALUES = _DATA.text("_EN_VALUES")
_EN_WORK_OPINION = _DATA.text("_EN_WORK_OPINION")


_EN_LANGUAGE_FROM_NOW = _DATA.regex("_EN_LANGUAGE_FROM_NOW", re.IGNORECASE)


#: each pattern table's patterns compiled once: the detector reads every clause of a message
#: through about a hundred of them, and ``re.search`` with a string looks each up in the ``re``
#: module's cache of 512, which the offline rules' many more patterns keep evicting (issue 25)
_COMPILED_TABLES: dict[int, tuple[dict[str, list[str]], dict[str, tuple[re.Pattern[str], ...]]]] = {}


def _compiled(table: dict[str, list[str]]) -> dict[str, tuple[re.Pattern[str], ...]]:
    """``table``'s patterns, compiled, by category (compiled again if the table was replaced)."""
    if not table:
        return {}
    entry = _COMPILED_TABLES.get(id(table))
    if entry is None or entry[0] is not table:
        entry = (table, {category: tuple(re.compile(p) for p in patterns) for category, patterns in table.items()})
        _COMPILED_TABLES[id(table)] = entry
    return entry[1]


_LISTENER = _DATA.regex("_LISTENER")
_EN_LISTENER = _DATA.regex("_EN_LISTENER")
_MINE = _DATA.regex("_MINE")
_SOMEONE_ELSE_FIRST = _DATA.regex("_SOMEONE_ELSE_FIRST")
_EN_WORK_OPINION_RE = _DATA.regex("_EN_WORK_OPINION_RE")


def _in_passing(text: str, english: bool) -> bool:
    """Said of the moment, the exchange or a group, not of the speaker."""
    if _PASSING.search(text):
        return True
    return not english and any(p.search(text) for p in (_MOMENT, _LISTENER_THEN_ME, _ME_THEN_LISTENER, _ONLY_WE))


class SignalDetector:
    """检测消息中是否可能包含 fact 或 preference (the spec's detector, extended)."""

    # The spec's lists, verbatim.
    FACT_SIGNALS: ClassVar[dict[str, list[str]]] = {
        "identity": ["我是", "我叫", "我姓", "我的名字"],
        "location": ["我在", "我住", "我工作在", "我们公司在", "坐标"],
        "relationship": [
            "我老板",
            "我同事",
            "我老婆",
            "我老公",
            "我女朋友",
            "我男朋友",
            "我爸",
            "我妈",
            "我儿子",
            "我女儿",
        ],
        "work": ["我们公司", "我负责", "我的工作", "我是做", "我的职位"],
        "possession": ["我的车", "我的房", "我的电脑", "我的手机"],
        "state": ["我有", "我没有", "我会", "我不会"],
    }

    PREF_SIGNALS: ClassVar[dict[str, list[str]]] = {
        "explicit": ["我喜欢", "我偏好", "我习惯", "我倾向于"],
        "dislike": ["我不喜欢", "我讨厌", "我不想", "别给我", "不要"],
        "style_request": ["简短点", "详细点", "直接说", "说重点", "不用解释", "解释一下"],
        "time": ["早上", "晚上", "周末", "工作日", "以后", "每次", "总是"],
        "frequency": ["经常", "很少", "从不", "一直", "偶尔"],
    }

    # Additions. Patterns in FACT_PATTERNS apply to clauses where the speaker
    # talks about themself; TOPIC_PATTERNS to any statement (no 我 needed).
    FACT_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "identity": [
            _I
            + r"(?:现在|今年|也|还|就|可|可是|本来|其实|并|并不|不|都)*(?:是|叫|姓|今年|名字|属|出生|\d+多?岁|[一二三四五六七八九十两]+多?岁)",
            r"\bmy name\b",
            r"\b(?:i'm|i am|i m|im) (?:a|an|\d+)\b",
            r"\bcall me\b",
            r"\bi was born\b",
            r"\b(?:i'm|i am|i m|im) (?:(?:very|so|really|partially|currently|still|not) )*(?:\w+(?:ed|ic|ish|ian|an|ese|less|ful))\b",
        ],
        "location": [
            _I + r"(?:现在|目前|已经|也|一直|还|就|都)?(?:在|住|家在|搬|老家|来自|生活在|长大)",
            r"我[^，。,.!?！？]{0,4}?(?:住在|住|搬到|搬去|搬来|搬回|搬家|搬进)",
            r"\bi (?:now |currently |still )?live\b",
            r"\bi(?:'ve| have| ve)? (?:just |recently )?moved\b",
            r"\bbased in\b",
            r"\bi(?:'m| am| m) from\b",
            r"\bi grew up\b",
        ],
        "relationship": [
            _I + r"(?:" + _FAMILY + r")",
            _I + r"(?:现在|目前|还是|一直|已经|刚|也)*(?:单身|已婚|未婚|离婚|离异|结婚|订婚|恋爱|脱单)",
            r"\bmy (?:"
            + EN_ROLE_PATTERN
            + r"|kids?|children|family|parents|grand\w+|fianc\w*|spouse|pets?|dogs?|cats?)\b",
            r"\bi(?:'m| am| m) (?:married|divorced|single|engaged|widowed)\b",
        ],
        "work": [
            _I + r"(?:现在|目前|也|还|一直|主要)?(?:负责|从事|是做|做|当|在.{1,15}(?:上班|工作|做|当|读书|上学))",
            r"\bi (?:work|worked|volunteer|teach|study|studied|graduated)\b",
            r"\bmy (?:job|work|boss|business|career|company|class)\b",
        ],
        "possession": [_I + r"(?:的)?(?:车|房|电脑|手机|家|" + _PETS + r")", r"我养", r"\bi (?:own|drive)\b"],
        "state": [
            r"我(?:也|还|都|就|可|倒|并)?(?:有|没有|没|会|不会|能|不能|可以|不|从来|从没|从未|曾经|已经|正在|刚|打算|准备|想|要)",
            r"\bi (?:have|own|can|can't|cannot|don't|do not|didn't|never|used to|am going to|'m going to|was|had)\b",
            r"\bi(?:'ve| ve| have) (?:\w+ )?(?:been|got|had|done|made|started|bought|learned|tried)\b",
        ],
        "habit": [
            _I
            + r"(?:现在|也|还|都|就|一直)*(?:每天|天天|每周|每晚|每个?月|每年|经常|常常|通常|一般|平时|平常|总是|老是|从不|很少|偶尔|习惯|不吃|不喝|不抽|只吃|只喝)",
            r"\bi (?:always|usually|often|never|sometimes|regularly|rarely)\b",
            r"\bevery (?:day|week|month|morning|night)\b",
        ],
        "activity": [
            # whatever else a speaker says of themself: 我 + any verb, I / my + anything
            _I + r"(?:也|还|都|就|可|最近|今天|昨天|刚|刚刚|已经|正在|一直|又|从小)*[\u4e00-\u9fff]",
            r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|myself|we|we're|we've|our|us)\b",
            EN_ELLIPSIS,
        ],
    }

    TOPIC_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "identity": [r"(?:白羊|金牛|双子|巨蟹|狮子|处女|天秤|天蝎|射手|摩羯|水瓶|双鱼)(?:座|女|男)"],
        "relationship": [_NOT_MINE + r"(?:" + _FAMILY + r")", r"家里的(?:" + _PETS + r")"],
        "work": [_NOT_MINE + r"(?:" + _WORK_WORDS + r")"],
        "change": [_ZH_CHANGE, _EN_CHANGE],
        "correction": [_ZH_CORRECTION, _EN_CORRECTION],
    }

    #: pastimes the speaker shares or keeps up without naming themself (not when another subject is named)
    PASTIME_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "habit": [_ZH_JOINT_PASTIME.pattern, _ZH_HABITUAL_PASTIME.pattern],
    }

    #: English opinions and values: said by the speaker even without "I"
    OPINION_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "explicit": [_EN_VALUES, _EN_WORK_OPINION],
    }

    PREF_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "explicit": [
            r"喜欢|偏好|倾向|爱看|爱听|爱吃|爱玩|感兴趣|更爱|最爱|热爱|迷上|着迷|粉丝",
            r"\bi (?:(?:really|also|just|absolutely) )?(?:prefer|like|love|enjoy|adore)\b",
            r"\bmy fav(?:ou?rite)?\b",
            r"\bis my (?:fav(?:ou?rite)?|addiction|passion|weakness)\b",
        ],
        "dislike": [
            r"讨厌|不喜欢|不想|受不了|害怕|怕|恐惧|反感|烦|不爱",
            r"\bi (?:don't|do not|don t) (?:like|enjoy|want|care)\b|\bi (?:hate|dislike|can't stand|avoid)\b|\bafraid of\b",
        ],
    }

    #: preferences about how to reply: they count in requests as well as statements
    REQUEST_PATTERNS: ClassVar[dict[str, list[str]]] = {
        "dislike": [
            r"(?:别|不要|不用|少)(?:再|太|给我|跟我|对我)?(?:说|讲|解释|回复|回答|写|发|打扰|提醒|联系|用|废话|啰嗦|长)",
            r"\bdon't (?:send|call|write|use|explain|bother|remind)\b",
        ],
        "style_request": [
            r"简短|简洁|精简|短一?点|长一?点|太长|详细|具体点|直接|重点|啰嗦|废话|口语化|正式|严肃|随意|随便一?点|活泼|轻松一?点|俏皮|接地气|简单说|"
            r"温柔一?点|温柔些|委婉|温和一?点|讲(?:得)?(?:深入?|硬核)(?:一?点|些)",
            r"(?:叫|称呼)我(?!们)",
            # what to recommend, asked for: "以后推点清淡的粤菜", "还是给我推喜剧吧"
            r"(?:以后|之后|今后|还是|就)(?:给我)?推(?:荐)?(?:点|些|一些)?[\u4e00-\u9fff]|推(?:点|些)[\u4e00-\u9fff]{2,8}吧",
            r"(?:改回|换回|切回|换成|改成|改用|还是用?)(?:简体|繁体|中文|英文)",
            r"\b(?:short|shorter|brief|concise|detailed|direct|to the point|casual|formal|professional tone)\b",
            r"\b(?:bullet(?:ed)?[- ]points?|bullets|paragraphs|casually|formally|in detail|into detail|full sentences|flowing text)\b",
        ],
        "time": [
            r"(?:上午|中午|下午|夜里|深夜|半夜|下班后|早上|晚上|周末|(?<!\d)\d+点).{0,6}(?:打扰|联系|找|发|提醒|推送|打电话)",
            r"\b(?:morning|evening|night|weekend)s?\b.{0,20}\b(?:call|message|remind|contact)\b",
        ],
        "format": [
            r"列表|表格|分点|分条|要点|代码块|markdown|段落|图表|纯文字|纯文本|emoji|表情|颜文字|公制|英制|摄氏|华氏",
            r"\b(?:bullet|list|table)s?\b|\b(?:metric|imperial|emojis?|plain text|celsius|fahrenheit|kilometers|miles)\b",
        ],
        "language": [
            r"(?:用|说|讲|以|换回|换成|改用|切回)(?:中文|英文|英语|汉语|日语|普通话)|(?:中文|英文|英语)(?:回复|回答)|术语|打比方|举例子|举个例子|大白话|通俗|浅显|说人话|专业说法|硬核",
            r"\bin (?:english|chinese)\b|\b(?:jargon|analogies|technical terms?|simple words|eli5)\b"
            r"|\bswitch (?:back )?to (?:english|chinese|mandarin|spanish|french|german|japanese|korean)\b"
            r"|\b(?:american|british|us|uk) (?:english|spelling)\b",
        ],
        "tool": [
            r"(?:用|使用|换|换成|改用)\s*[A-Za-z]",
            r"(?:用|通过)(?:微信|钉钉|飞书|QQ|邮件|邮箱)",
            r"(?:写|改用|换成)\s*(?:python|golang|go|java|javascript|typescript|rust|c\+\+|c#|ruby|php|swift|kotlin)(?![a-z])",
            r"\b(?:code|examples?|snippets?) in (?:python|go|golang|java|javascript|typescript|rust|c\+\+|ruby|php|swift|kotlin)\b",
            r"\b(?:switch to|use|write|show me|give me) (?:python|golang|java|javascript|typescript|rust|c\+\+|ruby|php|swift|kotlin)\b",
        ],
    }

    #: categories that say only "the speaker said something about themself"
    GENERIC_CATEGORIES = frozenset({"activity", "state"})
    #: the spec's modifiers: they name a category only next to another signal
    MODIFIER_CATEGORIES = frozenset({"time", "frequency"})
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
        text = fold_cjk_spaces(dialect(text))
        facts: list[str] = []
        prefs: list[str] = []
        for clause in split_clauses(text):
            clause_facts, clause_prefs = self._clause(clause)
            facts += [c for c in clause_facts if c not in facts]
            prefs += [c for c in clause_prefs if c not in prefs]
        result["fact_categories"] = self._ordered(
            facts, self.FACT_SIGNALS, self.FACT_PATTERNS, self.TOPIC_PATTERNS, self.PASTIME_PATTERNS
        )
        result["pref_categories"] = self._ordered(
            prefs, self.PREF_SIGNALS, self.PREF_PATTERNS, self.REQUEST_PATTERNS, self.OPINION_PATTERNS
        )
        result["has_fact_signal"] = bool(result["fact_categories"])
        result["has_pref_signal"] = bool(result["pref_categories"])
        return result

    # -- internals ---------------------------------------------------------

    def _clause(self, clause: Clause) -> tuple[list[str], list[str]]:
        """Fact and preference categories one clause raises."""
        facts, prefs = self._categories(clause)
        if not prefs and is_answer_wish(clause):
            # "希望回答时多给代码示例", "能不能以后回答短一点？": how to answer, wished or asked politely
            prefs = ["style_request"]
        return facts, prefs

    def _categories(self, clause: Clause) -> tuple[list[str], list[str]]:
        if is_small_talk(clause.text):
            return [], []
        text = clause.text.lower()
        english = is_english(text)
        if is_question_to_assistant(clause):
            asked = self._hits(text, {}, self.REQUEST_PATTERNS)
            return [], [c for c in asked if c in self.REQUEST_CATEGORIES]
        if is_question(clause):
            return self._asked(text, english), []
        addressed = bool((english and _EN_LISTENER.search(text)) or (not english and _LISTENER.search(text)))
        facts, prefs = self._stated(text, english, addressed)
        # how to reply is the user's to ask, whoever the clause names
        spec_styles = {"style_request": self.PREF_SIGNALS["style_request"]}
        prefs += [c for c in self._hits(text, spec_styles, self.REQUEST_PATTERNS) if c not in prefs]
        if not prefs and (
            standing_request(clause.text) or asks_to_recommend(clause.text) or _EN_LANGUAGE_FROM_NOW.search(text)
        ):
            prefs.append("style_request")  # "以后推荐清淡的吧", "还是用简体吧", "German is fine from now on"
        if set(facts) <= self.GENERIC_CATEGORIES and not prefs and _in_passing(text, english):
            # "我现在有点困", "我先去吃个饭", "I'm gonna grab lunch": the moment, not the person;
            # "要不是你一直支持我…", "我回头告诉你": the exchange; "我们这附近…": a group, not the speaker
            facts = []
        if facts or prefs:
            # the spec's time and frequency words qualify a statement that already says something
            prefs += [
                c for c in self._hits(text, self.PREF_SIGNALS, {}) if c in self.MODIFIER_CATEGORIES and c not in prefs
            ]
        return facts, prefs

    @staticmethod
    def _asked(text: str, english: bool) -> list[str]:
        """Asking states nothing, save what the asker owns: "我能带上我最喜欢的米老鼠吗", or the
        pastime they propose sharing: "明天一起去钓鱼吗"."""
        if english or _LISTENER.search(text):
            return []
        if _MINE.search(text):
            return ["possession"]
        if _ZH_JOINT_PASTIME.search(text) and not _ZH_OTHER_SUBJECT.search(text):
            return ["habit"]
        return []

    def _stated(self, text: str, english: bool, addressed: bool) -> tuple[list[str], list[str]]:
        """Fact and preference categories of a statement, before requests on how to reply."""
        about_self = en_mentions_self(text) if english else zh_mentions_self(text)
        facts: list[str] = []
        prefs: list[str] = []
        if about_self:
            said = strip_exchange(text)
            facts = self._hits(said, self.FACT_SIGNALS, self.FACT_PATTERNS)
            facts += [c for c in self._hits(said, {}, self.TOPIC_PATTERNS) if c not in facts]
            if len(facts) > 1 and "activity" in facts:
                facts.remove("activity")  # the catch-all only when nothing more specific applies
            prefs = self._hits(said, self.PREF_SIGNALS, self.PREF_PATTERNS)
        elif not addressed:
            facts = self._hits(text, {"location": ["坐标"]}, self.TOPIC_PATTERNS)
            # subject-less liking is the speaker's in Chinese ("平时喜欢简短的回复")
            if not english and not _SOMEONE_ELSE_FIRST.match(text):
                prefs = self._hits(text, {}, self.PREF_PATTERNS)
        if english:
            # a value or an opinion of a work is the speaker's even when "I" is left out
            opinions = self._hits(text.replace("’", "'"), {}, self.OPINION_PATTERNS)
            if addressed:  # "it's important that you rest" is advice; a work stays an opinion
                opinions = [c for c in opinions if _EN_WORK_OPINION_RE.search(text.replace("’", "'"))]
            prefs += [c for c in opinions if c not in prefs]
        elif not _ZH_OTHER_SUBJECT.search(text) and not addressed:
            facts += [c for c in self._hits(strip_exchange(text), {}, self.PASTIME_PATTERNS) if c not in facts]
        return facts, prefs

    @staticmethod
    def _hits(text: str, signals: dict[str, list[str]], patterns: dict[str, list[str]]) -> list[str]:
        """Categories whose spec keywords or added patterns occur in ``text``."""
        if not text:
            return []
        compiled = _compiled(patterns)
        hits: list[str] = []
        for category in list(signals) + [c for c in patterns if c not in signals]:
            if any(s in text for s in signals.get(category, ())) or any(
                p.search(text) for p in compiled.get(category, ())
            ):
                hits.append(category)
        return hits

    @staticmethod
    def _ordered(found: list[str], *tables: dict[str, list[str]]) -> list[str]:
        """The spec's categories first, in its order, then the added ones."""
        order: list[str] = []
        for table in tables:
            order += [c for c in table if c not in order]
        return sorted(found, key=lambda c: order.index(c) if c in order else len(order))


__all__ = [
    "Clause",
    "SignalDetector",
    "dialect",
    "is_question",
    "is_question_to_assistant",
    "is_small_talk",
    "split_clauses",
]
