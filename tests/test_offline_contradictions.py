"""Contradictions the offline rules must see (issue 24, finding 4), with invented sentences.

* a space inside Chinese text splits no value: Chinese is written without spaces;
* a negated liking is the liking of the same thing with the other polarity, whatever the verb;
* a relative's one-value attributes (where they live, study, work; their school, year, employer)
  take a new value exactly as the user's own do: the subject is a parameter of the slot.

Each table has look-alikes that must change nothing.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from factledger.domain.values import Relation
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.judge import RuleJudge


def fact_texts(extractor: RuleExtractor, message: str, known: tuple[str, ...] = ()) -> list[str]:
    return [f.text for f in extractor.extract(message, known_facts=known).facts]


# -- a space inside Chinese --------------------------------------------------------------------


@pytest.mark.parametrize(
    "spaced",
    [
        "我住在北\u3000京",  # the ideographic space
        "我住在北 京",
        "我住在北\u00a0京",  # a no-break space
        "我住在北\u2009京",  # a thin space
        "我住在北\u200b京",  # a zero-width space
        "我 住在 北京",
    ],
)
def test_a_space_inside_chinese_splits_no_value(extractor: RuleExtractor, spaced: str) -> None:
    assert fact_texts(extractor, spaced) == ["用户住在北京"]
    # and said again with a space, it is the same value, not a new one that replaces it
    said_again = fact_texts(extractor, spaced, known=("用户住在北京",))
    assert said_again == ["用户住在北京"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I live in New York", ["The user lives in New York"]),  # spaces between Latin words stay
        ("我平时用 VS Code 写代码", []),  # a name in Latin letters keeps its space
        ("我住在北京\n我女儿叫小米", ["用户住在北京", "用户的女儿叫小米"]),  # a line break still ends a sentence
    ],
)
def test_spaces_that_mean_something_stay(extractor: RuleExtractor, message: str, expected: list[str]) -> None:
    extraction = extractor.extract(message)
    assert [f.text for f in extraction.facts] == expected
    if not expected:
        assert [p.text for p in extraction.preferences] == ["偏好使用VS Code"]


# -- a liking and its negation -----------------------------------------------------------------


def active_after(messages: list[str], home: Path) -> list[str]:
    """The user's active facts and preferences once ``messages`` went through an in-memory ledger."""
    ledger = open_ledger(
        Settings(home=home, backend="memory", schema=f"u{uuid.uuid4().hex[:10]}"), warn_if_offline=False
    )
    try:
        for n, message in enumerate(messages):
            ledger.ingest("u1", message, session_id="s", message_id=f"m{n}")
        memory = ledger.ledger.find_memory("u1")
        assert memory is not None
        return [f.text for f in memory.active_facts()] + [p.text for p in memory.all_preferences()]
    finally:
        ledger.close()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户特别爱吃火锅", "用户不喜欢吃火锅"),  # a degree, another verb, the light verb 吃
        ("用户喜欢吃香菜", "用户现在讨厌香菜"),  # a verb of disliking
        ("用户超爱喝奶茶", "用户现在一点都不爱喝奶茶"),
        ("用户不喜欢吃榴莲", "用户爱上了榴莲"),  # the other way round
        ("用户讨厌跑步", "用户不再讨厌跑步"),  # two negations make a liking
        ("用户对摄影很感兴趣", "用户对摄影不感兴趣了"),
        ("用户的女儿爱吃西兰花", "用户的女儿现在不爱吃西兰花"),  # a relative's, the same way
        ("喜欢看科幻电影", "用户不再喜欢科幻电影"),  # a preference, then a fact
        ("对摄影感兴趣", "用户现在对摄影不感兴趣"),
        ("The user loves hot pot", "The user no longer likes hot pot"),
        ("The user likes jazz", "The user cannot stand jazz anymore"),
        ("The user hates sushi", "These days the user is really into sushi"),
        ("The user really enjoys running", "The user is not a fan of running anymore"),
        ("Likes reading comics", "Dislikes reading comics"),
        ("The user's sister adores cats", "The user's sister doesn't like cats"),
    ],
)
def test_a_liking_turned_the_other_way_conflicts(judge: RuleJudge, old: str, new: str) -> None:
    verdict = judge.judge(old, new)
    assert verdict.relation is Relation.CONFLICT, verdict.raw_answer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户喜欢吃火锅", "用户不喜欢吃烧烤"),  # another thing
        ("用户喜欢吃火锅", "用户的老婆不喜欢吃火锅"),  # someone else
        ("用户喜欢周杰伦", "用户也喜欢五月天"),  # a second liking
        ("用户最喜欢的颜色是蓝色", "用户不喜欢红色"),  # a favourite is no liking of 的颜色
        ("用户的爱人在上海工作", "用户不爱吃辣"),  # 爱人 is no verb
        ("The user loves hot pot", "The user does not like barbecue"),
        ("The user loves hot pot", "The user's sister does not like hot pot"),
    ],
)
def test_look_alikes_of_a_turned_liking_stay(judge: RuleJudge, old: str, new: str) -> None:
    verdict = judge.judge(old, new)
    assert verdict.relation not in (Relation.CONFLICT, Relation.UPDATE), verdict.raw_answer


@pytest.mark.parametrize(
    ("messages", "now", "gone"),
    [
        (["我特别爱吃火锅", "我不喜欢吃火锅"], "用户不喜欢吃火锅", "用户特别爱吃火锅"),
        (["我喜欢吃香菜", "我现在讨厌香菜"], "用户讨厌香菜", "用户喜欢吃香菜"),
        (["我喜欢看科幻电影", "我不再喜欢科幻电影了"], "不再喜欢科幻电影", "喜欢看科幻电影"),
        (["我不喜欢吃榴莲", "后来我爱上了榴莲"], "用户爱上了榴莲", "用户不喜欢吃榴莲"),
        (["我挺爱看恐怖片的", "恐怖片我现在不爱看了"], "不爱看恐怖片", "挺爱看恐怖片的"),  # what is liked said first
        (["我迷上了滑板", "我对滑板没兴趣了"], "用户对滑板没兴趣", "用户迷上了滑板"),
        (["I love hot pot", "I no longer like hot pot"], "The user no longer likes hot pot", "The user loves hot pot"),
        (["I hate sushi", "These days I'm really into sushi"], "really into sushi", "The user hates sushi"),
    ],
)
def test_a_negated_liking_retires_the_liking(messages: list[str], now: str, gone: str, tmp_path: Path) -> None:
    active = active_after(messages, tmp_path)
    assert any(now in item for item in active), active
    assert gone not in active, active


@pytest.mark.parametrize(
    "messages",
    [
        ["我喜欢吃火锅", "我不喜欢吃烧烤"],
        ["我喜欢吃火锅", "我老婆不喜欢吃火锅"],
        ["我喜欢吃火锅", "要是哪天我不喜欢吃火锅了就好了"],
        ["I love hot pot", "My sister doesn't like hot pot"],
    ],
)
def test_look_alikes_of_a_negated_liking_retire_nothing(messages: list[str], tmp_path: Path) -> None:
    first = active_after(messages[:1], tmp_path / "first")
    assert set(first) <= set(active_after(messages, tmp_path / "both")), first


# -- a relative's one-value attributes: the subject is a parameter of the slot ------------------

_ZH_SUBJECTS = ("我", "我女儿", "我妈", "我老公", "我孩子")
_ZH_ONE_VALUE = (
    ("{}住在北京", "{}住在上海"),  # where one lives
    ("{}在北京上学", "{}在上海上学"),  # where one studies
    ("{}在南京念书", "{}现在在苏州念书"),
    ("{}的学校在北京", "{}的学校在上海"),
    ("{}在北京工作", "{}在上海工作"),  # where one works
    ("{}在华为工作", "{}在腾讯工作"),  # for whom
    ("{}在实验小学上学", "{}在育才小学上学"),  # which school
    ("{}读初二", "{}读初三"),  # which year
    ("{}是老师", "{}是医生"),  # what one does
)
_EN_SUBJECTS = ("I", "My daughter", "My mom", "My brother")
_EN_ONE_VALUE = (
    ("{} lives in Boston", "{} lives in Denver"),
    ("{} studies in Boston", "{} studies in Denver"),
    ("{} goes to school in Boston", "{} goes to school in Denver"),
    ("{} goes to Lincoln Elementary", "{} goes to Washington Middle School"),
    ("{} works at Google", "{} works at Apple"),
    ("{} works as a nurse", "{} works as a teacher"),
)


_EN_OWNERS = ("My", "My daughter's", "My mom's")
_EN_OWNED_ONE_VALUE = (
    ("{} school is in Boston", "{} school is in Denver now"),
    ("{} office is in Denver", "{} office is in Austin now"),
)


def _said_by(template: str, subject: str) -> str:
    text = template.format(subject)
    if subject == "I":  # the first person's verb: "I live", not "I lives"
        text = text.replace("I lives", "I live").replace("I studies", "I study").replace("I goes", "I go")
        text = text.replace("I works", "I work")
    return text


@pytest.mark.parametrize(
    ("first", "then"),
    [
        (_said_by(old, subject), _said_by(new, subject))
        for templates, subjects in (
            (_ZH_ONE_VALUE, _ZH_SUBJECTS),
            (_EN_ONE_VALUE, _EN_SUBJECTS),
            (_EN_OWNED_ONE_VALUE, _EN_OWNERS),
        )
        for old, new in templates
        for subject in subjects
    ],
)
def test_a_new_value_of_a_one_value_attribute_replaces_the_old_whoever_it_is_of(
    first: str, then: str, tmp_path: Path
) -> None:
    before = active_after([first], tmp_path / "before")
    after = active_after([first, then], tmp_path / "after")
    assert len(before) == 1 and len(after) == 1 and after != before, (before, after)


def test_a_school_changed_to_is_a_school_not_a_workplace(tmp_path: Path) -> None:
    active = active_after(["我儿子在三中读初二", "我儿子转到了五中"], tmp_path)
    assert active == ["用户的儿子在五中上学"], active


@pytest.mark.parametrize(
    "messages",
    [
        ["我女儿在北京上学", "我儿子在上海上学"],  # two relatives
        ["我在北京上学", "我女儿在上海上学"],  # the user and a relative
        ["我同学在北京上学", "我同学在上海上学"],  # people one has several of
        ["我同事住在北京", "我同事住在上海"],
        ["我女儿在北京上学", "我女儿明年要去上海上学"],  # a plan
        ["我女儿在北京上学", "我女儿周末在少年宫上课"],  # a class is not a school
        ["我女儿在北京上学", "我女儿今天去上海玩了"],  # a trip
        ["我女儿在北京上学", "要是我女儿能去上海上学就好了"],  # a wish
        ["我孩子叫小明", "我孩子叫小红"],  # children are introduced by name one after the other
        ["My daughter studies in Boston", "My son studies in Denver"],
        ["My daughter studies in Boston", "My daughter is visiting Denver this week"],
        ["My daughter studies in Boston", "My daughter will study in Denver next year"],
    ],
)
def test_look_alikes_of_a_relatives_new_value_keep_the_old(messages: list[str], tmp_path: Path) -> None:
    first = active_after(messages[:1], tmp_path / "first")
    assert set(first) <= set(active_after(messages, tmp_path / "both")), first


def test_fifteen_school_cities_leave_one(tmp_path: Path) -> None:
    """The issue's history: a daughter's school city said again and again, among other people's cities."""
    cities = [
        "北京",
        "上海",
        "广州",
        "深圳",
        "杭州",
        "南京",
        "成都",
        "重庆",
        "武汉",
        "西安",
        "苏州",
        "天津",
        "长沙",
        "郑州",
        "青岛",
    ]
    others = ("我儿子在{}工作", "我老婆在{}上班", "我妈住在{}", "我同学在{}上学")
    messages = []
    for n, city in enumerate(cities):
        messages += [f"我女儿在{city}上学", others[n % len(others)].format(cities[(n + 3) % len(cities)]), "今天好累"]
    active = active_after(messages, tmp_path)
    assert [item for item in active if item.startswith("用户的女儿")] == ["用户的女儿在青岛上学"], active
