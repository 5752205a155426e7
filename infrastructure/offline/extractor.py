"""RuleExtractor: the spec's fact and preference extraction without a language model.

It follows the spec's prompts as rules: state only what was said, in the third
person (我 → 用户), with the spec's categories. A message is read clause by
clause (split on punctuation and conjunctions, see ``signals.split_clauses``);
each clause yields at most one item, so nothing said is split or merged.

Chinese drops subjects freely ("我在杭州工作，老板姓张"), so the subject of
one clause carries to the next clause that has none, and a relationship noun
without a possessor ("老板") is the user's. Preferences about how the
assistant should reply are always the user's, whatever subject was carried:
only the user tells the assistant how to answer.

Confidence and strength follow the spec's scale: an explicit statement is a
fact at 0.9; an explicit preference 0.8, a strongly worded one
(非常/特别/最/一定…) 0.95.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from typing import NamedTuple

from factledger.domain.values import (
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    Relation,
    Turn,
)
from factledger.infrastructure.offline.judge import RuleJudge
from factledger.infrastructure.offline.signals import (
    Clause,
    SignalDetector,
    is_question,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
)
from factledger.infrastructure.offline.slots import (
    EN_ROLE_PATTERN,
    GENDER_WORDS,
    ZH_ROLE_PATTERN,
    looks_like_job,
    looks_like_organisation,
)

log = logging.getLogger(__name__)

EXTRACTOR_ID = "offline-rules/1"
FACT_CONFIDENCE = 0.9
PREF_STRENGTH = 0.8
STRONG_PREF_STRENGTH = 0.95

_CJK = r"[\u4e00-\u9fff]"
_STRONG = re.compile(r"非常|特别|一定|千万|务必|绝对|超级|极其|尤其|最(?!近|后|初|好)|\b(?:really|strongly|absolutely|definitely)\b", re.I)


class _Item(NamedTuple):
    """One finding: a fact (``kind == "fact"``) or a preference."""

    kind: str
    text: str
    category: str
    score: float = FACT_CONFIDENCE
    evidence: str = ""


class _Subject(NamedTuple):
    """Whom a clause is about: the user, a relative of the user's, something the user has …"""

    kind: str  # "user" | "role" | "owned" | "assistant" | "unknown"
    phrase: str = "用户"  # how the fact text names it: 用户 / 用户的老板 / 用户的公司
    explicit: bool = False  # named in this clause, not carried over


_USER = _Subject("user")


def _fact(text: str, category: str) -> _Item:
    # Last guard: whatever path built the text, a fact never speaks in the first person.
    return _Item("fact", _third_person(text), category)


def _pref(text: str, category: str, said: str) -> _Item:
    strength = STRONG_PREF_STRENGTH if _STRONG.search(said) else PREF_STRENGTH
    # evidence quotes the clause as said, in the message's language (spec: "用户说'直接说重点'")
    evidence = f"The user said '{said}'" if _is_english(said) else f"用户说'{said}'"
    return _Item("preference", text, category, strength, evidence)


def _third_person(text: str) -> str:
    """我 → 用户, 我的 → 用户的, 我们公司 → 用户的公司: how the spec wants facts written."""
    text = re.sub(r"我们(?=公司|团队|部门|小组|组|单位|学校|项目)", "用户的", text)
    text = text.replace("我的", "用户的").replace("我们", "用户").replace("我", "用户")
    return text


def _tidy(value: str) -> str:
    """A value as said, without trailing particles or quotes."""
    value = value.strip().strip("'\"“”‘’「」 ")
    return re.sub(r"(?:了|啦|呢|哦|喔|呀|啊|吧)+$", "", value).strip()


# ==========================================================================
# Chinese: subjects
# ==========================================================================

_OPENERS = re.compile(r"^(?:嗯+|哦+|噢|啊|对了|其实|另外|还有|而且|就是|反正|话说|顺便说一下|顺便说|说一下)[，, ]*")
_ROLE_SUBJECT = re.compile(r"^(?:我们家的?|我家的?|我们的|我的|我)?(?P<role>" + ZH_ROLE_PATTERN + r")")
_OWNED_SUBJECT = re.compile(r"^我们的?(?P<noun>公司|团队|部门|小组|组|单位|学校|项目组?)")
# Said before the verb, they change nothing the rules keep ("我现在住在上海" → 用户住在上海);
# habit adverbs (每天, 经常) are not here: they are the habit.
_LEAD_ADVERBS = re.compile(
    r"^(?:现在|目前|如今|已经|刚刚?|也|还|都|其实|本来|一直|平时|平常|真的|确实|主要|最近|前段时间|前不久|去年|上个月)+"
)


def _parse_subject(text: str, carried: _Subject) -> tuple[_Subject, str]:
    """The clause's subject and the rest of the clause after it."""
    m = _OWNED_SUBJECT.match(text)
    if m:
        return _Subject("owned", f"用户的{m.group('noun')}", True), text[m.end():]
    m = _ROLE_SUBJECT.match(text)
    if m:
        return _Subject("role", f"用户的{m.group('role')}", True), text[m.end():]
    if text.startswith("我们家"):
        return _Subject("user", explicit=True), text[2:]
    if text.startswith("我们"):
        # a group statement ("我们周末去爬山") is not a fact about the user alone
        return _Subject("unknown", "用户", True), text[2:]
    if text.startswith("我"):
        return _Subject("user", explicit=True), text[1:]
    if text.startswith(("他", "她")):
        if carried.kind == "role":
            return carried._replace(explicit=True), text[1:]
        return _Subject("unknown", "用户", True), text[1:]
    if text.startswith(("你", "您", "请你", "请您")):
        return _Subject("assistant", "用户", True), re.sub(r"^请?(?:你|您)", "", text)
    if text.startswith("请"):
        return _Subject("assistant", "用户", True), text[1:]
    return carried._replace(explicit=False), text


# ==========================================================================
# Chinese: preferences about replies (always the user's)
# ==========================================================================

_STYLE_REQUESTS: tuple[tuple[str, str], ...] = (
    (r"(?:不用|不要|别|无需)(?:再|多)?(?:解释|说明)", "偏好不加解释的回复风格"),
    (r"直接(?:说|讲|点|给)|(?:说|讲)重点|重点说|(?:不要|别|少)(?:说)?废话|别(?:太)?啰嗦", "偏好简洁直接的回复风格"),
    (r"(?:简短|简洁|精简|简单|短)一?(?:点|些)|(?:说|讲|回答|回复|写)得?(?:简短|简洁|精简|短)|(?:不要|别)(?:太)?长", "偏好简短的回复风格"),
    (r"(?:详细|具体)一?(?:点|些)|(?:说|讲|回答|回复|解释|写)得?(?:详细|具体)", "偏好详细的回复风格"),
    (r"(?:正式)一?(?:点|些)", "偏好正式的回复风格"),
    (r"(?:随意|口语化)一?(?:点|些)", "偏好口语化的回复风格"),
)
_STYLE_WORDS = re.compile(r"简短|简洁|简单|精简|短|详细|具体|直接|重点|啰嗦|废话|正式|随意|口语|幽默|委婉|解释")
_REPLY_NOUNS = re.compile(r"(?:回复|回答|答复|答案|解释|说明)$")
_LANGUAGES = r"中文|英文|英语|汉语|日语|普通话|粤语"
_FORMATS = r"列表|表格|代码块|代码|markdown|Markdown|图表|段落|要点"
_REPLY_CONTEXT = re.compile(r"回复|回答|答|给我|请|以后|输出|展示|列出|发我|跟我|和我|交流|沟通|聊")
_TIME = (
    r"(?P<t>(?:每天)?(?:早上|上午|中午|下午|晚上|夜里|深夜|半夜|周末|工作日|下班后|下班时间|上班时间|休息时间)"
    r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})?点?(?:以后|之后|后|前|以前|之前)?"
    r"|(?:\d{1,2}|[一二三四五六七八九十]{1,3})点(?:以后|之后|后|前|以前|之前))"
)
_CONTACT = r"(?P<act>打扰|联系|找|发消息|发信息|打电话|提醒|推送)"
_CONTACT_PHRASE = {"打扰": "被打扰", "联系": "被联系", "找": "被联系", "发消息": "收到消息",
                   "发信息": "收到消息", "推送": "收到推送", "打电话": "接到电话", "提醒": "被提醒"}
# tool names stop at the first CJK character: "VSCode写代码" names VSCode
_TOOL = re.compile(r"(?:用|使用|通过)\s*(?P<tool>[A-Za-z][A-Za-z0-9.+#-]*(?: [A-Z][A-Za-z0-9.+#-]*)?|微信|企业微信|钉钉|飞书|QQ|邮件|邮箱)")


def _time_preference(rest: str, said: str) -> _Item | None:
    m = re.search(_TIME + r".{0,4}?(?P<neg>别|不要|不用|勿|不想|不希望)(?:再)?(?:被)?(?:给我)?" + _CONTACT, rest)
    if m:
        return _pref(f"{m.group('t')}不希望{_CONTACT_PHRASE[m.group('act')]}", "time", said)
    m = re.search(r"(?:请|最好|可以|尽量)?(?:在)?" + _TIME + r"(?:再)?(?:给我)?" + _CONTACT, rest)
    if m and m.group("act") != "打扰":
        return _pref(f"偏好在{m.group('t')}{_CONTACT_PHRASE[m.group('act')]}", "time", said)
    return None


def _tool_preference(subject: _Subject, rest: str, said: str) -> _Item | None:
    """'我平时用VSCode写代码' → 偏好使用VSCode; only the user's own habits, never one-off requests."""
    # "用Python写个脚本" is a task, not a habit: it needs 我 or a habitual adverb
    if subject.kind != "user" or not (subject.explicit or re.search(r"平时|平常|一般|通常|经常|总是|习惯|一直", said)):
        return None
    m = re.match(
        r"^(?:一般|通常|经常|常|总是|都|习惯)*(?:用|使用)\s*(?P<tool>[A-Za-z][A-Za-z0-9.+#-]*(?: [A-Z][A-Za-z0-9.+#-]*)?|微信|钉钉|飞书|QQ)", rest
    )
    if m and not re.search(r"了|过", rest):
        return _pref(f"偏好使用{m.group('tool')}", "tool", said)
    return None


def _request_preference(subject: _Subject, rest: str, said: str) -> _Item | None:
    """Requests on how to reply: 简短点, 说重点, 用表格, 用中文回复, 晚上别打扰我 …"""
    item = _time_preference(rest, said)
    if item:
        return item
    # "我用表格记账" is not a request; imperatives and replies-talk are
    request_like = subject.kind in ("assistant", "unknown") or not subject.explicit or bool(_REPLY_CONTEXT.search(rest))
    m = re.search(r"(?P<neg>别|不要|不用|少)?(?:用|以|说|讲)(?P<l>" + _LANGUAGES + r")", rest)
    if m and request_like and not re.search(r"会(?:说|讲)", rest):
        verb = "不希望" if m.group("neg") else "偏好"
        return _pref(f"{verb}用{m.group('l')}回复", "language", said)
    if re.search(r"(?:少用|别用|不要用|不用|避免|少点|少一点)(?:专业)?术语", rest):
        return _pref("偏好少用专业术语", "language", said)
    m = re.search(r"(?P<neg>别|不要|不用|少)?(?:用|以|做成|列成|整理成|分成|给我列?个?)(?P<f>" + _FORMATS + r")", rest)
    if m and request_like:
        verb = "不希望" if m.group("neg") else "偏好"
        return _pref(f"{verb}用{m.group('f').lower()}的形式回复", "format", said)
    if re.search(r"分点|分条|列要点", rest) and request_like:
        return _pref("偏好分点列出的回复格式", "format", said)
    m = re.search(r"(?:用|通过)(?P<tool>微信|企业微信|钉钉|飞书|QQ|邮件|邮箱|电话|短信)(?:联系|找|发|通知)", rest)
    if m:
        return _pref(f"偏好通过{m.group('tool')}联系", "tool", said)
    if request_like:
        for pattern, text in _STYLE_REQUESTS:
            if re.search(pattern, rest):
                return _pref(text, "communication_style", said)
    return None


_LIKE = re.compile(
    r"^(?P<strong>非常|特别|很|最|超级|比较|更|还是|真的|一直)?"
    r"(?P<neg>不太|不怎么|并不|不)?(?P<verb>喜欢|偏好|偏爱|倾向于|倾向|习惯|爱|希望|想要|讨厌|受不了)"
    r"(?P<obj>.+)$"
)


def _liked_reply_preference(rest: str, said: str) -> _Item | None:
    """'喜欢简短的回复' → 偏好简短的回复风格; '习惯用VSCode' → 偏好使用VSCode."""
    m = _LIKE.match(rest)
    if not m:
        return None
    obj = _tidy(m.group("obj"))
    negative = bool(m.group("neg")) or m.group("verb") in ("讨厌", "受不了")
    said_verb = f"{m.group('neg') or ''}{m.group('verb')}"
    lang = re.search(r"(?:用|以)?(?P<l>" + _LANGUAGES + r")(?:回复|回答|交流|沟通)?$", obj)
    if lang and (lang.start() == 0 or obj.startswith(("用", "以"))):
        return _pref(f"{'不希望' if negative else '偏好'}用{lang.group('l')}回复", "language", said)
    fmt = re.match(r"^(?:用|以|看)?(?P<f>" + _FORMATS + r")(?:的形式|格式|形式)?(?:回复|回答|展示|呈现)?$", obj)
    if fmt:
        return _pref(f"{'不希望' if negative else '偏好'}用{fmt.group('f').lower()}的形式回复", "format", said)
    tool = _TOOL.match(obj)
    if tool and not re.search(r"了|过", obj):
        return _pref(f"{'不喜欢' if negative else '偏好'}使用{tool.group('tool')}", "tool", said)
    requested = next((text for pattern, text in _STYLE_REQUESTS if re.search(pattern, obj)), None)
    about_replies = (_REPLY_NOUNS.search(obj) or obj.endswith("风格") or len(obj) <= 4
                     or re.search(r"回复|回答|说话|讲话|沟通", obj) or requested)
    if _STYLE_WORDS.search(obj) and about_replies:
        if negative:
            return _pref(f"{said_verb}{obj}", "communication_style", said)
        if obj.endswith("风格"):
            return _pref(f"偏好{obj}", "communication_style", said)
        if _REPLY_NOUNS.search(obj):  # 简短的回复 → 偏好简短的回复风格 (the spec's example)
            return _pref(f"偏好{obj}风格", "communication_style", said)
        if requested:  # 喜欢你直接说重点 → the same wording as the request 直接说重点
            return _pref(requested, "communication_style", said)
        return _pref(f"偏好{_third_person(obj)}", "communication_style", said)
    return None


# ==========================================================================
# Chinese: facts about the user
# ==========================================================================

_PLACE_CUT = re.compile(r"(?:很多|好多|好几|已经|快|有|了|啦|的时候|\d+|[一二两三四五六七八九十几半]+)(?:年|个月|月|天|周|星期)|(?:很多|好多|好几|已经|快要?|有|了|啦|的时候)")
_NOT_A_PLACE = re.compile(r"^(?:得|的|着|过|一下|不|很|这|那|哪)|去|来|看|玩|旅游|出差|吃|买|开会|附近吗")


def _place(value: str) -> str | None:
    """A place as said ("杭州", "上海浦东"), cut before "三年了"-like tails; None if not a place."""
    value = _tidy(value)
    m = _PLACE_CUT.search(value)
    if m and m.start() > 0:
        value = _tidy(value[: m.start()])
    if not value or len(value) > 15 or _NOT_A_PLACE.search(value) or not re.search(_CJK + r"|[A-Za-z]", value):
        return None
    return value


def _location_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?:住在|住|居住在|定居在|定居|生活在|常住)(?P<v>.+)$", rest) or re.match(
        r"^家(?:住)?在(?P<v>.+)$", rest
    ) or re.match(r"^搬(?:家)?(?:到|去|来|回)(?:了)?(?P<v>.+?)(?:来了|去了|了|啦)?$", rest)
    if m:
        place = _place(m.group("v"))
        return _fact(f"用户住在{_third_person(place)}", "location") if place else None
    m = re.match(r"^在(?P<v>.+?)(?P<verb>工作|上班)(?:了|呢)?$", rest)
    if m and _place(m.group("v")) == _tidy(m.group("v")):
        place = _tidy(m.group("v"))
        category = "work" if looks_like_organisation(place) else "location"
        return _fact(f"用户在{_third_person(place)}{m.group('verb')}", category)
    m = re.match(r"^坐标(?:在)?(?P<v>.+)$", rest)
    if m and _place(m.group("v")):
        return _fact(f"用户在{_place(m.group('v'))}", "location")
    return None


def _work_fact(rest: str) -> _Item | None:
    m = re.match(r"^在(?P<v>.+?)(?P<verb>做|当|担任)(?P<w>.+?)(?:的工作|工作)?$", rest)
    if m and (looks_like_job(m.group("w")) or looks_like_organisation(m.group("v"))):
        return _fact(f"用户在{_tidy(m.group('v'))}{m.group('verb')}{_tidy(m.group('w'))}", "work")
    m = re.match(r"^是做(?P<v>.+?)的$", rest)
    if m:
        return _fact(f"用户是做{m.group('v')}的", "work")
    m = re.match(r"^(?P<verb>负责|从事|主要负责)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户{m.group('verb')}{_third_person(_tidy(m.group('v')))}", "work")
    m = re.match(r"^的(?P<noun>工作|职位|岗位|职业|专业)是(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户的{m.group('noun')}是{_tidy(m.group('v'))}", "work")
    m = re.match(r"^(?P<neg>不)?是(?P<v>.+)$", rest)
    if m and looks_like_job(_tidy(m.group("v"))):
        return _fact(f"用户{m.group('neg') or ''}是{_tidy(m.group('v'))}", "work")
    return None


def _personal_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?P<verb>叫|名叫)(?P<v>[^\s，,。]{1,12})$", rest)
    if m and not re.match(r"^(?:做|了|我|你|什么|啥)", m.group("v")):
        return _fact(f"用户{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    m = re.match(r"^的?名字(?P<verb>是|叫)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户的名字{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    m = re.match(r"^姓(?P<v>" + _CJK + r"{1,2})$", rest)
    if m:
        return _fact(f"用户姓{m.group('v')}", "personal_info")
    m = re.match(r"^(?P<pre>今年|已经)?(?P<v>\d{1,3}|[一二两三四五六七八九十]{1,3})(?:周)?岁(?:了|啦)?$", rest)
    if m:
        return _fact(f"用户{'今年' if m.group('pre') == '今年' else ''}{m.group('v')}岁", "personal_info")
    m = re.match(r"^是(?P<v>.+)$", rest)
    if m:
        value = _tidy(m.group("v"))
        if value in GENDER_WORDS or re.fullmatch(r"(?:一个)?" + _CJK + r"{1,5}人", value) and not re.match(
            r"^(?:一个)?(?:好|坏|个|大|小|老|新|男|女|普通|正常)", value
        ):
            return _fact(f"用户是{value}", "personal_info")
    m = re.match(r"^(?P<verb>出生在|出生于|生于|老家在|老家是)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    m = re.match(r"^的?生日(?P<verb>是|在)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户的生日{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    return None


_HABIT_ADVERBS = r"每天|每周|每晚|每个?月|每年|每天早上|每天晚上|经常|常常|通常|一般|平时|平常|总是|天天|从不|从来不|很少|偶尔"


def _habit_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?P<adv>" + _HABIT_ADVERBS + r")(?P<v>.+)$", rest)
    if m and not re.match(r"^(?:都|也)?(?:喜欢|不喜欢|讨厌|偏好|用|说|在|是)", m.group("v")) and "了" not in m.group("v"):
        return _fact(f"用户{m.group('adv')}{_third_person(_tidy(m.group('v')))}", "habit")
    m = re.match(r"^(?P<neg>不|从不|很少|不太)(?P<verb>吃|喝|抽|碰|熬夜)(?P<v>.*)$", rest)
    if m:
        return _fact(f"用户{m.group('neg')}{m.group('verb')}{_tidy(m.group('v'))}", "habit")
    m = re.match(r"^(?P<v>吃素|早睡早起|戒烟了?|戒酒了?|素食)$", rest)
    if m:
        return _fact(f"用户{_tidy(m.group('v'))}", "habit")
    return None


_NOT_A_THING = re.compile(r"^(?:点|些|一点|一些|时|时候|空|事|个问题|一个问题|问题|意思|必要|可能|办法|个想法|个事|件事|道理|用|关系)")


def _state_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?P<neg>没有|没)?有(?P<v>.+)$", rest) or re.match(r"^(?P<neg>没)(?P<v>" + _CJK + r"{1,3})$", rest)
    if m:
        thing = _tidy(m.group("v"))
        if thing and not _NOT_A_THING.match(thing) and not re.search(r"吗|想|要|什么|去|来", thing):
            category = "relationship" if re.search(ZH_ROLE_PATTERN, thing) else "other"
            return _fact(f"用户{'没有' if m.group('neg') else '有'}{_third_person(thing)}", category)
    m = re.match(r"^(?P<neg>不)?会(?P<v>(?:说|讲|开|弹|游|做|写|用|打|画|唱|跳|下|骑|编|修).+)$", rest)
    if m and "了" not in m.group("v"):
        return _fact(f"用户{m.group('neg') or ''}会{_tidy(m.group('v'))}", "other")
    return None


def _liked_thing(rest: str, said: str) -> _Item | None:
    """Content preferences (喜欢看X, 对X感兴趣) and likings stated as facts (用户喜欢猫)."""
    m = re.match(r"^对(?P<x>.+?)(?:很|非常|特别|比较|挺|超|也|都)*(?P<neg>不)?感兴趣$", rest)
    if m:
        return _pref(f"对{_third_person(m.group('x'))}{m.group('neg') or ''}感兴趣", "content", said)
    m = _LIKE.match(rest)
    if not m or m.group("verb") in ("希望", "想要", "受不了"):
        return None
    obj = _tidy(m.group("obj"))
    if not obj or obj.startswith(("你", "您")):
        return None
    verb = f"{m.group('neg') or ''}{m.group('verb')}"
    if m.group("verb") == "习惯":
        return _fact(f"用户习惯{_third_person(obj)}", "habit")
    if re.match(r"^(?:看|读|听|聊|玩|研究|了解|学|关注|追)", obj):
        return _pref(f"{verb}{_third_person(obj)}", "content", said)
    if m.group("verb") in ("偏好", "偏爱", "倾向于", "倾向"):
        return _pref(f"{verb}{_third_person(obj)}", "other", said)
    # a liking that is not about replies is a fact about the user (spec's "preference" fact)
    return _fact(f"用户{verb}{_third_person(obj)}", "preference")


_PERSONAL_NOUNS = re.compile(r"名字|生日|年龄|星座|血型|属相")
_WORK_NOUNS = re.compile(r"工作|职位|岗位|职业|公司|单位|专业|行业")


def _possession_fact(rest: str) -> _Item | None:
    """'我的车是特斯拉' → 用户的车是特斯拉."""
    m = re.match(r"^的(?P<noun>(?:" + _CJK + r"|[A-Za-z]){1,6}?)(?P<verb>是|在|叫)(?P<v>.+)$", rest)
    if not m or not _tidy(m.group("v")):
        return None
    noun, verb = m.group("noun"), m.group("verb")
    if _PERSONAL_NOUNS.search(noun):
        category = "personal_info"
    elif noun == "家" or (noun in ("公司", "单位") and verb == "在"):
        category = "location"
    elif _WORK_NOUNS.search(noun):
        category = "work"
    elif re.search(r"爱好|兴趣", noun):
        category = "preference"
    else:
        category = "other"
    return _fact(f"用户的{noun}{verb}{_third_person(_tidy(m.group('v')))}", category)


def _user_facts(rest: str, said: str) -> _Item | None:
    core = _LEAD_ADVERBS.sub("", rest)
    for rule in (_location_fact, _work_fact, _personal_fact):
        item = rule(core)
        if item:
            return item
    item = _liked_thing(core, said) or _habit_fact(rest) or _habit_fact(core)
    return item or _state_fact(core) or _possession_fact(core)


# ==========================================================================
# Chinese: facts about the user's relatives and things
# ==========================================================================

_ROLE_PREDICATE = re.compile(
    r"^(?:也|还|都)?(?:姓|叫|名叫|是|今年|住|家在|喜欢|不喜欢|讨厌|爱|有|没有|不吃|不喝|每天|经常|的名字|"
    r"在.{1,15}(?:工作|上班|读书|上学|住)|\d{1,3}岁|[一二两三四五六七八九十]{1,3}岁)"
)


def _role_fact(subject: _Subject, rest: str) -> _Item | None:
    core = _LEAD_ADVERBS.sub("", rest)
    if not _ROLE_PREDICATE.match(core) or not _tidy(core):
        return None
    return _fact(f"{subject.phrase}{_third_person(_tidy(core))}", "relationship")


def _owned_fact(subject: _Subject, rest: str) -> _Item | None:
    core = _LEAD_ADVERBS.sub("", rest)
    m = re.match(r"^(?:在|是|叫|做|有|主要做)", core)
    if not m or not _tidy(core):
        return None
    category = "location" if core.startswith("在") else "work"
    return _fact(f"{subject.phrase}{_third_person(_tidy(core))}", category)


# ==========================================================================
# English (minimal)
# ==========================================================================

_EN_STYLE = re.compile(r"\b(?:short|shorter|brief|concise|succinct|detailed|thorough|direct|to the point|simple|formal|casual)\b", re.I)
_EN_FORMAT = re.compile(r"\b(?:bullet(?: point)?s?|lists?|tables?|code(?: blocks?)?|markdown|paragraphs?)\b", re.I)
_EN_LANGUAGE = re.compile(r"\b(?:english|chinese|mandarin|jargon)\b", re.I)
_EN_TIME = re.compile(r"\b(?:mornings?|evenings?|nights?|weekends?|after \d+|before \d+)\b", re.I)
_EN_CONTENT = re.compile(r"^(?:reading|watching|listening to|learning|talking about|articles|books|news|videos|stories)\b", re.I)
_EN_JOB = re.compile(r"(?:er|or|ist|ian|ant|ent|ee|manager|engineer|student|teacher|doctor|nurse|lawyer|chef|scientist)$", re.I)


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
    t = re.sub(r"^(?:well|also|oh|btw|by the way|actually|so),?\s+", "", t, flags=re.I)
    t = t.replace("’", "'")
    I_AM = r"(?:i'm|i am|im)"

    m = re.match(rf"^(?:i (?:now |currently )?live in|{I_AM} (?:now )?(?:living|based) in|i(?:'ve| have)? (?:just )?moved to) (?P<v>.+)$", t, re.I)
    if m and _en_place(m.group("v")):
        return _fact(f"The user lives in {_en_place(m.group('v'))}", "location")
    m = re.match(rf"^(?:my name is|my name's|{I_AM} called|call me) (?P<v>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*)$", t, re.I)
    if m:
        return _fact(f"The user's name is {m.group('v')}", "personal_info")
    m = re.match(rf"^{I_AM} (?P<v>\d{{1,3}})(?: years old| years of age| yo)?$", t, re.I)
    if m:
        return _fact(f"The user is {m.group('v')} years old", "personal_info")
    m = re.match(r"^i work (?P<prep>at|for) (?P<v>.+)$", t, re.I)
    if m:
        return _fact(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(r"^i work (?P<prep>in|as) (?P<v>.+)$", t, re.I)
    if m:
        place = _en_place(m.group("v")) if m.group("prep").lower() == "in" else None
        if place:
            return _fact(f"The user works in {place}", "location")
        return _fact(f"The user works {m.group('prep').lower()} {m.group('v')}", "work")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN})(?:'s name is| is called| is named) (?P<v>.+)$", t, re.I)
    if m:
        return _fact(f"The user's {m.group('role').lower()}'s name is {m.group('v')}", "relationship")
    m = re.match(rf"^my (?P<role>{EN_ROLE_PATTERN}) (?P<rest>(?:is|works|lives|likes|has) .+)$", t, re.I)
    if m:
        return _fact(f"The user's {m.group('role').lower()} {m.group('rest')}", "relationship")
    m = re.match(rf"^{I_AM} (?P<art>an?) (?P<v>.+)$", t, re.I)
    if m:
        category = "work" if _EN_JOB.search(m.group("v")) else "other"
        return _fact(f"The user is {m.group('art').lower()} {m.group('v')}", category)
    m = re.match(r"^i (?:don't|do not) (?P<v>eat|drink|smoke)\b ?(?P<x>.*)$", t, re.I)
    if m:
        return _fact(f"The user does not {m.group('v').lower()} {m.group('x')}".strip(), "habit")
    m = re.match(r"^i (?:don't|do not) have (?P<v>.+)$", t, re.I)
    if m:
        return _fact(f"The user does not have {m.group('v')}", "other")
    m = re.match(r"^i (?:have|own|have got|'ve got) (?P<v>.+)$", t, re.I)
    if m and not re.match(r"^(?:a question|to|an idea|no idea|been)\b", m.group("v"), re.I):
        category = "relationship" if re.search(rf"\b(?:{EN_ROLE_PATTERN})s?\b|\bchildren\b|\bkids\b", m.group("v"), re.I) else "other"
        return _fact(f"The user has {m.group('v')}", category)
    m = re.match(r"^i (?P<adv>always|usually|often|normally|never) (?P<v>.+)$", t, re.I)
    if m:
        return _fact(f"The user {m.group('adv').lower()} {_en_verb3(m.group('v'))}", "habit")

    m = re.match(r"^i(?: really| much| strongly)? (?P<verb>prefer|like|love|enjoy|want)(?P<x> .+)$", t, re.I)
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
        return _fact(f"The user {_en_verb3(m.group('verb').lower())} {obj}", "preference")
    m = re.match(r"^i (?:(?:don't|do not) (?:like|enjoy|want)|hate|dislike) (?P<x>.+)$", t, re.I)
    if m:
        obj = m.group("x").strip()
        category = _en_pref_category(obj)
        if category:
            return _pref(f"Dislikes {obj}", category, said)
        return _fact(f"The user does not like {obj}", "preference")
    m = re.match(r"^(?:please )?(?:reply|answer|respond|write|talk)(?: to me)? in (?P<l>english|chinese|mandarin)$", t, re.I)
    if m:
        return _pref(f"Prefers replies in {m.group('l').capitalize()}", "language", said)
    m = re.match(r"^(?:please )?(?:keep (?:it|answers|replies)|be) (?P<s>short|brief|concise|detailed|direct)$", t, re.I)
    if m:
        return _pref(f"Prefers {m.group('s').lower()} answers", "communication_style", said)
    return None


# ==========================================================================
# The extractor
# ==========================================================================


def _is_english(text: str) -> bool:
    return bool(re.search(r"[A-Za-z]", text)) and not re.search(_CJK, text)


class RuleExtractor:
    """Implements ``Extractor`` with the rules above; deterministic, offline, never raises."""

    def __init__(self, detector: SignalDetector | None = None) -> None:
        self._detector = detector or SignalDetector()
        self._judge = RuleJudge()

    @property
    def extractor_id(self) -> str:
        return EXTRACTOR_ID

    def extract(
        self,
        message: str,
        context: Sequence[Turn] = (),
        known_facts: Sequence[str] = (),
    ) -> Extraction:
        """Facts and preferences stated in ``message``.

        ``context`` is accepted for the protocol; the rules read only what the
        user said in this message, as the spec's "only what is stated" asks.
        ``known_facts`` serve to mark ``conflicts_with`` on a fact that updates
        or contradicts one of them.
        """
        if not isinstance(message, str):
            message = ""
        signals = self._detector.detect(message)
        # The detector is a cheap gate, as in the spec; the rules below decide.
        # Either kind of signal opens both, since one clause's subject (我在杭州工作)
        # often sets up another clause's preference (平时喜欢简短的回复).
        if not (signals["has_fact_signal"] or signals["has_pref_signal"]):
            return self._empty(signals)
        try:
            items = self._items(message)
        except Exception:  # the protocol promises no exception on odd input
            log.exception("offline rules failed on a message; recording nothing for it")
            return self._empty(signals)
        return self._build(items, signals, known_facts)

    # -- internals ---------------------------------------------------------

    def _empty(self, signals: dict) -> Extraction:
        return Extraction(extractor_id=EXTRACTOR_ID, raw_output=json.dumps({"facts": [], "preferences": []}),
                          signals=dict(signals))

    def _items(self, message: str) -> list[_Item]:
        items: list[_Item] = []
        carried = _USER
        for clause in split_clauses(message):
            if is_small_talk(clause.text):
                continue
            item, carried = self._clause(clause, carried)
            if item is not None and all(item.text != seen.text for seen in items):
                items.append(item)
        return items

    def _clause(self, clause: Clause, carried: _Subject) -> tuple[_Item | None, _Subject]:
        said = clause.text.strip()
        if _is_english(said):
            return (None if is_question(clause) else _en_clause(said, said)), _USER
        text = _OPENERS.sub("", said)
        subject, rest = _parse_subject(text, carried)
        asks_assistant = is_question_to_assistant(clause)

        # How to reply is the user's to say, even after "老板姓张，…"; but
        # "我老婆喜欢简短的回复" names someone else on purpose.
        if not (subject.kind == "role" and subject.explicit):
            core = _LEAD_ADVERBS.sub("", rest)
            item = (_liked_reply_preference(core, said) or _tool_preference(subject, core, said)
                    or _request_preference(subject, core, said))
            if item is not None:
                return item, _USER
        if is_question(clause) or asks_assistant:
            return None, carried
        if subject.kind == "user":
            return _user_facts(rest, said), subject._replace(explicit=False)
        if subject.kind == "role":
            return _role_fact(subject, rest), subject._replace(explicit=False)
        if subject.kind == "owned":
            return _owned_fact(subject, rest), subject._replace(explicit=False)
        return None, carried

    def _build(self, items: list[_Item], signals: dict, known_facts: Sequence[str]) -> Extraction:
        facts = [
            ExtractedFact(text=i.text, category=i.category, confidence=i.score,
                          conflicts_with=self._conflict(i.text, known_facts))
            for i in items if i.kind == "fact"
        ]
        preferences = [
            ExtractedPreference(text=i.text, category=i.category, strength=i.score, evidence=i.evidence)
            for i in items if i.kind == "preference"
        ]
        raw = json.dumps(
            {"facts": [[f.text, f.category] for f in facts],
             "preferences": [[p.text, p.category] for p in preferences]},
            ensure_ascii=False,
        )
        return Extraction(extractor_id=EXTRACTOR_ID, facts=facts, preferences=preferences,
                          prompt_id=None, raw_output=raw, signals=dict(signals))

    def _conflict(self, text: str, known_facts: Sequence[str]) -> str | None:
        """The known fact this one updates or contradicts, as the spec's prompt asks to mark."""
        for known in known_facts or ():
            if isinstance(known, str) and known.strip():
                if self._judge.judge(known, text).relation in (Relation.UPDATE, Relation.CONFLICT):
                    return known
        return None


__all__ = ["EXTRACTOR_ID", "RuleExtractor"]
