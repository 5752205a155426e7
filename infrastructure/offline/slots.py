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
  ``origin``, ``responsibility``, ``birthday``, ``study_location`` (where one
  studies) …;
* a relative's attribute: ``relationship:<role>:<attribute>``, the role in
  its canonical Chinese form so "my wife" and "我老婆" share a slot;
* polarity slots, whose value is ``yes`` or ``no``: ``possession:<thing>``,
  ``likes:<thing>``, ``eats:<thing>`` … so that 用户有车 / 用户没有车 land on
  the same slot and contradict each other (a liking whatever its verb, degree
  or negation: 特别爱吃火锅 / 不喜欢火锅 are ``likes:火锅`` yes / no).
"""

from __future__ import annotations

import functools
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
    # said of a father with affection: "我家老头子", "我家老爷子"
    "老头子": "爸爸",
    "老爷子": "爸爸",
    # "我哥比我大": said short, as 爸/妈 are
    "哥": "哥哥",
    "姐": "姐姐",
    "弟": "弟弟",
    "妹": "妹妹",
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
    "闺女": "女儿",
    "大儿子": "大儿子",
    "小儿子": "小儿子",
    "大女儿": "大女儿",
    "小女儿": "小女儿",
    "老大": "老大",
    "老二": "老二",
    "大宝": "老大",
    "二宝": "老二",
    "表哥": "表哥",
    "表姐": "表姐",
    "表弟": "表弟",
    "表妹": "表妹",
    "堂哥": "堂哥",
    "堂姐": "堂姐",
    "堂弟": "堂弟",
    "堂妹": "堂妹",
    "舅舅": "舅舅",
    "姑姑": "姑姑",
    "阿姨": "阿姨",
    "叔叔": "叔叔",
    "伯伯": "伯伯",
    "婆婆": "婆婆",
    "公公": "公公",
    "岳父": "岳父",
    "岳母": "岳母",
    "丈母娘": "岳母",
    "老丈人": "岳父",
    "未婚夫": "未婚夫",
    "未婚妻": "未婚妻",
    "前男友": "前男友",
    "前女友": "前女友",
    "闺蜜": "闺蜜",
    "发小": "发小",
    "导师": "导师",
    "实习生": "实习生",
    # kin and people around the user who are not the user: "我侄子今年刚满18" is the nephew's age
    "侄子": "侄子",
    "侄女": "侄女",
    "外甥": "外甥",
    "外甥女": "外甥女",
    "嫂子": "嫂子",
    "姐夫": "姐夫",
    "妹夫": "妹夫",
    "弟媳": "弟媳",
    "舅妈": "舅妈",
    "姨妈": "姨妈",
    "小姨": "小姨",
    "姑父": "姑父",
    "姨父": "姨父",
    "舍友": "室友",
    "同桌": "同桌",
    "房东": "房东",
    "徒弟": "徒弟",
    "孙子": "孙子",
    "孙女": "孙女",
    "外孙": "外孙",
    "外孙女": "外孙女",
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
    "fiance": "未婚夫",
    "fiancé": "未婚夫",
    "fiancee": "未婚妻",
    "fiancée": "未婚妻",
    "cousin": "表哥",
    "aunt": "阿姨",
    "uncle": "叔叔",
    "grandma": "奶奶",
    "grandmother": "奶奶",
    "grandpa": "爷爷",
    "grandfather": "爷爷",
    "niece": "侄女",
    "nephew": "侄子",
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
        "岳父",
        "岳母",
        "公公",
        "婆婆",
        "未婚夫",
        "未婚妻",
    }
)

_ZH_ROLES = sorted((r for r in ROLE_SYNONYMS if not r.isascii()), key=len, reverse=True)
_EN_ROLES = sorted((r for r in ROLE_SYNONYMS if r.isascii()), key=len, reverse=True)
#: regex alternation of the Chinese role words, longest first so 女朋友 beats 朋友
ZH_ROLE_PATTERN = "|".join(_ZH_ROLES)
EN_ROLE_PATTERN = "|".join(_EN_ROLES)
#: words before a role that still name someone else: a former colleague (前同事; never 前+男友, a role
#: of its own), the neighbour upstairs (楼上邻居)
ZH_ROLE_QUALIFIER = (
    r"(?:(?:前|以前的|之前的|原来的)(?=同事|同学|室友|舍友|领导|上司|老板|房东|邻居)|(?:楼上|楼下|隔壁|对门|对面)的?)?"
)

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
        "marital",
        "employment_status",
        "vehicle",
        "phone",
        "level",
        "grade",
        "weight",
        "zodiac",
        "star_sign",
        "salary",
        "birth_year",
        "kind",
        "commute",
        "partner",
        "major",
        "blood_type",
        "business",
        "diet",
        "hair_colour",
        "favourite_team",
        "school",
        "study_location",
    }
)

POLARITY_PREFIXES = ("possession:", "likes:", "eats:", "drinks:", "smokes:", "can:", "keeps:")
_CJK_CLASS = r"[\u4e00-\u9fff]"

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
    "实习生",
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
    "策划",
    "分析",
    "管理",
    "设计",
    "助理",
    "顾问",
    "专员",
    "法务",
    "财务",
    "行政",
    "人事",
    "HR",
    "主播",
    "模特",
    "保安",
    "保姆",
    "骑手",
    "外卖",
    "快递",
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


#: employers people name without a suffix ("在腾讯上班"): not cities
WELL_KNOWN_EMPLOYERS = (
    "阿里",
    "腾讯",
    "百度",
    "美团",
    "京东",
    "网易",
    "滴滴",
    "拼多多",
    "快手",
    "携程",
    "蚂蚁",
    "联想",
    "中兴",
    "大疆",
    "蔚来",
    "理想",
    "小鹏",
    "微软",
    "谷歌",
    "苹果",
    "亚马逊",
    "国企",
    "外企",
    "央企",
    "私企",
    "事业单位",
    "体制内",
    "政府",
    "银行",
    "医院",
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
    # "一家面馆", "一间花店": one of a kind of place is a workplace, a city is not counted
    counted = re.match(r"^(?:一|这|那)(?:家|间|所|个)", name)
    return (
        bool(counted) or name.endswith(ORGANISATION_SUFFIXES) or "公司" in name or name.startswith(WELL_KNOWN_EMPLOYERS)
    )


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
    value = re.sub(r"(?<![了啦呢的])(?:了|啦|呢|的)+$", "", value)
    return value.strip()


def _strip_measure(thing: str) -> str:
    # "一辆车" and "车" are the same thing to own; other counts stay (两个孩子)
    return re.sub(
        r"^(?:一(?:个|辆|只|套|台|部|条|位|名|家|本|把|艘|栋|座|间|头|匹|枚|块|张|所|份|件|双|对|盆|缸)|an?\s+|the\s+)",
        "",
        thing.strip(),
    )


# --------------------------------------------------------------------------
# Slot patterns
# --------------------------------------------------------------------------

_ADVERBS = (
    r"(?:现在|目前|如今|已经|也|还|都|其实|一直|又|刚刚?|终于|正式|彻底|总算|最近|根本|压根儿?|并|就|只|才|后来)*"
)
_NUMBER = r"\d+|[零一二两三四五六七八九十百]+"
_AGE = r"(?P<v>" + _NUMBER + r")\s*(?:周)?岁(?P<half>半)?"

#: pets: the species a name like 狸花猫 or 柴犬 is a kind of, so 没养狗 takes back 养了只柴犬
_SPECIES: tuple[tuple[str, str], ...] = (
    ("猫", r"猫|布偶|英短|美短|暹罗|加菲"),
    ("狗", r"狗|犬|金毛|泰迪|哈士奇|柯基|拉布拉多|边牧|比熊|博美|萨摩耶|阿拉斯加|二哈"),
    ("兔子", r"兔"),
    ("仓鼠", r"仓鼠|金丝熊"),
    ("鸟", r"鹦鹉|鸟|八哥"),
    ("鱼", r"鱼"),
    ("乌龟", r"龟"),
    ("cat", r"\bcats?\b|\bkittens?\b|\btabby\b|\bsiamese\b|\bpersian cat"),
    (
        "dog",
        r"\bdogs?\b|\bpupp(?:y|ies)\b|\bretrievers?\b|\blabs?\b|\blabradors?\b|\bpoodles?\b|\bterriers?\b|\bbulldogs?\b|"
        r"\bbeagles?\b|\bhusk(?:y|ies)\b|\bcorgis?\b|\bshepherds?\b|\bspaniels?\b|\bdachshunds?\b",
    ),
)
#: what people say they drink or smoke, and how they say it
_CONSUMED: tuple[tuple[str, str], ...] = (
    (
        "烟",
        r"烟(?![台花火雾囱])|抽(?!空|奖|签|屉|时间|象|出)|吸(?!引|收|尘|管)|(?<![\d一二两三四五六七八九十几半])(?:\d|[一二两三四五六七八九十几半])+根|\bsmok|\bcigarette|\bvap",
    ),
    ("酒", r"酒|啤的|白的|\bbeer|\bwine|\balcohol|\bdrinking\b"),
    ("咖啡", r"咖啡|\bcoffee"),
    ("奶茶", r"奶茶"),
)
#: saying it has stopped: 戒了, 不抽了, 没碰, quit
_CONSUMPTION_STOPPED = re.compile(
    r"戒|不(?:再)?(?:抽|吸|喝|碰)|没(?:再)?(?:抽|吸|喝|碰)|\bquit\b|\bstopped\b|\bno longer\b|\bdoes not\b|\bdoesn't\b|\bnever\b|\bgave up\b"
)
_MARITAL_WORDS: tuple[tuple[str, str], ...] = (
    (
        "single",
        r"单身|未婚|\bsingle\b|和(?:男朋友|女朋友|男友|女友|对象)分手|跟(?:男朋友|女朋友|男友|女友|对象)分手|\bbroke up\b",
    ),
    ("divorced", r"离婚|离异|\bdivorced\b"),
    ("married", r"已婚|结婚|领证|领了证|扯证|\bmarried\b"),
    ("engaged", r"订婚|\bengaged\b"),
    ("dating", r"恋爱|脱单|对象|(?:男|女)(?:朋友|友)|\bdating\b|\bin a relationship\b"),
)
#: how far along the user is at something: one level at a time
_LEVEL = r"小白|新手|菜鸟|初学者|门外汉|外行|老手|高手|大神|专家|内行|熟手|入门|上手|熟练|精通"

# Chinese predicates, matched after the subject ("用户" / "用户的老板") is removed.
# Order matters: the first pattern that matches names the slot.
_ZH_PREDICATES: tuple[tuple[str, str], ...] = (
    (r"^(?:住在|住|居住在|定居在|定居|生活在)(?P<v>.+)$", "residence"),
    (r"^的?家(?:还|也|就|一直)?(?:住)?在(?P<v>[^，,]+?)(?:[，,].*)?$", "residence"),
    (r"^的?家住(?P<v>[\u4e00-\u9fff]{2,10})$", "residence"),
    # "在济南住了快十年": where the user has lived (and so lives)
    (
        r"^(?:一直)?在(?P<v>[\u4e00-\u9fff]{2,6}?)(?:住了|生活了)(?:快|好|差不多|将近)?[\u4e00-\u9fff\d]{1,4}年(?:了)?(?:[，,].*)?$",
        "residence",
    ),
    # "租在龙华", "租房在城西": where the user rents is where they live
    (r"^(?:现在|目前)?(?:租|租房|租住)在(?P<v>[\u4e00-\u9fff]{2,8})$", "residence"),
    # "在广州住", "在成都生活": the place, then the living
    (
        r"^在(?P<v>[\u4e00-\u9fff]{2,6}?)(?:住|生活|居住|常住)(?:了|着)?(?:[一二两三四五六七八九十几\d]+年(?:多|了)?|很久|好久|多年)?$",
        "residence",
    ),
    # "考上了浙大", "被复旦录取了": the school one got into is the one one goes to
    (
        r"^(?:终于|已经|刚刚?)?(?:考上了?|考进了?|被)"
        r"(?P<v>[\u4e00-\u9fff]{0,10}?(?:大学|学院|中学|高中|一中|二中|三中|附中|清华|复旦)|[\u4e00-\u9fff]{1,8}?(?<![高初])大)"
        r"(?:录取)?(?:了|啦)?$",
        "grade",
    ),
    # "租的房子在城西", "房子在城西": where one's home is
    (r"^(?:租的|住的|买的)?房子(?:就)?在(?P<v>[\u4e00-\u9fff]{2,8}?)(?:那边|这边|附近|一带)?$", "residence"),
    # "今年又因为工作调动搬到了重庆": why and when, then where to
    (
        r"^(?:(?!可能|也许|许|打算|准备|想|要|会(?!儿)|计划|下|明年|后年|过两年|以后|将来|如果|要是)[^，,搬]){0,12}?搬(?:到|去|来|回)了?"
        r"(?P<v>[\u4e00-\u9fff]{2,6}?)(?:了|啦|住)?$",
        "residence",
    ),
    (r"^的?公司在(?P<v>.+)$", "company_location"),
    (r"^的?老家(?:是|在)?(?P<v>.+)$", "origin"),
    (r"^(?:来自|出生在|出生于|生于)(?P<v>.+)$", "origin"),
    (
        r"^(?:在|上)(?P<v>[^，,]{1,10}?(?:大学|学院|中学|小学|高中|初中|一中|二中|附中))(?:读书|上学|念书|读研|读博|读大学)?$",
        "grade",
    ),
    # "在北京上学", "在成都念大学": where one studies, one place at a time (a school's name is read above)
    (
        r"^(?:在|去)(?P<v>[\u4e00-\u9fff]{2,8}?)(?:上学|读书|念书|求学|留学|(?:上|读|念)(?:大学|高中|初中|小学|幼儿园|研究生|研|博))(?:了|啦|呢)?(?:[，,].*)?$",
        "study_location",
    ),
    (r"^的?学校(?:就|也)?在(?P<v>[\u4e00-\u9fff]{2,8}?)(?:那边|这边)?$", "study_location"),
    # "现在已经是初中生了": the school level, said as who one is
    (r"^(?:现在|已经|都|也)*(?:是|成了?)(?:个|一名|一个)?(?P<v>小学生|初中生|高中生)(?:了|啦)?(?:[，,].*)?$", "grade"),
    # "今年九月升大班了", "上中班": a kindergarten year
    (
        r"^(?:今年|这学期|开学|[一二三四五六七八九十]{1,2}月)*(?:就|已经|都)?(?:升|上|读|念)(?:了)?(?:幼儿园)?(?P<v>[小中大托]班)(?:了|啦)?(?:[，,].*)?$",
        "grade",
    ),
    # "在读小学五年级", "上初一了": a school year, with or without the school's level
    (
        r"^(?:现在|已经|都)?(?:在)?(?:读|上|念)(?:小学|初中|高中|大学)?(?P<v>(?:[一二三四五六]|初[一二三]|高[一二三])年级"
        r"|大[一二三四]|研[一二三]|初[一二三]|高[一二三])(?:了|啦)?(?:[，,].*)?$",
        "grade",
    ),
    (r"^在(?P<v>.+?)(?:做|当|担任)(?P<w>.+)$", "employment"),
    # "入职了比亚迪", "跳槽到了美团": the employer, by name
    (
        r"^(?:上周|上个?月|这周|本周|今天|昨天|前天|月初|年初|今年|刚刚?|已经|终于|正式)*(?:入职了?|跳槽(?:到|去)了?)"
        r"(?P<v>[A-Za-z0-9\u4e00-\u9fff]{2,10}?)(?:了|啦)?$",
        "employer",
    ),
    (r"^在(?P<v>.+?)(?:工作|上班|打工|实习|兼职|打零工)$", "work_location"),
    # "上个月已经换到苏州工作了": where the work is now
    (
        r"^[^，,在]{0,8}?(?:换到|调到|调去|转到|跳到|去了?|来了?)(?P<v>[^，,]{2,8}?)(?:工作|上班)(?:了|啦)?$",
        "work_location",
    ),
    # what the user studies: one major at a time
    (
        r"^(?:在)?(?:大学|本科|研究生|读研时?)?(?:学的是|的?专业(?:其实|实际上)?是|读的是)(?P<v>[^，,]{2,8}?)(?:专业)?$",
        "major",
    ),
    # "对芒果过敏", "过敏的其实是菠萝": what the user is allergic to (one may be to several)
    (r"^对(?P<v>[^，,]{1,8}?)过敏(?:[，,].*)?$", "allergy"),
    (r"^过敏的?(?:其实|实际上)?是(?P<v>[^，,]{1,8})(?:[，,].*)?$", "allergy"),
    (r"^[^，,]{0,6}?转专业(?:到|成|去|读)了?(?P<v>[^，,]{2,8}?)(?:专业)?(?:了|啦)?$", "major"),
    # "大二转到了经济学", "读研又跨考到了心理学": a major changed to, by a discipline's name
    (
        r"^[^，,]{0,6}?(?:转|跨考|跨专业)(?:到|成|去|读)了?(?P<v>[\u4e00-\u9fff]{0,6}?(?:工程|科学|管理|会计|金融|法学|医学|护理|教育|新闻|传媒|哲学|经济学|心理学|计算机|统计学|文学))"
        r"(?:专业)?(?:了|啦)?(?:[，,].*)?$",
        "major",
    ),
    (
        r"^(?:在|是)?学(?P<v>[\u4e00-\u9fff]{0,6}?(?:工程|科学|管理|会计|金融|法律|法学|医学|临床|护理|设计|技术|教育|新闻|传媒|数学|物理|化学|生物|历史|哲学|经济|材料|土木|建筑|心理学?|计算机|统计))(?:专业)?(?:的)?$",
        "major",
    ),
    # "是学医的", "是学艺术的": what one studied, said as the kind of person one is
    (r"^(?:其实)?是学(?![校生霸渣长姐妹弟])(?P<v>[\u4e00-\u9fff]{1,4})的$", "major"),
    (r"^(?:的)?血型是(?P<v>AB|[ABO])型?$", "blood_type"),
    (r"^是(?P<v>AB|[ABO])型血?$", "blood_type"),
    (r"^在(?P<v>[\u4e00-\u9fff]{2,6}?)(?:安顿|定居|落脚|安家)(?:下来)?(?:了|啦)?$", "residence"),
    (
        r"^(?:现在|目前)?(?:主要)?(?:在)?(?:做|干)(?P<v>[^，,]{0,6}?(?:分析|管理|运营|开发|设计|销售|产品|测试|财务|会计|行政|人事|HR|策划|运维|客服|编辑|咨询|研究|教研|法务|品牌|市场|推广|招聘|采购|物流|保险|中介|代购|主播|自媒体))(?:工作)?(?:了|啦)?$",
        "job",
    ),
    # "在做外卖站长", "干起了全职司机": a title that looks like a job
    (
        r"^(?:在)?(?:做|干|干起了?|做起了?)(?P<v>[^，,]{2,8}?(?:长|员|师|工|手|生|司机|老板|店主|主播))(?:了|啦)?$",
        "job",
    ),
    (r"^(?:在)?(?:做|干|当)(?:起了?|了)?(?:一名|一个|个)?(?P<v>[^，,]{2,8}?)(?:了|啦)?$", "promoted_job"),
    # "当了一名护士", "自己开了一家咖啡馆", "在路边摆摊卖煎饼": what the user does for a living
    (r"^(?:改行|转行)?当(?:了|上了?)?(?:一名|一个|个|名)?(?P<v>[^，,]{1,8})$", "job"),
    (
        r"^(?:现在|如今)?(?:自己)?(?:在[^，,]{1,10}?)?(?:自己)?开了?(?:一家|一个|一间|家|个|间)(?P<v>[^，,]{0,8}?(?:店|馆|铺|公司|工作室|餐厅|超市|诊所|厂|摊))$",
        "business",
    ),
    (r"^(?:现在|如今)?(?:自己)?(?:在[^，,]{1,10}?)?(?P<v>摆摊(?:卖)?[^，,]{0,8}?)(?:了|啦)?$", "business"),
    (
        r"^(?P<noun>驾照|体重|身高|血型|学历|专业|月薪|工资|鞋码|段位|视力|度数|近视)(?:是|有|为|考的是)(?P<v>[^，,]{1,12})$",
        "attr",
    ),
    (r"^(?:叫|名叫|的?名字(?:是|叫))(?P<v>.+)$", "name"),
    # "去年调到贵阳去了", "今年年初又被派到了南昌": where work took the user
    (
        r"^[^，,]{0,8}?(?:调到|调去|派到|派去|外派到|被派到)了?(?P<v>[\u4e00-\u9fff]{2,6}?)(?:去|来)?(?:了|啦)?$",
        "residence",
    ),
    (r"^姓(?P<v>.{1,3})$", "surname"),
    (r"^(?:今年|已经|都|快|满)?(?:是)?" + _AGE + r"(?:了)?$", "age"),
    # "正式30了", "都35了": an age said as a number that has been reached
    (r"^(?:今年|已经|都|快|满|正式|刚)?(?P<v>[1-9]\d)了[^\u4e00-\u9fff\w]*$", "age"),
    (r"^的?体重(?:是|有)?(?P<v>\d+(?:\.\d+)?)\s*(?:斤|公斤|kg|千克)?(?:了|左右)?$", "weight"),
    (r"^的?生日(?:是|在)(?P<v>.+)$", "birthday"),
    # "在吃生酮", "后来改成间歇性断食": one way of eating at a time
    (
        r"^(?:后来|现在)?(?:在|改成|换成|开始)?(?:吃|坚持|做|搞|执行)?(?P<v>[^，,]{0,6}?(?:生酮|断食|轻断食|素食|吃素|饮食法?|低碳水?|减脂餐|代餐|16:8))(?:了)?$",
        "diet",
    ),
    (r"^是做(?P<v>.+?)的$", "job"),
    # "成正式护士了", "竞聘上了护士长", "升职成了主管": the title now
    (
        r"^[^，,染变换改]{0,6}?(?:(?<![染变换改])成了?|成为了?|当上了?|竞聘上了?|升(?:职)?(?:成|为|到)了?|晋升(?:为|成|到)?了?|提拔(?:为|成)了?)(?:一名|一个|正式的?)?(?P<v>[\u4e00-\u9fff]{2,6}?)(?:了|啦)?$",
        "promoted_job",
    ),
    (r"^的?(?:主力机|主力手机|手机)(?:现在)?(?:是|用的是|换成了?)(?P<v>.+)$", "phone"),
    # "这个月开始转岗做产品经理": when, then the new job
    (r"^[^，,]{0,8}?(?:转岗|转行|改行|调岗)(?:做|当|成|去做|去当)了?(?P<v>[^，,]{1,8}?)(?:了|啦)?$", "job"),
    (r"^的?(?:工作|职位|岗位|职业)(?:其实|实际上)?(?:是)(?P<v>.+)$", "job"),
    (
        r"^(?:从[^，,]{1,8}?)?(?P<v>辞职|离职|裸辞|被裁员?|失业|下岗|退休|不干|没有工作|没工作|待业|在家待业)(?:了|啦)?$",
        "employment_status",
    ),
    # "是自由职业者", "是全职妈妈": working for no employer, which a job taken later replaces
    (
        r"^(?:是|做|当)(?:一名|一个|个)?(?P<v>自由职业者?|全职妈妈|全职太太|家庭主妇|全职主妇|全职宝妈)(?:[，,].*)?$",
        "employment_status",
    ),
    (r"^(?:开的是|开着|开)(?:一辆|一台|辆|台)(?P<v>.+)$", "vehicle"),
    (r"^开的(?:是)?(?P<v>.+)$", "vehicle"),
    (r"^的?(?:车|座驾|爱车)是(?P<v>.+)$", "vehicle"),
    (r"^的?手机是(?P<v>.+)$", "phone"),
    (
        r"^(?:在[^，,]{1,10}?)?(?:给人|帮人)?(?:去)?(?P<v>(?:开|跑|送)了?(?:货车|大货|卡车|出租车?|网约车|滴滴|外卖|快递|公交车?|地铁|大巴))(?:的)?$",
        "job",
    ),
    (
        r"^(?:每天|平时|一般|现在|最近)?(?:改|换成)?(?:骑|坐|开|打|搭|挤|走路|步行|开车|骑车)(?P<v>[^，,]{0,6}?)(?:上班|上学|通勤|去公司)(?:了)?$",
        "commute",
    ),
    (r"^(?:每天|平时)?通勤(?:是|都|就)?(?:坐|骑|开|靠|搭|挤)(?P<v>[^，,]{1,6})$", "commute"),
    # "上班都是骑电动车去的": how, said after where to
    (
        r"^(?:每天|平时)?上班(?:都|一般|基本)?(?:是)?(?:骑|坐|开|打|搭|挤)(?P<v>[^，,]{1,6}?)(?:去的?|过去的?)?$",
        "commute",
    ),
    (
        r"^(?:现在|最近)?[^，,]{0,6}?(?P<v>开车|骑车|坐地铁|坐公交|打车|步行|走路)去(?:公司|上班)(?:了)?$",
        "commute",
    ),
    (r"^用的是(?P<v>.+?)手机$", "phone"),
    (r"^用的手机是(?P<v>.+)$", "phone"),
    # "笔记本是联想小新", "相机是索尼A7": a thing of one's own, by its make
    (r"^(?P<noun>笔记本|电脑|平板|相机|手表|耳机|游戏机)(?:是|用的是)(?P<v>.+)$", "attr"),
    (r"^用的(?P<noun>笔记本|电脑|平板|相机|手表|耳机|游戏机)是(?P<v>.+)$", "attr"),
    (
        r"^(?:一开始|以前|之前|原来|现在|目前|平时)?用的(?:是)?(?P<v>(?:iPhone|安卓|苹果|红米|小米|华为|三星|OPPO|vivo|荣耀|一加|魅族|Pixel|Galaxy|realme|Redmi|诺基亚|Xiaomi|Huawei|OnePlus).*)$",
        "phone",
    ),
    # "在用华为P40", "一直用小米14": the phone in use, by its make and model only
    (
        r"^(?:现在|目前|平时)?(?:在用|一直用|一直在用)(?P<v>(?:iPhone|苹果|红米|小米|华为|三星|OPPO|vivo|荣耀|一加|魅族|Pixel|Galaxy|realme|Redmi)[A-Za-z0-9 ]{0,12})(?:手机)?$",
        "phone",
    ),
    (r"^属(?P<v>[鼠牛虎兔龙蛇马羊猴鸡狗猪])(?:的|相)?$", "zodiac"),
    (r"^是(?P<v>白羊|金牛|双子|巨蟹|狮子|处女|天秤|天蝎|射手|摩羯|水瓶|双鱼)座(?:的)?$", "star_sign"),
    (
        r"^(?:[^，,]{0,6}?时)?(?:的)?(?:一个月|每个月|每月)?(?P<noun>工资|月薪|薪水|薪资|收入|年薪|底薪)(?:是|有|涨到了?|变成了?|降到了?|才)?(?P<v>[\d一二两三四五六七八九十百千万.kKwW]+)(?:块钱?|元)?(?:了|左右)?$",
        "salary",
    ),
    (r"^(?:是|算|算是)?(?:个|一个|一名)?(?P<v>" + _LEVEL + r")(?:了)?$", "level"),
    (
        r"^(?:正?在)?(?:上|读|念|升|进|升到|升入|考上)?(?P<v>(?:[一二三四五六]|初[一二三]|高[一二三])年级|大[一二三四]|研[一二三]|初[一二三]|高[一二三]|"
        r"幼儿园.{0,3}|[大中小]班|小学|初中|高中|大学|研究生|毕业)(?:了)?$",
        "grade",
    ),
    (r"^最(?:喜欢|爱)的(?P<noun>" + _CJK_CLASS + r"{0,4})是(?P<v>.+)$", "favourite"),
    # "最喜欢绿色了": a colour is a favourite colour
    (r"^最(?:喜欢|爱)(?P<v>" + _CJK_CLASS + r"{1,3}色)(?:了|啦)?$", "favourite_colour"),
    # "头发染成了粉色", "头发现在是蓝灰色": one colour at a time
    (
        r"^(?:的)?(?:头发|发色)(?:现在)?(?:染成了?|染了个?|染回了?|是)(?P<v>[^，,]{1,6}?)(?:的)?(?:了|啦)?$",
        "hair_colour",
    ),
    (r"^(?:的|家的?|家里的?)(?P<noun>" + _CJK_CLASS + r"{1,4}?)(?:是|叫|名叫)(?P<v>.+)$", "attr"),
    # "用户的网名叫…", "用户的猫叫咪咪": the subject took the 的; a name is what it is called
    (r"^(?P<noun>" + _CJK_CLASS + r"{1,3}?)(?:叫|名叫)(?P<v>[^，,]{1,8})$", "attr"),
    (r"^(?P<noun>" + _CJK_CLASS + r"{1,2})的是(?P<v>.+)$", "frame"),
    (r"^是(?P<v>.+)$", "is"),  # refined into job / gender / origin below
    (r"^负责(?P<v>.+)$", "responsibility"),
)

#: "和男朋友阿杰在一起三年了": the partner, by name
_PARTNER_NAMED = r"^(?:和|跟)(?:男朋友|女朋友|对象|老公|老婆|男友|女友)(?P<v>[\u4e00-\u9fffA-Za-z]{1,4}?)(?:在一起|谈恋爱|交往|谈了|结婚)"

# Polarity predicates: (regex, slot prefix); group "neg" marks the negative.
_ZH_POLARITY: tuple[tuple[str, str], ...] = (
    (r"^(?P<neg>没有|没|不再|从没|从来没)?养(?:了|过|着)?(?P<v>.+)$", "keeps:"),
    (
        r"^(?:(?P<neg>还没有?|没有?|从没|从来没)(?:考到|拿到|考下|考出|拿下|领到|考)|(?:考到|拿到|考下|考出|拿下|领到)了)(?P<v>.+)$",
        "possession:",
    ),
    (r"^(?P<neg>没有|没|不再)?有(?P<v>.+)$", "possession:"),
    (r"^(?P<neg>不再|不|从不|从来不)?吃(?P<v>.+)$", "eats:"),
    (r"^(?P<neg>不再|不|从不|从来不)?喝(?P<v>.+)$", "drinks:"),
    (r"^(?P<neg>不)?会(?P<v>(?:说|讲|开|弹|游|做|写|用|打|画|唱|跳).+)$", "can:"),
)

_EN_JOB_TITLES = (
    r"chef|cook|nurse|doctor|manager|engineer|student|teacher|lawyer|pilot|clerk|"
    r"intern|analyst|scientist|professor|dentist|vet|pharmacist|officer|consultant|director|founder|owner|"
    r"ceo|cto|cfo|head|lead|architect|barista|cashier|nanny|medic|paramedic|firefighter|attorney|"
    r"paralegal|mechanic|coach|surgeon|guard|secretary|midwife|actuary|associate|apprentice|trainee"
)
EN_JOB_WORD = _EN_JOB_WORD = re.compile(r"(?:er|or|ist|ian|ant|ent|ee|" + _EN_JOB_TITLES + r")$", re.IGNORECASE)
#: a title said without an article ("is CEO", "is head of sales"): only a word that is one
_EN_BARE_TITLE = re.compile(r"(?:^|\s)(?:" + _EN_JOB_TITLES + r")$", re.IGNORECASE)


def _en_job(value: str, counted: bool) -> str | None:
    """The job in "is a nurse" (``counted``: said with an article), else None.

    A job is a noun, and English counts it: "is a nurse", "is an engineer", "is the head of …".
    Without an article the word after "is" is an adjective or a participle, a state and not a
    job ("is confident", "is getting better", "is more excited than ever", "is off to dinner"),
    unless it is a bare title ("is CEO"). The suffixes (-er, -ent …) alone only say so of a noun.
    """
    job = _strip_measure(value)
    if not counted:
        return job if _EN_BARE_TITLE.search(job) else None
    return job if _EN_JOB_WORD.search(job) else None


_EN_PREDICATES: tuple[tuple[str, str], ...] = (
    # "goes to Lincoln Elementary", "is at Desert Ridge Middle now": one school at a time
    (
        r"^(?:now |still )?(?:goes to|attends|is at|'s at|is enrolled at|transferred to|studies at|is studying at) (?P<v>(?-i:[A-Z])[\w.'-]*(?: (?-i:[A-Z])[\w.'-]*)*?"
        r" (?:Elementary|Middle|High|Primary|Academy|Prep|School|College|University)(?: School)?)\b.*$",
        "school",
    ),
    # "studies in Boston", "goes to school in Denver", "is at college in Leeds": where one studies
    (
        r"^(?:now |still )?(?:studies|is studying|goes to (?:school|college|university|uni)|attends (?:school|college)|"
        r"is (?:now )?(?:at|in) (?:school|college|university|uni)) in (?P<v>(?-i:[A-Z])[\w.'-]*(?: (?-i:[A-Z])[\w.'-]*)*)\b.*$",
        "study_location",
    ),
    # "school is in Denver", "office is in Austin": where one studies or works, said of the place
    (
        r"^(?:school|college|university|uni|campus)(?:'s| is) (?:now )?in (?P<v>(?-i:[A-Z])[\w.'-]*(?: (?-i:[A-Z])[\w.'-]*)*)\b.*$",
        "study_location",
    ),
    (
        r"^(?:office|workplace|work|job|company)(?:'s| is) (?:now )?in (?P<v>(?-i:[A-Z])[\w.'-]*(?: (?-i:[A-Z])[\w.'-]*)*)\b.*$",
        "work_location",
    ),
    # "is in 4th grade", "'s in 5th now", "is a 3rd grader": a school year
    (
        r"^(?:is |'s )?(?:now |already )?in (?P<v>\d{1,2}(?:st|nd|rd|th)|kindergarten|pre-?k)(?: grade)?(?: now)?(?:[,.;!].*)?$",
        "grade",
    ),
    (r"^(?:is |'s )?(?:now |already )?an? (?P<v>\d{1,2}(?:st|nd|rd|th)) grader(?: now)?(?:[,.;!].*)?$", "grade"),
    # "just started 4th grade this fall", "moved up to 2nd grade": a school year begun
    (
        r"^(?:just |finally |now |recently )*(?:started|starts|began|is starting|entered|moved up to) "
        r"(?P<v>\d{1,2}(?:st|nd|rd|th)|first|second|third|fourth|fifth|sixth|seventh|eighth) grade\b(?! (?:teacher|class|math|science|reading))(?:[ ,.;!].*)?$",
        "grade",
    ),
    # "is vegan", "switched to keto this month", "so pescatarian now": one way of eating at a time
    (
        r"^(?:is |has been |'s )?(?:now |still |mostly |fully |strictly )?(?:an? )?"
        r"(?P<v>vegan|vegetarian|pescatarian|flexitarian)(?: now)?(?:[,.;!].*)?$",
        "diet",
    ),
    (
        r"^(?:(?:just |recently |then )?(?:switched|went|moved|changed) (?:over )?(?:back )?to|went|has gone|is going) "
        r"(?:a |the )?(?P<v>vegan|vegetarian|pescatarian|flexitarian|keto|paleo|carnivore|low[- ]carb|whole30)\b.*$",
        "diet",
    ),
    (
        r"^is (?:(?:now|officially|finally|already) )*an? (?P<v>freshman|sophomore|junior|senior)"
        r"(?: (?:in|at) (?:college|high school|university|uni|[\w.&' -]+)| year)?(?: now)?(?:,? (?:studying|majoring|doing) .*)?$",
        "grade",
    ),
    (r"^(?:just |finally |recently )*(?P<v>graduated)\b.*$", "grade"),
    (r"^(?:now |currently )?(?:lives|is living|resides|has been living) in (?P<v>.+)$", "residence"),
    (r"^(?:is )?(?:now )?based in (?P<v>.+)$", "residence"),
    (
        r"^(?:(?:just|recently|finally|officially|has|have) )*(?:moved|relocated) (?:back )?to "
        r"(?P<v>(?-i:[A-Z])[\w.'-]+(?: (?-i:[A-Z])[\w.'-]+)*)(?: .*)?$",
        "residence",
    ),
    # "rents a studio in Queens", "bought a house in Yonkers": where the user lives is where the home is
    (
        r"^(?:now |currently )?(?:rents|is renting|owns|bought|has bought|just bought) (?:an? |the )?(?:[\w-]+ )?"
        r"(?:studio|apartment|flat|house|home|condo|place|room|townhouse|bungalow|two-bedroom|one-bedroom)s? in (?P<v>.+)$",
        "residence",
    ),
    (r"^(?:is |comes )?from (?P<v>.+)$", "origin"),
    (r"^(?:now )?works (?:at|for) (?P<v>.+)$", "employer"),
    (r"^(?:now )?works in (?P<v>.+)$", "work_location"),
    (r"^(?:now )?works as (?:an? )?(?P<v>.+)$", "job"),
    # "just started a new job as a dental hygienist", "started working as a nurse"
    (
        r"^(?:(?:just|recently|finally) )*(?:started|began|got|landed|took) (?:a (?:new )?(?:job|gig|role|position)|working) as "
        r"(?:an? )?(?P<v>.+?)(?: this week| last week| today| now)?$",
        "job",
    ),
    # "is engaged to Daniel", "is married to Sam": the partner now
    (r"^(?:is |got |just got )?(?:now )?(?:engaged|married) to (?P<v>(?-i:[A-Z])[\w'-]+)\b.*$", "partner"),
    # one team at a time: "roots for the Celtics", "is a Warriors fan", "switched allegiance to the Knicks"
    (
        r"^(?:roots|cheers|is rooting) for (?:the )?(?P<v>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)*)\b.*$",
        "favourite_team",
    ),
    (
        r"^is (?:a |an |now a |now an )?(?:(?:big|huge|diehard|die-hard) )?(?P<v>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)*) fan\b.*$",
        "favourite_team",
    ),
    (
        r"^(?:has )?switched (?:allegiance|sides|teams) to (?:the )?(?P<v>(?-i:[A-Z])[\w'-]+(?: (?-i:[A-Z])[\w'-]+)*)\b.*$",
        "favourite_team",
    ),
    (
        r"^(?:has|owns|got|bought|has got) (?:an? |the )?(?:new )?(?P<v>(?:Pixel|iPhone|Galaxy|Samsung|OnePlus|Xiaomi|Huawei|Motorola|Nokia)\b.*)$",
        "phone",
    ),
    # "drove a Ford for years": what the user drove is the car on record until another
    (
        r"^(?:drove|used to drive|has driven) (?:an? |the )?(?P<v>(?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z0-9])[\w'-]*)*)\b.*$",
        "vehicle",
    ),
    (r"^is (?:severely |very |mildly )?allergic to (?P<v>.+)$", "allergy"),
    # one way of eating at a time: "is on the keto diet", "is doing intermittent fasting now"
    (
        r"^(?:is )?(?:on|doing|trying) (?:the |a )?(?P<v>keto|paleo|vegan|low[- ]carb|carnivore|mediterranean|intermittent fasting|whole30)\b.*$",
        "diet",
    ),
    (
        r"^(?:got the keys to|moved into|signed a lease (?:on|for)) (?:an? |the )?[\w-]+(?: [\w-]+)? in (?P<v>(?-i:[A-Z])[\w.'-]+(?: (?-i:[A-Z])[\w.'-]+)*)\b.*$",
        "residence",
    ),
    # "apartment's in Queens", "place is in Hoboken": where the user lives
    (
        r"^(?:apartment|flat|house|place|home|condo)(?:'s| is) (?:now )?in (?P<v>(?-i:[A-Z])[\w.'-]+(?: (?-i:[A-Z])[\w.'-]+)*)\b.*$",
        "residence",
    ),
    (r"^(?:now )?runs (?:the user's|his|her|their) own (?P<v>[\w' -]+?)(?: (?:in|on|at) .+)?$", "business"),
    (
        r"^(?P<noun>laptop|computer|bike|tablet|watch|console|camera)(?:'s| is) (?:an? |the )?(?P<v>(?-i:[A-Z0-9]).+)$",
        "attr",
    ),
    # "resting heart rate is around 72", "blood pressure is 150": one reading at a time
    (
        r"^(?P<noun>(?:resting )?heart rate|blood pressure|blood sugar|weight|cholesterol|bmi|body fat) is (?:around |about |roughly )?(?P<v>\d+(?:\.\d+)?)\b.*$",
        "measure",
    ),
    # "is 70 kg", "weighs 154 lbs", "is down to 64 kg now": one weight at a time
    (
        r"^(?:now )?(?:weighs|is|is at|is down to|is up to|got down to|dropped to) (?:around |about |roughly )?"
        r"(?P<v>\d{2,3}(?:\.\d+)?) ?(?:kg|kgs|kilos|kilograms|lbs?|pounds)\b.*$",
        "weight",
    ),
    (r"^(?:name is|is called|is named) (?P<v>.+)$", "name"),
    (r"^(?P<noun>[a-z]+(?: [a-z]+)?)'s name is (?P<v>.+)$", "named"),
    (r"^(?P<noun>dog|cat|pet|favou?rite \w+|major|degree) is (?:an? )?(?P<v>.+)$", "attr"),
    # "is in Leeds these days": a place named with a capital, where the user is now
    (
        r"^is (?:now |currently )?(?:in|living in|staying in) (?P<v>(?-i:[A-Z])[\w.'-]+(?: (?-i:[A-Z])[\w.'-]+)*)(?: (?:for|with|because) .+)?$",
        "residence",
    ),
    (r"^is (?:now )?(?P<v>\d+)(?: years old)?(?: now)?$", "age"),
    (r"^(?:(?:just|recently|finally|officially) )*turned (?P<v>\d+)(?: years old)?\b.*$", "age"),
    (
        r"^(?:was |got |has been )?(?:promoted|bumped up|moved up) to (?:an? |the )?(?P<v>[\w' -]+?)(?: (?:at|in) .+)?$",
        "job",
    ),
    (r"^was born in (?P<v>\d{4})$", "birth_year"),
    (r"^birthday is (?:on )?(?P<v>.+)$", "birthday"),
    # one partner at a time, by name: "has been dating Emma", "is seeing Priya", "is with Jordan"
    (
        r"^(?:is|has been) (?:now )?(?:dating|seeing|with|going out with) (?:someone named |a \w+ named )?"
        r"(?P<v>(?-i:[A-Z])[\w'-]+)(?: .*)?$",
        "partner",
    ),
    (
        r"^(?:is |has been )?(?:using|uses|owns|carries) (?:an? |the )?(?:(?:old|new|cheap|used|refurbished|trusty) )?"
        r"(?P<v>(?:Pixel|iPhone|Galaxy|Samsung|OnePlus|Xiaomi|Huawei|Motorola|Nokia)\b.*)$",
        "phone",
    ),
    (
        r"^is (?:now )?on (?:an? |the )?(?P<v>(?:Pixel|iPhone|Galaxy|Samsung|OnePlus|Xiaomi|Huawei|Motorola|Nokia)\b.*)$",
        "phone",
    ),
    (r"^is (?:now )?dating (?!an? \w+ named )(?P<v>.+)$", "marital"),
    (r"^is (?:now )?(?P<v>retired|unemployed|between jobs|out of work|jobless)$", "employment_status"),
    (r"^(?P<v>quit|left) (?:the user's|his|her|their) job$", "employment_status"),
    (r"^(?:now )?(?:drives|is driving) (?P<v>.+)$", "vehicle"),
    (r"^car is (?P<v>.+)$", "vehicle"),
    (r"^phone is (?P<v>.+)$", "phone"),
    (r"^is (?:now )?(?:an? |the )?(?P<v>[\w' -]+?)(?: (?:at|in|for|with|of) .+)?$", "en_is"),
)

# --------------------------------------------------------------------------
# Likings: one slot per thing liked, whatever the verb, the degree or the negation
# --------------------------------------------------------------------------

#: how much, or since when: said of a liking it changes nothing about what is liked ("特别爱吃火锅")
_ZH_DEGREE = (
    r"(?:很|非常|特别|超级?|最|挺|蛮|真的?|好|巨|贼|十分|相当|比较|更|越来越|一直|从小就?|向来|也|还|都|又|就|可|"
    r"尤其|格外|其实|确实|实在|打心(?:底|眼)里?|现在|已经|早就|如今|最近|开始)*"
)
#: the liking said not to hold: 不 and its company ("不再", "一点都不", "再也不", "没那么")
_ZH_NOT = (
    r"(?P<neg>(?:不再|不太|不怎么|不大|并不|根本不|压根(?:儿)?不|一点(?:儿)?(?:都|也)不|再也不|从来不|从不|没那么|没有那么|"
    r"没(?:有)?(?:以前|之前|原来)?那么|不)(?:是很|是太|太|怎么|那么|再)?)"
)
#: a verb of liking, or of its opposite (爱 not as in 爱人, 爱好, 爱情 …)
_ZH_LIKING = re.compile(
    r"^" + _ZH_DEGREE + r"(?:" + _ZH_NOT + _ZH_DEGREE + r")?"
    r"(?:(?P<verb>喜欢|喜爱|热爱|钟爱|偏爱|爱(?![人好情心护惜国岗犬])|迷恋|痴迷|迷(?=上)|中意)|"
    r"(?P<against>讨厌|厌恶|反感|受不了|受不住|嫌弃|排斥|烦(?![恼躁心闷])))"
    r"(?:上了?)?(?P<v>(?!的)[^，,;；]+)"
)
_ZH_INTEREST = re.compile(
    r"^对(?P<v>[^，,;；]+?)" + _ZH_DEGREE + r"(?P<neg>不再|不太|不怎么|一点(?:儿)?(?:都|也)不|不|没有?|没什么)?"
    r"(?:是很|太|怎么|那么|再)?(?:感兴趣|有兴趣|兴趣|感冒)"
)
#: a verb that only says how a thing is enjoyed: 爱吃火锅 and 不喜欢火锅 are about one thing, 火锅
_ZH_LIGHT_VERB = re.compile(r"^(?:吃|喝|看|听|玩|打|踢|逛|刷|追|读|去)(?=[\u4e00-\u9fffA-Za-z]{2})")
_EN_NOT_LIKING = (
    r"(?:(?:does not|doesn't|do not|don't|did not|didn't) (?:really |actually |even |particularly |much |exactly )?"
    r"(?:like|love|enjoy|care (?:much )?for|fancy|dig)|no longer (?:likes|loves|enjoys|cares for)|dislikes|hates|detests|loathes|"
    r"(?:can't|cannot|can no longer|could not|couldn't) stand|"
    r"(?:is not|isn't|is no longer) (?:really |that |very |much of )?(?:a (?:big |huge )?fan of|into|keen on|crazy about|big on)|"
    r"is (?:tired|sick) of|(?:has )?(?:gone|went) off|has lost (?:interest in|(?:his|her|their|the) taste for)|"
    r"(?:has )?stopped (?:liking|loving|enjoying)|is over|is done with)"
)
_EN_LIKING_RE = re.compile(
    r"^(?:(?:really|absolutely|totally|truly|still|also|just|now|actually|kind of|kinda|so) )*"
    r"(?:(?P<neg>" + _EN_NOT_LIKING + r")|(?:likes|loves|enjoys|adores|is into|is (?:a (?:big |huge )?)?fan of|"
    r"is crazy about|is obsessed with|is keen on|is passionate about|has a soft spot for))"
    r" (?P<v>.+)$",
    re.IGNORECASE,
)
_EN_LIGHT_VERB = re.compile(
    r"^(?:eating|drinking|watching|playing|listening to|reading|doing|going to|having) (?=\w)", re.IGNORECASE
)
_EN_LIKING_TAIL = re.compile(
    r"(?:,? (?:any ?more|now|these days|at all|a lot|very much|so much|that much|much|either|too|as much|"
    r"nowadays|lately|anymore))+$",
    re.IGNORECASE,
)


def _liking(predicate: str, english: bool) -> tuple[str, str] | None:
    """('likes:<thing>', 'yes' | 'no') for a liking said with any verb, degree and negation:
    特别爱吃火锅 and 不喜欢吃火锅 fill likes:火锅 with yes and no; "loves hot pot" and "can't stand
    hot pot anymore" likes:hot pot. 不再讨厌 is a liking again (two negations)."""
    if english:
        m = _EN_LIKING_RE.match(predicate)
        if not m:
            return None
        thing = _EN_LIGHT_VERB.sub("", _EN_LIKING_TAIL.sub("", _clean_value(m.group("v"))))
        negative = bool(m.group("neg"))
    else:
        m = _ZH_INTEREST.match(predicate) or _ZH_LIKING.match(predicate)
        if not m:
            return None
        thing = _ZH_LIGHT_VERB.sub(
            "", _clean_value(re.sub(r"(?<![了啦的哦呢咯])(?:了|啦|的|哦|呢|咯)+$", "", m.group("v")))
        )
        negative = bool(m.group("neg")) != bool(m.groupdict().get("against"))
    thing = _strip_measure(_clean_value(thing)).lower()
    if not thing:
        return None
    return f"likes:{thing}", "no" if negative else "yes"


_EN_POLARITY: tuple[tuple[str, str], ...] = (
    (
        r"^(?P<neg>does not (?:actually |really )?(?:have|own)|doesn't (?:actually |really )?(?:have|own)|has no|no longer (?:has|owns)|never (?:had|owned)) (?P<v>.+)$",
        "possession:",
    ),
    (r"^(?:has|owns) (?P<v>.+)$", "possession:"),
    (r"^(?P<neg>does not eat|doesn't eat|never eats|no longer eats) (?P<v>.+)$", "eats:"),
    (r"^eats (?P<v>.+)$", "eats:"),
    (r"^(?P<neg>does not drink|doesn't drink|never drinks|no longer drinks) (?P<v>.+)$", "drinks:"),
    (r"^drinks (?P<v>.+)$", "drinks:"),
)

_ZH_SUBJECT = re.compile(r"^用户(?:的)?(?P<role>" + ZH_ROLE_PATTERN + r")?")
_EN_SUBJECT = re.compile(r"^the user(?:'s|’s)?(?:\s+(?P<role>" + EN_ROLE_PATTERN + r")(?:'s|’s)?)?\s*", re.IGNORECASE)
#: "用户养了只柴犬，叫可乐": a named pet, one breed
_PET_NAMED = re.compile(
    r"养(?:了|着)?(?:一|两)?(?:只|条|头|匹|个)?(?P<v>[^，,。叫]{1,6}?)[，,]?(?:它|牠)?(?:叫|名叫|名字叫)(?P<n>[^，,。的]{1,6})"
)
#: "有两万读者", "有两个孩子": how many of something
_COUNT = re.compile(
    r"有(?P<n>(?:\d+|[一二两三四五六七八九十百千万几]+)(?:多|来)?(?:万|千|百)?)(?:个|位|只|名|条|套|辆|本|家|w|W)?"
    r"(?P<t>" + _CJK_CLASS + r"{1,4})$"
)


_GRADE_WORDS = r"(?:[一二三四五六]|初[一二三]|高[一二三])年级|大[一二三四]|研[一二三]|初[一二三]|高[一二三]"


def _refine_is(value: str) -> tuple[str, str] | None:
    """Split "是X" into the slot it actually fills, or None when unclear."""
    m = re.fullmatch(r"(?P<g>" + _GRADE_WORDS + r")(?:的)?学生", value)
    if m:
        return "grade", m.group("g")
    if value in GENDER_WORDS:
        return "gender", value
    if re.fullmatch(r"[\u4e00-\u9fff]{1,5}人", value) and not value.startswith(("一个", "好", "坏", "个")):
        return "origin", value
    if looks_like_job(value):
        return "job", re.sub(r"^(?:一[个名位]|个|名)", "", value)
    if re.fullmatch(r"[一二三四五六七八九]?十[一二三四五六七八九]?|[1-9]\d?", value):
        return "age", _number(value)  # "我爸今年是六十三": a bare number said of a person is an age
    return None


def species_of(thing: str) -> str | None:
    """'狸花猫' → 猫, '柴犬' → 狗; None when the word names no pet."""
    for species, words in _SPECIES:
        if re.search(words, thing, re.IGNORECASE):
            return species
    return None


def _species(thing: str) -> str:
    return species_of(thing) or _strip_measure(thing)


def _consumption(predicate: str) -> tuple[str, str] | None:
    """'一天两包烟' → (consumes:烟, 两包); '戒烟了' → (consumes:烟, no); None if not about smoking/drinking."""
    # a coffee shop, a barista, a tea house: where or what one works, not what one drinks
    if re.search(r"喜欢|爱|讨厌|味|店|馆|厅|师|机|杯子|\bshop\b|\bmaker\b", predicate):
        return None
    for thing, words in _CONSUMED:
        if not re.search(words, predicate, re.IGNORECASE):
            continue
        if re.search(r"(?:^|[^已])在戒|正在戒|\bquitting\b|\bcutting (?:down|back)\b", predicate, re.IGNORECASE):
            return f"consumes:{thing}", "quitting"
        if _CONSUMPTION_STOPPED.search(predicate):
            return f"consumes:{thing}", "no"
        amount = re.search(
            r"(?:\d+|[一二两三四五六七八九十几半]+)(?:多)?(?:包|根|支|杯|瓶|罐|听)|"
            r"\b(?:a|one|two|three|four|five|six|\d+) (?:pack|cigarette|cup|glass|bottle|coffee|beer|drink|can|shot)s?\b",
            predicate,
            re.IGNORECASE,
        )
        return f"consumes:{thing}", amount.group(0).lower() if amount else "yes"
    return None


_EN_NUMBERS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8"}
#: makes and models people name for the car they own ("has a Ferrari" is the car the user drives)
_CAR_MAKES = (
    r"toyota|corolla|camry|prius|honda|civic|accord|ford|tesla|bmw|audi|mercedes|benz|porsche|ferrari|lamborghini|jeep|kia|"
    r"hyundai|nissan|subaru|mazda|volkswagen|vw|volvo|lexus|chevy|chevrolet|mini|fiat|dodge|jaguar|land rover|range rover"
)


def _english_extra(predicate: str) -> list[tuple[str, str]]:
    """'has two kids' → count:kid, 'owns a Ferrari' → vehicle."""
    found: list[tuple[str, str]] = []
    m = re.match(
        r"^(?:has|owns|have) (?P<n>\d+|one|two|three|four|five|six|seven|eight) (?P<t>[a-z]+?)s?$",
        predicate,
        re.IGNORECASE,
    )
    if m:
        n = m.group("n").lower()
        found.append((f"count:{m.group('t').lower()}", _EN_NUMBERS.get(n, n)))
    m = re.match(
        r"^(?:has|owns|bought|got|drives) (?:an? |the |my )?(?:new |used |old )?(?:\d{4} )?(?P<v>(?:"
        + _CAR_MAKES
        + r")\b.*)$",
        predicate,
        re.IGNORECASE,
    )
    if m:
        found.append(("vehicle", m.group("v")))
    return found


def _match_predicates(predicate: str, english: bool) -> list[tuple[str, str]]:
    flags = re.IGNORECASE if english else 0
    found: list[tuple[str, str]] = []
    if english:
        found += _english_extra(predicate)
    else:
        m = re.match(r"^(?:有|买了|新买了)(?:一)?辆(?P<v>[^，,]+)$", predicate)
        if m:
            found.append(("vehicle", m.group("v")))  # 辆: a car (or a bike), the one the user has
    consumed = _consumption(predicate)
    if consumed:
        found.append(consumed)
    liked = _liking(predicate, english)
    if liked:
        found.append(liked)
    marital = _marital(predicate, english)
    if marital:
        found.append(marital)
    for pattern, prefix in _EN_POLARITY if english else _ZH_POLARITY:
        m = re.match(pattern, predicate, flags)
        if m and _clean_value(m.group("v")):
            thing = _strip_measure(_clean_value(m.group("v"))).lower()
            if prefix == "keeps:":
                thing = _species(re.split(r"[，,]", thing)[0])
            elif english and prefix == "possession:" and species_of(thing) and len(thing.split()) <= 3:
                prefix, thing = "keeps:", species_of(thing) or thing  # "has a golden retriever" keeps a dog
            negative = bool(m.groupdict().get("neg"))
            found.append((prefix + thing, "no" if negative else "yes"))
            break
    if not english:
        m = _PET_NAMED.search(predicate)
        if m:
            found.append((f"pet:{_clean_value(m.group('n'))}", _clean_value(m.group("v"))))  # the breed as said
        m = re.search(r"(?:是|是一|就是)(?:只|条|头|匹)(?P<v>[\u4e00-\u9fff]{1,5})$", predicate)
        if m:
            found.append(("kind", m.group("v")))  # "…，是只泰迪": what it is
        m = _COUNT.search(re.split(r"[，,]", predicate)[0])
        if m:
            found.insert(0, (f"count:{m.group('t')}", _number(m.group("n"))))
    partner = None if english else re.match(_PARTNER_NAMED, predicate)
    if partner:  # "和男朋友阿杰在一起三年了": dating, and with whom
        found.insert(0, ("relationship:伴侣:name", partner.group("v")))
    if found and found[0][0].startswith(("consumes:", "marital", "relationship:伴侣")):
        return found
    for pattern, slot in _EN_PREDICATES if english else _ZH_PREDICATES:
        m = re.match(pattern, predicate, flags)
        if not m:
            continue
        value = _clean_value(m.group("v") if english else re.split(r"[，,;；]", m.group("v"))[0])
        if not value:
            break
        refined = _refine(slot, value, m, english)
        if refined:
            found.insert(0, refined)
            break
        # a pattern whose value is not of its kind ("住了十几年") leaves the rest to try
    return found


def _refine(slot: str, value: str, m: re.Match[str], english: bool) -> tuple[str, str] | None:
    if slot == "employment":
        return slot, f"{value}/{_clean_value(m.group('w'))}"
    if slot == "work_location" and looks_like_organisation(value):
        return "employer", value
    if slot == "work_location" and re.match(r"^(?:做|当|干)(?=\S{2})", value) and looks_like_job(value[1:]):
        return "job", value[1:]  # "在做HR专员工作": what the work is, not where
    if slot == "is":
        return _refine_is(value)
    if slot == "en_is":
        if re.search(r"\band\b|^\d", value):
            return None  # "is 27 and works as a nurse": two statements, read one at a time
        job = _en_job(value, counted=bool(re.match(r"^is (?:now )?(?:an? |the )", m.group(0), re.IGNORECASE)))
        return ("job", job) if job else None
    if slot in ("job", "vehicle", "phone") and english:
        return slot, _strip_measure(value)
    if slot == "age":
        return slot, _number(m.group("v")) + ("半" if m.groupdict().get("half") else "")
    if slot == "origin":
        return slot, re.sub(r"的$", "", value) or value
    if (
        slot == "residence"
        and not english
        and re.match(r"^(?:了|过|着|得|惯)|^[一二两三四五六七八九十几\d]+(?:年|个月)", value)
    ):
        return None  # "住了十几年": how long, not where
    if slot == "attr" and english and re.fullmatch(r"[A-Z][\w'-]+", value) and m.group("noun") in ("dog", "cat", "pet"):
        return f"attr:{m.group('noun').lower()}:name", value  # "my cat is Miso" names the cat
    if slot in ("favourite", "attr", "frame"):
        return f"{slot}:{m.group('noun')}", value
    if slot == "favourite_colour":
        return "favourite:颜色", value
    if slot == "promoted_job":
        return ("job", value) if looks_like_job(value) else None
    if slot == "measure":
        return f"measure:{m.group('noun').lower()}", value
    if slot == "named":
        return f"attr:{m.group('noun').lower()}:name", value
    if slot == "level":
        return slot, value
    return slot, value


def _marital(predicate: str, english: bool) -> tuple[str, str] | None:
    if english and re.match(
        r"^(?:is|has been) (?:now )?(?:dating|seeing|with|going out with) (?:someone named |an? \w+ named )?[A-Z]",
        predicate,
    ):
        return None  # "is dating Priya": who, read as the partner slot
    if english:
        if not re.match(
            r"^(?:is |got |just got )?(?:now )?(?:single|married|divorced|engaged|widowed|dating|in a relationship|broke up)",
            predicate,
            re.IGNORECASE,
        ):
            return None
    elif not re.match(
        r"^(?:上个?月|上周|今天|昨天|前天|前几天|去年|今年|终于)?(?:已经|刚|刚刚|又|是|还是)?"
        r"(?:单身|未婚|已婚|离婚|离异|结婚|领证|领了证|扯证|订婚|恋爱|在谈恋爱|谈恋爱|脱单|有对象|有男朋友|有女朋友|有男友|有女友|和|跟|"
        r"(?:交|谈|找)了(?:个|一个)?(?:新的?)?(?:男朋友|女朋友|男友|女友|对象))",
        predicate,
    ):
        return None
    for status, words in _MARITAL_WORDS:
        if re.search(words, predicate, re.IGNORECASE):
            return "marital", status
    return None


_CN_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _number(text: str) -> str:
    """'二十九' → '29', '029' → '29'; anything else ('几千', '上万') as said."""
    if text.isdigit() and text.isascii():
        # not int(): it refuses a run of over 4,300 digits (a 16,000-digit "age" raised: issue 25)
        return text.lstrip("0") or "0"
    if text.isdigit():
        return str(int(text)) if len(text) < 100 else text
    if not re.fullmatch(r"[零一二两三四五六七八九十百]+", text):
        return text
    total, current = 0, 0
    for ch in text:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
        elif ch == "十":
            total += (current or 1) * 10
            current = 0
        elif ch == "百":
            total += (current or 1) * 100
            current = 0
    return str(total + current)


def slots_of(fact_text: str) -> list[tuple[str, str]]:
    """Every (slot, value) a third-person fact fills, the main one first; [] when none applies.

    A fact restated with more said after it ("用户的女儿今年5岁，在上幼儿园") is
    read by its first clause when the whole says nothing a slot knows.
    """
    if not isinstance(fact_text, str):
        return []
    return list(_slots_of(fact_text))


# A user's known facts are read again for every new item of every message: read each text once.
@functools.lru_cache(maxsize=16_384)
def _slots_of(fact_text: str) -> tuple[tuple[str, str], ...]:
    text = unicodedata.normalize("NFKC", fact_text).strip()
    # "用户家老爷子…": a relative of the user's, as "用户的老爷子…" says it
    text = re.sub(r"^用户家的?(?=(?:" + ZH_ROLE_PATTERN + "))", "用户的", text)
    # an emoji or a symbol at the end says nothing of the value ("挤地铁去公司😮‍💨")
    text = re.sub(r"(?<![^\w\u4e00-\u9fff%)）])[^\w\u4e00-\u9fff%)）]+$", "", text) or text
    # "These days the user is in Leeds", "And as of this month the user is …": when, then what
    lead = re.match(r"^(?:[A-Za-z][\w'-]*[ ,:]+){1,6}?(?=the user\b)", text, re.IGNORECASE)
    if (
        lead
        and not re.match(r"the user\b", text, re.IGNORECASE)
        and not re.search(r"\b(?:if|when|before|after|because|who|that|which|not|never)\b", lead.group(0), re.I)
    ):
        text = text[lead.end() :]
        text = text[:1].upper() + text[1:]
    # "昨天刚过完生日，用户正式30了": the scene first, then the statement
    zh_lead = re.match(r"^[^用，,。]{1,12}[，,]\s*(?=用户)", text)
    if zh_lead and not re.search(r"如果|要是|假如|万一|的话|等|想|打算|准备", zh_lead.group(0)):
        text = text[zh_lead.end() :]
    found = _slots(text)
    if not found:
        first = re.split(r"[，,;；]|\s+(?:and|but)\s+", text)[0]
        if first != text:
            found = _slots(first)
    if not found and re.match(r"the user\b", text, re.IGNORECASE):
        # "The user said that wrong, the user is actually 31": the clause that says what
        for clause in re.split(r"[,;]\s*|\s+(?:and|but|so)\s+", text)[1:3]:
            if re.match(r"the user\b", clause, re.IGNORECASE):
                found = _slots(clause[:1].upper() + clause[1:])
                if found:
                    return tuple(found)
    whose = re.match(r"^用户(?:的(?:" + ZH_ROLE_PATTERN + "))?", text)
    if whose:
        # "用户上周又换，现在用的是vivo X100", "用户在读研一，学的是材料": a later clause of
        # the same statement says what, or says more
        for clause in re.split(r"[，,;；]", text)[1:3]:
            if clause and not re.match(r"^(?:用户|他|她|它|" + ZH_ROLE_PATTERN + ")", clause):
                seen = {slot for slot, _ in found}
                # an aside ("有点高", "没怎么变") is not a second attribute
                found += [
                    pair
                    for pair in _slots(whose.group(0) + clause)
                    if pair[0] not in seen and not pair[0].startswith((*POLARITY_PREFIXES, "consumes:"))
                ]
    return tuple(found)


#: "用户有个女朋友叫小雨": the partner, by name
_HAS_PARTNER = re.compile(
    r"^用户(?:有|交了)(?:个|一个|一位)?(?:新)?(?P<role>男朋友|女朋友|对象|男友|女友|老公|老婆)(?:了)?[，,]?(?:叫|名叫)(?P<v>[\u4e00-\u9fffA-Za-z]{1,4})$"
)


def _slots(text: str) -> list[tuple[str, str]]:
    role: str | None = None
    partner = _HAS_PARTNER.match(text)
    if partner:
        return [
            (f"relationship:{ROLE_SYNONYMS.get(partner.group('role'), partner.group('role'))}:name", partner.group("v"))
        ]
    m = _ZH_SUBJECT.match(text)
    if m:
        english = False
        role = m.group("role")
        predicate = text[m.end() :]
        predicate = re.sub(r"^" + _ADVERBS, "", predicate)
        predicate = re.sub(r"^是(?=在|住)", "", predicate)  # "用户是在长沙读书"
    else:
        m = _EN_SUBJECT.match(text)
        if not m:
            return []
        english = True
        role = m.group("role")
        # "The user's name is Tom" leaves "name is Tom", which _EN_PREDICATES reads
        predicate = text[m.end() :].strip()
        predicate = re.sub(
            r"^(?:(?:now|currently|still|also|actually|really|officially|finally) )+",
            "",
            predicate,
            flags=re.IGNORECASE,
        )
        predicate = re.sub(
            r"^(is|am|are) (?:(?:now|currently|still|also|actually|really|officially|finally) )+",
            r"\1 ",
            predicate,
            flags=re.IGNORECASE,
        )
        # "phone's a Pixel 6": the contraction of "is"
        predicate = re.sub(r"^([a-z]+)'s (?=(?:an? |the )?[A-Z0-9])", r"\1 is ", predicate)
        # "is a dog groomer now": when is not what
        predicate = re.sub(
            r"(?:,? (?:now|these days|nowadays|currently|at the moment|anymore))+$", "", predicate, flags=re.IGNORECASE
        )
    found = _match_predicates(predicate, english)
    if role is not None and english and not found:
        # "The user's partner is Jake", "The user's partner Jake and the user have been together …"
        named = re.fullmatch(r"is (?P<v>[A-Z][\w'-]+)", predicate) or re.match(
            r"(?P<v>(?!The\b|He\b|She\b|They\b)[A-Z][\w'-]+)\b(?! is\b)", predicate
        )
        if named:
            found = [("name", named.group("v"))]
    if role is not None:
        canonical_role = ROLE_SYNONYMS.get(role.lower(), role)
        return [(f"relationship:{canonical_role}:{slot}", value) for slot, value in found]
    return found


def slot_of(fact_text: str) -> tuple[str, str] | None:
    """The main (slot, value) a third-person fact fills, or None when no slot applies.

    >>> slot_of("用户住在杭州")
    ('residence', '杭州')
    >>> slot_of("用户的老板姓张")
    ('relationship:老板:surname', '张')
    """
    found = slots_of(fact_text)
    return found[0] if found else None


def is_liking_slot(slot: str) -> bool:
    """likes:火锅, relationship:女儿:likes:西兰花: how someone feels about a thing."""
    return slot.startswith("likes:") or (slot.startswith("relationship:") and ":likes:" in slot)


def is_polarity_slot(slot: str) -> bool:
    """Polarity slots hold yes/no: a different value is a contradiction, not an update."""
    if slot.startswith("relationship:"):
        slot = slot.split(":", 2)[2]
    return slot.startswith(POLARITY_PREFIXES)


#: roles that often name several people ("a colleague"): a new value is another person
_PLURAL_ROLES = frozenset({"同事", "同学", "朋友", "室友", "邻居", "客户", "合伙人", "孩子", "实习生", "发小", "闺蜜"})
#: what one child has one of at a time: said of 孩子 (not of 老大, 老二 …), a new value replaces the old
#: (a name is not among them: children are introduced by name one after the other)
_ONE_CHILD_ATTRIBUTES = frozenset(
    {"age", "grade", "school", "study_location", "residence", "work_location", "employer", "job"}
)
#: attributes of which one has several ("用户的爱好是…"): not replaced by a new value
_PLURAL_ATTRIBUTES = frozenset({"爱好", "兴趣", "朋友", "同学", "同事", "孩子", "宠物", "特长", "偶像"})


def is_exclusive_slot(slot: str) -> bool:
    """True when a new value replaces the old one (one residence, one boss's surname)."""
    if slot.startswith("relationship:"):
        _, role, attribute = slot.split(":", 2)
        if role == "孩子" and attribute in _ONE_CHILD_ATTRIBUTES:
            return True  # "孩子上二年级了", "孩子在上海上学": most who say 孩子 mean their one child
        return role not in _PLURAL_ROLES and is_exclusive_slot(attribute)
    if slot.startswith(("attr:", "favourite:", "frame:")):
        return slot.split(":", 1)[1] not in _PLURAL_ATTRIBUTES
    return slot in EXCLUSIVE_SLOTS or slot.startswith(("consumes:", "pet:", "count:", "measure:"))


# --------------------------------------------------------------------------
# Negation
# --------------------------------------------------------------------------

#: negation markers, longest first; each maps to what the positive form may have
#: instead ("没" is "没有" shortened, or plain "not" before a verb: 没去过)
_ZH_NEGATIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("并没有", ("有", "")),
    ("不再", ("",)),
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
            ("no longer ", ""),
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
    slots_a, slots_b = dict(slots_of(a)), dict(slots_of(b))
    for slot, value in slots_a.items():
        if slot in slots_b and is_polarity_slot(slot):
            return value != slots_b[slot]
    forms_a, negated_a = _positive_forms(a)
    forms_b, negated_b = _positive_forms(b)
    return negated_a != negated_b and bool(forms_a & forms_b - {""})
