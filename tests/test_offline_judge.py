"""RuleJudge and the slot table it stands on."""

from __future__ import annotations

import re

import pytest

from factledger.application.ports import RelationJudge
from factledger.domain.values import Relation
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.slots import negation_pair, slot_of


def test_implements_the_judge_port(judge):
    assert isinstance(judge, RelationJudge)
    assert re.fullmatch(r"offline-rules/[0-9a-f]{12}", judge.judge_id)
    verdict = judge.judge("用户住在杭州", "用户住在上海")
    assert verdict.judge_id == judge.judge_id
    assert verdict.prompt_id is None


# -- slots ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("用户住在杭州", ("residence", "杭州")),
        ("用户住在杭州了", ("residence", "杭州")),
        ("用户现在住在上海", ("residence", "上海")),
        ("用户的家在杭州", ("residence", "杭州")),
        ("用户在杭州工作", ("work_location", "杭州")),
        ("用户在阿里巴巴集团工作", ("employer", "阿里巴巴集团")),
        ("用户在阿里巴巴做产品经理", ("employment", "阿里巴巴/产品经理")),
        ("用户叫李雷", ("name", "李雷")),
        ("用户的名字是李雷", ("name", "李雷")),
        ("用户姓李", ("surname", "李")),
        ("用户今年30岁", ("age", "30")),
        ("用户是程序员", ("job", "程序员")),
        ("用户是男生", ("gender", "男生")),
        ("用户是杭州人", ("origin", "杭州人")),
        ("用户的老板姓张", ("relationship:老板:surname", "张")),
        ("用户的老婆叫小红", ("relationship:老婆:name", "小红")),
        ("用户有车", ("possession:车", "yes")),
        ("用户没有车", ("possession:车", "no")),
        ("用户不吃辣", ("eats:辣", "no")),
        ("The user lives in Paris", ("residence", "Paris")),
        ("The user's name is Tom", ("name", "Tom")),
        ("The user works at Google", ("employer", "Google")),
        ("The user is 30 years old", ("age", "30")),
        ("The user's wife's name is Anna", ("relationship:老婆:name", "Anna")),
        ("The user does not have a car", ("possession:car", "no")),
    ],
)
def test_slot_of(text, expected):
    assert slot_of(text) == expected


@pytest.mark.parametrize("text", ["", "今天天气不错", "偏好简短的回复风格", "用户是个好人", "hello world"])
def test_slot_of_is_none_when_no_slot_applies(text):
    assert slot_of(text) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("用户有车", "用户没有车"),
        ("用户喜欢猫", "用户不喜欢猫"),
        ("用户喜欢猫", "用户讨厌猫"),
        ("用户是程序员", "用户不是程序员"),
        ("用户去过北京", "用户没去过北京"),
        ("The user has a car", "The user does not have a car"),
        ("The user likes cats", "The user doesn't like cats"),
    ],
)
def test_negation_pairs(a, b):
    assert negation_pair(a, b) and negation_pair(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("用户有车", "用户有车"),
        ("用户没有车", "用户不吃辣"),
        ("用户住在杭州", "用户住在上海"),
        ("用户有车", "用户有房"),
    ],
)
def test_not_negation_pairs(a, b):
    assert not negation_pair(a, b)


# -- verdicts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户住在杭州", "用户住在杭州"),
        ("用户住在杭州", "用户住在杭州了"),
        ("用户住在杭州", "用户现在住在杭州。"),
        ("用户的老板姓张", "用户老板姓张"),
        ("用户住在杭州", "用户的家在杭州"),
        ("用户住在杭州", "用户住在杭州市"),
        ("The user lives in Paris", "The user lives in Paris."),
    ],
)
def test_duplicates(judge, old, new):
    assert judge.judge(old, new).relation is Relation.DUPLICATE


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ("用户住在杭州", "用户住在上海", "update: slot residence 杭州 → 上海"),
        ("用户在杭州工作", "用户在上海工作", "update: slot work_location 杭州 → 上海"),
        ("用户的老板姓张", "用户的老板姓李", "update: slot relationship:老板:surname 张 → 李"),
        ("用户今年30岁", "用户今年31岁", "update: slot age 30 → 31"),
        ("The user lives in Paris", "The user lives in London", "update: slot residence Paris → London"),
    ],
)
def test_updates(judge, old, new, reason):
    verdict = judge.judge(old, new)
    assert verdict.relation is Relation.UPDATE
    assert verdict.raw_answer == reason


@pytest.mark.parametrize(
    ("old", "new"),
    [("用户有车", "用户没有车"), ("用户喜欢猫", "用户讨厌猫"), ("The user has a car", "The user does not have a car")],
)
def test_conflicts(judge, old, new):
    verdict = judge.judge(old, new)
    assert verdict.relation is Relation.CONFLICT
    assert verdict.raw_answer.startswith("conflict")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在杭州工作", "用户住在杭州"),  # different slots sharing a city
        ("用户在杭州工作", "用户的老板姓张"),
        ("用户的同事姓张", "用户的同事姓李"),  # one can have many colleagues
        ("用户有车", "用户有房"),
        ("用户喜欢猫", "用户住在杭州"),
    ],
)
def test_different(judge, old, new):
    verdict = judge.judge(old, new)
    assert verdict.relation is Relation.DIFFERENT
    assert verdict.raw_answer.startswith("different")


def test_a_number_inside_another_is_not_the_same_value(judge):
    # "3" is a substring of "30", but a three-year-old is not thirty
    assert judge.judge("用户今年3岁", "用户今年30岁").relation is Relation.UPDATE


def test_judges_what_the_extractor_writes(judge):
    extractor = RuleExtractor()
    old = extractor.extract("我住在杭州").facts[0].text
    new = extractor.extract("我搬到上海了").facts[0].text
    assert judge.judge(old, new).relation is Relation.UPDATE
    again = extractor.extract("我现在住在上海").facts[0].text
    assert judge.judge(new, again).relation is Relation.DUPLICATE


def test_judges_english_extractor_output(judge):
    extractor = RuleExtractor()
    old = extractor.extract("I live in Paris").facts[0].text
    new = extractor.extract("I moved to London").facts[0].text
    assert judge.judge(old, new).relation is Relation.UPDATE
    has = extractor.extract("I have a car").facts[0].text
    has_not = extractor.extract("I don't have a car").facts[0].text
    assert judge.judge(has, has_not).relation is Relation.CONFLICT


def test_negated_chinese_statements_conflict(judge):
    extractor = RuleExtractor()
    assert (
        judge.judge(extractor.extract("我有车").facts[0].text, extractor.extract("我没有车").facts[0].text).relation
        is Relation.CONFLICT
    )
    assert judge.judge("用户吃辣", extractor.extract("我不吃辣").facts[0].text).relation is Relation.CONFLICT


@pytest.mark.parametrize(
    ("old", "new", "reason"),
    [
        ("偏好被称呼为小林", "偏好被称呼为林哥", "update: called 小林 → 林哥"),
        ("偏好推荐歌时推摇滚", "偏好推荐时推轻音乐", "update: recommend 轻音乐 instead of 摇滚"),
        ("The user likes techno", "The user now prefers jazz", "update: now prefers jazz instead of techno"),
        ("用户家网是移动的", "用户家网换成电信了", "update: 家网 is 电信 now"),
        ("用户对猫毛过敏", "用户其实没有过敏", "conflict: 过敏 said not so"),
        ("用户的女朋友叫小美", "用户现在单身", "update: 伴侣 vs marital single"),
    ],
)
def test_a_template_names_what_its_rule_read_of_the_known_fact(judge, old, new, reason):
    """A relation rule's ``{known.NAME}`` is what its tests read of the known fact (or of the pair)."""
    assert judge.judge(old, new).raw_answer == reason
