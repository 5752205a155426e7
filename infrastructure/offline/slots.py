"""Slots: which attribute of the user a third-person fact talks about.

The offline judge and embedder have no language model, so they need another
way to see that "用户住在杭州" and "用户住在上海" are about the same thing
(where the user lives) with different values, while "用户在杭州工作" is about
something else. This module is that shared table: a few patterns over the
fact texts the rule extractor writes (and the obvious paraphrases an LLM
writes), each naming a slot.

Slot names are plain strings:

* user attributes: ``residence``, ``work_location``, ``employer``,
  ``employment``, ``name``, ``surname``, ``age``, ``job``, ``gender``,
  ``origin``, ``responsibility``, ``birthday``;
* a relative's attribute: ``relationship:<role>:<attribute>``, the role in
  its canonical Chinese form so "my wife" and "我老婆" share a slot;
* polarity slots, whose value is ``yes`` or ``no``: ``possession:<thing>``,
  ``likes:<thing>``, ``eats:<thing>`` … so that 用户有车 / 用户没有车 land on
  the same slot and contradict each other.
"""

from __future__ import annotations

import re
import unicodedata

# --------------------------------------------------------------------------
# Roles: relationship nouns, canonical form, and whether one person can have
# only one of them (a new surname for "the boss" replaces the old one, a new
# surname for "a colleague" is just another colleague).
# --------------------------------------------------------------------------

#: surface form -> canonical role
ROLE_SYNONYMS: dict[str, str] = {
    "老板": "老板",
    "领导": "领导",
    "上司": "领导",
    "主管": "主管",
    "老婆": "老婆",
    "妻子": "老婆",
    "媳妇": "老婆",
    "太太": "老婆",
    "老公": "老公",
    "丈夫": "老公",
    "先生": "老公",
    "爱人": "爱人",
    "对象": "对象",
    "女朋友": "女朋友",
    "女友": "女朋友",
    "男朋友": "男朋友",
    "男友": "男朋友",
    "孩子": "孩子",
    "小孩": "孩子",
    "女儿": "女儿",
    "儿子": "儿子",
    "爸爸": "爸爸",
    "爸": "爸爸",
    "父亲": "爸爸",
    "妈妈": "妈妈",
    "妈": "妈妈",
    "母亲": "妈妈",
    "哥哥": "哥哥",
    "姐姐": "姐姐",
    "弟弟": "弟弟",
    "妹妹": "妹妹",
    "爷爷": "爷爷",
    "奶奶": "奶奶",
    "外公": "外公",
    "外婆": "外婆",
    "同事": "同事",
    "同学": "同学",
    "朋友": "朋友",
    "室友": "室友",
    "邻居": "邻居",
    "客户": "客户",
    "合伙人": "合伙人",
    # English, mapped onto the Chinese canonical role
    "boss": "老板",
    "manager": "领导",
    "wife": "老婆",
    "husband": "老公",
    "partner": "爱人",
    "girlfriend": "女朋友",
    "boyfriend": "男朋友",
    "kid": "孩子",
    "child": "孩子",
    "son": "儿子",
    "daughter": "女儿",
    "father": "爸爸",
    "dad": "爸爸",
    "mother": "妈妈",
    "mom": "妈妈",
    "mum": "妈妈",
    "brother": "哥哥",
    "sister": "姐姐",
    "colleague": "同事",
    "coworker": "同事",
    "friend": "朋友",
    "roommate": "室友",
    "neighbor": "邻居",
    "neighbour": "邻居",
}

#: canonical roles a person normally has one of
EXCLUSIVE_ROLES: frozenset[str] = frozenset(
    {
        "老板",
        "领导",
        "主管",
        "老婆",
        "老公",
        "爱人",
        "对象",
        "女朋友",
        "男朋友",
        "爸爸",
        "妈妈",
        "爷爷",
        "奶奶",
        "外公",
        "外婆",
    }
)

_ZH_ROLES = sorted((r for r in ROLE_SYNONYMS if not r.isascii()), key=len, reverse=True)
_EN_ROLES = sorted((r for r in ROLE_SYNONYMS if r.isascii()), key=len, reverse=True)
#: regex alternation of the Chinese role words, longest first so 女朋友 beats 朋友
ZH_ROLE_PATTERN = "|".join(_ZH_ROLES)
EN_ROLE_PATTERN = "|".join(_EN_ROLES)

#: slots where the user has a single value at a time
EXCLUSIVE_SLOTS: frozenset[str] = frozenset(
    {
        "residence",
        "work_location",
        "employer",
        "employment",
        "name",
        "surname",
        "age",
        "job",
        "gender",
        "origin",
        "birthday",
        "company_location",
    }
)

POLARITY_PREFIXES = ("possession:", "likes:", "eats:", "drinks:", "smokes:", "can:")

# --------------------------------------------------------------------------
# Word lists shared with the extractor
# --------------------------------------------------------------------------

#: endings of job titles ("程序员", "产品经理", "老师" …)
JOB_SUFFIXES = (
    "程序员",
    "工程师",
    "设计师",
    "架构师",
    "分析师",
    "会计师",
    "律师",
    "医生",
    "护士",
    "老师",
    "教师",
    "教授",
    "学生",
    "研究生",
    "博士",
    "博士生",
    "经理",
    "总监",
    "主管",
    "总裁",
    "创始人",
    "店长",
    "老板",
    "员",
    "师",
    "工",
    "家",
    "长",
    "手",
    "记者",
    "作者",
    "司机",
    "厨师",
    "会计",
    "运营",
    "销售",
    "产品",
    "开发",
    "测试",
    "前端",
    "后端",
    "编辑",
)
GENDER_WORDS = ("男生", "女生", "男的", "女的", "男性", "女性", "男人", "女人", "男孩", "女孩", "男孩子", "女孩子")

#: endings that mark an organisation rather than a place ("在阿里巴巴集团工作")
ORGANISATION_SUFFIXES = (
    "公司",
    "集团",
    "科技",
    "银行",
    "医院",
    "学校",
    "大学",
    "学院",
    "中学",
    "小学",
    "幼儿园",
    "工厂",
    "厂",
    "研究所",
    "研究院",
    "事务所",
    "实验室",
    "工作室",
    "单位",
    "机关",
    "局",
    "所",
    "店",
    "餐厅",
    "酒店",
    "网络",
    "有限",
    "部门",
    "团队",
)


def looks_like_organisation(name: str) -> bool:
    """True for "阿里巴巴集团", "一家公司", "Google": where one works, not a city.

    Latin names inside Chinese text are nearly always companies ("在Google工作");
    Chinese place names carry no such suffix.
    """
    name = name.strip()
    if not name:
        return False
    if re.search(r"[A-Za-z]", name) and not re.search(r"[\u4e00-\u9fff]", name):
        return True
    return name.endswith(ORGANISATION_SUFFIXES) or "公司" in name


def looks_like_job(title: str) -> bool:
    """True for "程序员", "一名产品经理", "做前端的" …; false for "杭州人", "好人"."""
    title = re.sub(r"^(?:一[个名位]|个|名)", "", title.strip())
    if not title or title.endswith("人") or len(title) > 12:
        return False
    return title.endswith(JOB_SUFFIXES)


# --------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------

_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)
#: words that change nothing about what a fact states
_FILLERS_ZH = re.compile(r"现在|目前|如今|已经|一直|平时|其实|也|都|还|了|啦|呢|啊|的")
_FILLERS_EN = re.compile(r"\b(?:now|currently|already|still|also|really|the|a|an)\b")


def normalise(text: str) -> str:
    """Width-folded, lower-cased text with whitespace and punctuation removed."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    return _PUNCT.sub("", text)


def canonical(text: str) -> str:
    """``normalise`` minus particles and time adverbs: the judge's notion of "same words"."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = _FILLERS_EN.sub(" ", text)
    text = _FILLERS_ZH.sub("", text)
    return _PUNCT.sub("", text)


def _clean_value(value: str) -> str:
    value = value.strip().strip("。.,，!！?？;；:：'\"“”‘’ ")
    value = re.sub(r"(?:了|啦|呢|的)+$", "", value)
    return value.strip()


def _strip_measure(thing: str) -> str:
    # "一辆车" and "车" are the same thing to own; other counts stay (两个孩子)
    return re.sub(r"^(?:一(?:个|辆|只|套|台|部|条|位|名|家|本|把)|an?\s+|the\s+)", "", thing.strip())


# --------------------------------------------------------------------------
# Slot patterns
# --------------------------------------------------------------------------

_ADVERBS = r"(?:现在|目前|如今|已经|也|还|都|其实|一直)*"
_AGE = r"(?P<v>\d+|[一二两三四五六七八九十百]+)\s*(?:周)?岁"

# Chinese predicates, matched after the subject ("用户" / "用户的老板") is removed.
# Order matters: the first pattern that matches names the slot.
_ZH_PREDICATES: tuple[tuple[str, str], ...] = (
    (r"^(?:住在|住|居住在|定居在|定居|生活在)(?P<v>.+)$", "residence"),
    (r"^的?家(?:住)?在(?P<v>.+)$", "residence"),
    (r"^的?公司在(?P<v>.+)$", "company_location"),
    (r"^在(?P<v>.+?)(?:做|当|担任)(?P<w>.+)$", "employment"),
    (r"^在(?P<v>.+?)(?:工作|上班)$", "work_location"),
    (r"^(?:叫|名叫|的?名字(?:是|叫))(?P<v>.+)$", "name"),
    (r"^姓(?P<v>.{1,3})$", "surname"),
    (r"^(?:今年|已经)?" + _AGE + r"(?:了)?$", "age"),
    (r"^的?生日(?:是|在)(?P<v>.+)$", "birthday"),
    (r"^是做(?P<v>.+?)的$", "job"),
    (r"^的?(?:工作|职位|岗位|职业)(?:是)(?P<v>.+)$", "job"),
    (r"^是(?P<v>.+)$", "is"),  # refined into job / gender / origin below
    (r"^负责(?P<v>.+)$", "responsibility"),
    (r"^(?:出生在|出生于|生于)(?P<v>.+)$", "origin"),
)

# Polarity predicates: (regex, slot prefix); group "neg" marks the negative.
_ZH_POLARITY: tuple[tuple[str, str], ...] = (
    (r"^(?P<neg>没有|没)?有(?P<v>.+)$", "possession:"),
    (r"^(?P<neg>不|从不|从来不)?(?:喜欢|爱)(?P<v>.+)$", "likes:"),
    (r"^(?P<neg>讨厌)(?P<v>.+)$", "likes:"),
    (r"^(?P<neg>不|从不|从来不)?吃(?P<v>.+)$", "eats:"),
    (r"^(?P<neg>不|从不|从来不)?喝(?P<v>.+)$", "drinks:"),
    (r"^(?P<neg>不|从不|从来不)?抽(?P<v>.+)$", "smokes:"),
    (r"^(?P<neg>不)?会(?P<v>(?:说|讲|开|弹|游|做|写|用|打|画|唱|跳).+)$", "can:"),
)

_EN_PREDICATES: tuple[tuple[str, str], ...] = (
    (r"^(?:now |currently )?(?:lives|is living|resides) in (?P<v>.+)$", "residence"),
    (r"^(?:is )?based in (?P<v>.+)$", "residence"),
    (r"^works (?:at|for) (?P<v>.+)$", "employer"),
    (r"^works in (?P<v>.+)$", "work_location"),
    (r"^works as (?:an? )?(?P<v>.+)$", "job"),
    (r"^(?:name is|is called|is named) (?P<v>.+)$", "name"),
    (r"^is (?P<v>\d+)(?: years old)?$", "age"),
    (r"^is an? (?P<v>.+)$", "job"),
)

_EN_POLARITY: tuple[tuple[str, str], ...] = (
    (r"^(?P<neg>does not have|doesn't have|has no) (?P<v>.+)$", "possession:"),
    (r"^(?:has|owns) (?P<v>.+)$", "possession:"),
    (r"^(?P<neg>does not like|doesn't like|dislikes|hates) (?P<v>.+)$", "likes:"),
    (r"^(?:likes|loves|enjoys) (?P<v>.+)$", "likes:"),
    (r"^(?P<neg>does not eat|doesn't eat|never eats) (?P<v>.+)$", "eats:"),
    (r"^eats (?P<v>.+)$", "eats:"),
    (r"^(?P<neg>does not drink|doesn't drink|never drinks) (?P<v>.+)$", "drinks:"),
    (r"^drinks (?P<v>.+)$", "drinks:"),
)

_ZH_SUBJECT = re.compile(r"^用户(?:的)?(?P<role>" + ZH_ROLE_PATTERN + r")?")
_EN_SUBJECT = re.compile(r"^the user(?:'s|’s)?(?:\s+(?P<role>" + EN_ROLE_PATTERN + r")(?:'s|’s)?)?\s*", re.IGNORECASE)


def _refine_is(value: str) -> tuple[str, str] | None:
    """Split "是X" into the slot it actually fills, or None when unclear."""
    if value in GENDER_WORDS:
        return "gender", value
    if re.fullmatch(r"[\u4e00-\u9fff]{1,5}人", value) and not value.startswith(("一个", "好", "坏", "个")):
        return "origin", value
    if looks_like_job(value):
        return "job", re.sub(r"^(?:一[个名位]|个|名)", "", value)
    return None


def _match_predicates(predicate: str, english: bool) -> tuple[str, str] | None:
    flags = re.IGNORECASE if english else 0
    for pattern, prefix in _EN_POLARITY if english else _ZH_POLARITY:
        m = re.match(pattern, predicate, flags)
        if m and _clean_value(m.group("v")):
            thing = _strip_measure(_clean_value(m.group("v"))).lower()
            return prefix + thing, "no" if m.groupdict().get("neg") else "yes"
    for pattern, slot in _EN_PREDICATES if english else _ZH_PREDICATES:
        m = re.match(pattern, predicate, flags)
        if not m:
            continue
        value = _clean_value(m.group("v"))
        if not value:
            return None
        if slot == "employment":
            return slot, f"{value}/{_clean_value(m.group('w'))}"
        if slot == "work_location" and looks_like_organisation(value):
            return "employer", value
        if slot == "is":
            return _refine_is(value)
        if slot == "job" and english:
            value = _strip_measure(value)
        return slot, value
    return None


def slot_of(fact_text: str) -> tuple[str, str] | None:
    """The (slot, value) a third-person fact fills, or None when no slot applies.

    >>> slot_of("用户住在杭州")
    ('residence', '杭州')
    >>> slot_of("用户的老板姓张")
    ('relationship:老板:surname', '张')
    """
    if not isinstance(fact_text, str):
        return None
    text = unicodedata.normalize("NFKC", fact_text).strip().rstrip("。.!！")
    role: str | None = None
    m = _ZH_SUBJECT.match(text)
    if m:
        english = False
        role = m.group("role")
        predicate = text[m.end() :]
        predicate = re.sub(r"^" + _ADVERBS, "", predicate)
    else:
        m = _EN_SUBJECT.match(text)
        if not m:
            return None
        english = True
        role = m.group("role")
        # "The user's name is Tom" leaves "name is Tom", which _EN_PREDICATES reads
        predicate = text[m.end() :].strip()
    found = _match_predicates(predicate, english)
    if found is None:
        return None
    slot, value = found
    if role is not None:
        canonical_role = ROLE_SYNONYMS.get(role.lower(), role)
        return f"relationship:{canonical_role}:{slot}", value
    return slot, value


def is_polarity_slot(slot: str) -> bool:
    """Polarity slots hold yes/no: a different value is a contradiction, not an update."""
    if slot.startswith("relationship:"):
        slot = slot.split(":", 2)[2]
    return slot.startswith(POLARITY_PREFIXES)


def is_exclusive_slot(slot: str) -> bool:
    """True when a new value replaces the old one (one residence, one boss's surname)."""
    if slot.startswith("relationship:"):
        _, role, attribute = slot.split(":", 2)
        return role in EXCLUSIVE_ROLES and attribute in EXCLUSIVE_SLOTS
    return slot in EXCLUSIVE_SLOTS


# --------------------------------------------------------------------------
# Negation
# --------------------------------------------------------------------------

#: negation markers, longest first; each maps to what the positive form may have
#: instead ("没" is "没有" shortened, or plain "not" before a verb: 没去过)
_ZH_NEGATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("并没有", ("有", "")),
    ("从来没有", ("有", "")),
    ("从来不", ("",)),
    ("没有", ("有", "")),
    ("不是", ("是",)),
    ("从不", ("",)),
    ("并不", ("",)),
    ("讨厌", ("喜欢",)),
    ("不", ("",)),
    ("没", ("有", "")),
)
_EN_CONTRACTIONS = (
    ("doesn't", "does not"),
    ("don't", "do not"),
    ("isn't", "is not"),
    ("hasn't", "has not"),
    ("can't", "cannot"),
    ("won't", "will not"),
)


def _third_person(verb: str) -> str:
    if verb == "have":
        return "has"
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _positive_forms(text: str) -> tuple[frozenset[str], bool]:
    """(canonical texts the negation-free statement may read as, whether it was negated)."""
    lowered = unicodedata.normalize("NFKC", text or "").lower().strip()
    if re.search(r"[a-z]", lowered) and not re.search(r"[\u4e00-\u9fff]", lowered):
        for short, long in _EN_CONTRACTIONS:
            lowered = lowered.replace(short, long)
        m = re.search(r"\b(?:does not|do not) (\w+)", lowered)
        if m:
            positive = lowered[: m.start()] + _third_person(m.group(1)) + lowered[m.end() :]
            return frozenset({canonical(positive)}), True
        for marker, replacement in (
            ("is not", "is"),
            ("has not", "has"),
            ("cannot", "can"),
            ("has no", "has"),
            ("never ", ""),
            ("dislikes", "likes"),
            ("hates", "likes"),
        ):
            if marker in lowered:
                return frozenset({canonical(lowered.replace(marker, replacement, 1))}), True
        return frozenset({canonical(lowered)}), False
    for marker, replacements in _ZH_NEGATIONS:
        if marker in lowered:
            return frozenset(canonical(lowered.replace(marker, r, 1)) for r in replacements), True
    return frozenset({canonical(lowered)}), False


def negation_pair(a: str, b: str) -> bool:
    """True when one fact is the other negated: 用户有车 / 用户没有车, has / does not have."""
    slot_a, slot_b = slot_of(a), slot_of(b)
    if slot_a and slot_b and slot_a[0] == slot_b[0] and is_polarity_slot(slot_a[0]):
        return slot_a[1] != slot_b[1]
    forms_a, negated_a = _positive_forms(a)
    forms_b, negated_b = _positive_forms(b)
    return negated_a != negated_b and bool(forms_a & forms_b - {""})
