"""Chinese rules for facts: whom a clause is about, then the slot it fills.

Chinese drops subjects freely ("我在杭州工作，老板姓张"), so the subject of
one clause carries to the next clause that has none, and a relationship noun
without a possessor ("老板") is the user's. Each rule matches one kind of
statement (location, work, name, age, habit, possession …) and restates it in
the third person; what no rule recognises is restated as said by
``generic_fact``.
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.rules_common import (
    _CJK,
    GENERIC_CONFIDENCE,
    HEDGED_CONFIDENCE,
    _fact,
    _Item,
    _pref,
    _Subject,
    _tidy,
    third_person,
)
from factledger.infrastructure.offline.rules_zh_prefs import _LIKE
from factledger.infrastructure.offline.slots import (
    GENDER_WORDS,
    ZH_ROLE_PATTERN,
    looks_like_job,
    looks_like_organisation,
)

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
        return _Subject("owned", f"用户的{m.group('noun')}", True), text[m.end() :]
    m = _ROLE_SUBJECT.match(text)
    if m:
        return _Subject("role", f"用户的{m.group('role')}", True), text[m.end() :]
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
# Chinese: facts about the user
# ==========================================================================

_PLACE_CUT = re.compile(
    r"(?:很多|好多|好几|已经|快|有|了|啦|的时候|\d+|[一二两三四五六七八九十几半]+)(?:年|个月|月|天|周|星期)|(?:很多|好多|好几|已经|快要?|有|了|啦|的时候)"
)
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
    m = (
        re.match(r"^(?:住在|住|居住在|定居在|定居|生活在|常住)(?P<v>.+)$", rest)
        or re.match(r"^家(?:住)?在(?P<v>.+)$", rest)
        or re.match(r"^搬(?:家)?(?:到|去|来|回)(?:了)?(?P<v>.+?)(?:来了|去了|了|啦)?$", rest)
    )
    if m:
        place = _place(m.group("v"))
        return _fact(f"用户住在{third_person(place)}", "location") if place else None
    m = re.match(r"^在(?P<v>.+?)(?P<verb>工作|上班)(?:了|呢)?$", rest)
    if m and _place(m.group("v")) == _tidy(m.group("v")):
        place = _tidy(m.group("v"))
        category = "work" if looks_like_organisation(place) else "location"
        return _fact(f"用户在{third_person(place)}{m.group('verb')}", category)
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
        return _fact(f"用户{m.group('verb')}{third_person(_tidy(m.group('v')))}", "work")
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
        if value in GENDER_WORDS or (
            re.fullmatch(r"(?:一个)?" + _CJK + r"{1,5}人", value)
            and not re.match(r"^(?:一个)?(?:好|坏|个|大|小|老|新|男|女|普通|正常)", value)
        ):
            return _fact(f"用户是{value}", "personal_info")
    m = re.match(r"^(?P<verb>出生在|出生于|生于|老家在|老家是)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    m = re.match(r"^的?生日(?P<verb>是|在)(?P<v>.+)$", rest)
    if m and _tidy(m.group("v")):
        return _fact(f"用户的生日{m.group('verb')}{_tidy(m.group('v'))}", "personal_info")
    return None


_HABIT_ADVERBS = (
    r"每天|每周|每晚|每个?月|每年|每天早上|每天晚上|经常|常常|通常|一般|平时|平常|总是|天天|从不|从来不|很少|偶尔"
)


def _habit_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?P<adv>" + _HABIT_ADVERBS + r")(?P<v>.+)$", rest)
    if (
        m
        and not re.match(r"^(?:都|也)?(?:喜欢|不喜欢|讨厌|偏好|用|说|在|是)", m.group("v"))
        and "了" not in m.group("v")
    ):
        return _fact(f"用户{m.group('adv')}{third_person(_tidy(m.group('v')))}", "habit")
    m = re.match(r"^(?P<neg>不|从不|很少|不太)(?P<verb>吃|喝|抽|碰|熬夜)(?P<v>.*)$", rest)
    if m:
        return _fact(f"用户{m.group('neg')}{m.group('verb')}{_tidy(m.group('v'))}", "habit")
    m = re.match(r"^(?P<v>吃素|早睡早起|戒烟了?|戒酒了?|素食)$", rest)
    if m:
        return _fact(f"用户{_tidy(m.group('v'))}", "habit")
    return None


_NOT_A_THING = re.compile(
    r"^(?:点|些|一点|一些|时|时候|空|事|个问题|一个问题|问题|意思|必要|可能|办法|个想法|个事|件事|道理|用|关系)"
)


def _state_fact(rest: str) -> _Item | None:
    m = re.match(r"^(?P<neg>没有|没)?有(?P<v>.+)$", rest) or re.match(r"^(?P<neg>没)(?P<v>" + _CJK + r"{1,3})$", rest)
    if m:
        thing = _tidy(m.group("v"))
        if thing and not _NOT_A_THING.match(thing) and not re.search(r"吗|想|要|什么|去|来", thing):
            category = "relationship" if re.search(ZH_ROLE_PATTERN, thing) else "other"
            return _fact(f"用户{'没有' if m.group('neg') else '有'}{third_person(thing)}", category)
    m = re.match(r"^(?P<neg>不)?会(?P<v>(?:说|讲|开|弹|游|做|写|用|打|画|唱|跳|下|骑|编|修).+)$", rest)
    if m and "了" not in m.group("v"):
        return _fact(f"用户{m.group('neg') or ''}会{_tidy(m.group('v'))}", "other")
    return None


def _liked_thing(rest: str, said: str) -> _Item | None:
    """Content preferences (喜欢看X, 对X感兴趣) and likings stated as facts (用户喜欢猫)."""
    m = re.match(r"^对(?P<x>.+?)(?:很|非常|特别|比较|挺|超|也|都)*(?P<neg>不)?感兴趣$", rest)
    if m:
        return _pref(f"对{third_person(m.group('x'))}{m.group('neg') or ''}感兴趣", "content", said)
    m = _LIKE.match(rest)
    if not m or m.group("verb") in ("希望", "想要", "受不了"):
        return None
    obj = _tidy(m.group("obj"))
    # "最喜欢的电影是…" names a favourite; restated as said, not as a liking of "的电影"
    if not obj or obj.startswith(("你", "您", "的")):
        return None
    # the degree is part of what was said: 更喜欢 is not 喜欢
    verb = f"{m.group('strong') or ''}{m.group('neg') or ''}{m.group('verb')}"
    if m.group("verb") == "习惯":
        return _fact(f"用户习惯{third_person(obj)}", "habit")
    if re.match(r"^(?:看|读|听|聊|玩|研究|了解|学|关注|追)", obj):
        return _pref(f"{verb}{third_person(obj)}", "content", said)
    if m.group("verb") in ("偏好", "偏爱", "倾向于", "倾向"):
        return _pref(f"{verb}{third_person(obj)}", "other", said)
    # a liking that is not about replies is a fact about the user (spec's "preference" fact)
    return _fact(f"用户{verb}{third_person(obj)}", "preference")


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
    return _fact(f"用户的{noun}{verb}{third_person(_tidy(m.group('v')))}", category)


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
    return _fact(f"{subject.phrase}{third_person(_tidy(core))}", "relationship")


def _owned_fact(subject: _Subject, rest: str) -> _Item | None:
    core = _LEAD_ADVERBS.sub("", rest)
    m = re.match(r"^(?:在|是|叫|做|有|主要做)", core)
    if not m or not _tidy(core):
        return None
    category = "location" if core.startswith("在") else "work"
    return _fact(f"{subject.phrase}{third_person(_tidy(core))}", category)


# ==========================================================================
# Chinese: whatever else the user says of themself, restated as said
# ==========================================================================

# Which category a statement restated as said belongs to; the first that matches.
_ZH_CATEGORY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "personal_info",
        re.compile(
            r"\d+多?岁|[一二三四五六七八九十两百]+多?岁|男生|女生|男性|女性|男人|女人|男孩|女孩|名字|生日|星座|"
            r"身高|体重|头发|眼睛|皮肤|血型|属[鼠牛虎兔龙蛇马羊猴鸡狗猪]|失聪|色盲|近视|过敏|身体"
        ),
    ),
    (
        "relationship",
        re.compile(ZH_ROLE_PATTERN + r"|结婚|已婚|单身|离婚|嫁|娶|恋爱|约会|家人|亲戚|子女|父母|娃|亲人|家庭"),
    ),
    (
        "work",
        re.compile(
            r"工作|上班|职业|公司|工资|薪水|收入|生意|志愿|退休|辞职|学习|大学|学校|专业|年级|读书|上学|毕业|学生|"
            r"当.{0,6}(?:师|员|工|家|手)|研发|项目|客户"
        ),
    ),
    ("location", re.compile(r"住|搬|来自|出生在|出生于|长大|老家|家乡|国家|城市|乡下|农村|社区")),
    (
        "habit",
        re.compile(
            r"每天|每周|每个?月|每年|天天|经常|常常|总是|一直|习惯|从不|从来不|很少|偶尔|通常|平时|只吃|只喝|不吃|不喝"
        ),
    ),
    ("preference", re.compile(r"喜欢|爱|讨厌|害怕|怕|恐惧|感兴趣|迷|粉丝|偏爱|享受|在乎")),
)
_HEDGES = re.compile(r"可能|好像|大概|也许|估计|似乎|应该是|说不定")
_ZH_FILLER_OPENERS = re.compile(
    r"^(?:嘿+|哎+|唉+|嗯+|哦+|噢+|啊+|哈+|呵+|嘿嘿|哈哈+|怎么了|对了|其实|反正|话说|说真的|老实说|说实话)+"
)
#: what starts a clause about someone or something else: nothing of it is the user's
_OTHER_SUBJECT = re.compile(r"^(?:他|她|它|这|那|有人|别人|人家|大家|你|您|谁)")
#: clauses that set the scene for the next one: "每到周末，我去爬山"
_SCENE = re.compile(r"^(?:在|当|如果|要是|自从|从|每当|等到|因为|为了)|(?:时|后|以来|的时候|以后|之前|以前|期间)$")


def zh_category(text: str, subject: _Subject) -> str:
    """The spec's fact category for a statement no slot rule recognised."""
    if subject.kind == "role":
        return "relationship"
    for category, words in _ZH_CATEGORY_WORDS:
        if words.search(text):
            return category
    return "other"


def clean_said(text: str) -> str:
    """A clause as said, without interjections in front or particles behind."""
    text = _ZH_FILLER_OPENERS.sub("", text.strip()).lstrip("，, ")
    return _tidy(text)


#: first-person clauses that ask for help or report the moment, not the person
_NOT_ABOUT_ME = re.compile(
    r"想问|请教|想知道|想了解|想请|问一下|问个|帮我|有个问题|有一个问题|有件事|有点事|"
    r"我(?:也|就|还|现在)?(?:要去|马上|待会|一会|刚才|这会|等下|今天)|我在\S{1,2}$|"
    r"(?:有点|有些|好|太|特别|非常)(?:累|困|饿|渴|烦|忙|冷|热|晕|难受|不舒服|无聊|紧张|担心|郁闷)"
)
#: the user themself (我, 我家), not a group the user is in (我们周末去爬山)
_ME = re.compile(r"我(?!们)|我们家")


def generic_fact(said: str, subject: _Subject) -> _Item | None:
    """'我在阳台上养多肉' → 用户在花园里种玫瑰: a first-person statement restated in the third person."""
    text = clean_said(said)
    if len(text.replace("我", "")) < 2 or not _ME.search(text) or _NOT_ABOUT_ME.search(text):
        return None
    confidence = HEDGED_CONFIDENCE if _HEDGES.search(text) else GENERIC_CONFIDENCE
    third = third_person(text)
    return _Item("fact", third, zh_category(third, subject), confidence, generic=True)


def is_fragment(said: str) -> bool:
    """A subject-less piece that belongs to the statement next to it ("开了一家小面馆")."""
    text = clean_said(said)
    return len(text) >= 2 and not _OTHER_SUBJECT.match(text)


def is_scene(said: str) -> bool:
    """A clause that only sets time, place or condition for the next one."""
    return bool(_SCENE.search(clean_said(said)))
