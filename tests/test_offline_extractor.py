"""RuleExtractor: the spec's worked example, each category, negation, subject carry-over, English."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.ports import Extractor
from factledger.domain.values import Extraction, Turn
from factledger.infrastructure.offline import RuleExtractor


def facts(extraction: Extraction) -> list[tuple[str, str]]:
    return [(f.text, f.category) for f in extraction.facts]


def prefs(extraction: Extraction) -> list[tuple[str, str]]:
    return [(p.text, p.category) for p in extraction.preferences]


def test_implements_the_extractor_port(extractor):
    assert isinstance(extractor, Extractor)
    assert re.fullmatch(r"offline-rules/[0-9a-f]{12}", extractor.extractor_id)


# -- the spec's worked example ---------------------------------------------


def test_spec_worked_example_exactly(extractor):
    result = extractor.extract(
        "我在杭州工作，老板姓张，平时喜欢简短的回复",
        context=[Turn(role="assistant", content="你好，有什么可以帮你的？")],
    )
    assert [(f.text, f.category, f.confidence) for f in result.facts] == [
        ("用户在杭州工作", "location", 0.9),
        ("用户的老板姓张", "relationship", 0.9),
    ]
    assert [(p.text, p.category, p.strength, p.evidence) for p in result.preferences] == [
        ("偏好简短的回复风格", "communication_style", 0.8, "用户说'平时喜欢简短的回复'"),
    ]


def test_extraction_records_provenance(extractor):
    result = extractor.extract("我在杭州工作，老板姓张，平时喜欢简短的回复")
    assert result.extractor_id == extractor.extractor_id
    assert result.prompt_id is None
    assert set(result.signals) == {"has_fact_signal", "has_pref_signal", "fact_categories", "pref_categories"}
    assert result.signals["has_fact_signal"] is True
    raw = json.loads(result.raw_output)
    assert [text for text, _ in raw["facts"]] == ["用户在杭州工作", "用户的老板姓张"]
    assert [text for text, _ in raw["preferences"]] == ["偏好简短的回复风格"]


# -- required single statements ---------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我住在杭州", ("用户住在杭州", "location")),
        ("我搬到上海了", ("用户住在上海", "location")),
        ("我现在住在上海", ("用户住在上海", "location")),
        ("我有车", ("用户有车", "other")),
        ("我没有车", ("用户没有车", "other")),
        ("我叫李雷", ("用户叫李雷", "personal_info")),
        ("我老婆姓王", ("用户的老婆姓王", "relationship")),
    ],
)
def test_required_single_facts(extractor, message, expected):
    result = extractor.extract(message)
    assert facts(result) == [expected]
    assert result.preferences == ()
    assert result.facts[0].confidence == 0.9


@pytest.mark.parametrize("message", ["谢谢", "好的", "哈哈", "你好", "你能帮我写个函数吗？", "", "   ", "？"])
def test_small_talk_and_questions_give_nothing(extractor, message):
    result = extractor.extract(message)
    assert result.facts == () and result.preferences == ()
    assert json.loads(result.raw_output) == {"facts": [], "preferences": []}


@settings(max_examples=examples(150), deadline=None)
@given(
    message=st.text(alphabet=st.sampled_from(list("我你他的是在住有没不喜欢老板姓张杭州了，。？! aI'm")), max_size=40)
)
def test_any_message_gives_a_well_formed_extraction(message):
    result = RuleExtractor().extract(message)
    assert isinstance(result, Extraction)
    assert set(result.signals) == {"has_fact_signal", "has_pref_signal", "fact_categories", "pref_categories"}
    assert json.loads(result.raw_output)["facts"] == [[f.text, f.category] for f in result.facts]
    for fact in result.facts:
        assert "我" not in fact.text  # always third person


def test_odd_input_never_raises(extractor):
    assert extractor.extract(None).facts == ()  # type: ignore[arg-type]
    assert extractor.extract("我" * 2000).facts == ()


# -- fact categories -----------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我姓李", ("用户姓李", "personal_info")),
        ("我今年30岁", ("用户今年30岁", "personal_info")),
        ("我是男生", ("用户是男生", "personal_info")),
        ("我是杭州人", ("用户是杭州人", "personal_info")),
        ("我的名字是韩梅梅", ("用户的名字是韩梅梅", "personal_info")),
        ("我家在杭州", ("用户住在杭州", "location")),
        ("我住杭州", ("用户住在杭州", "location")),
        ("我最近搬去深圳了", ("用户住在深圳", "location")),
        ("我住在杭州三年了", ("用户住在杭州", "location")),
        ("我们公司在杭州", ("用户的公司在杭州", "location")),
        ("坐标北京", ("用户在北京", "location")),
        ("我是程序员", ("用户是程序员", "work")),
        ("我在阿里巴巴做产品经理", ("用户在阿里巴巴做产品经理", "work")),
        ("我在一家科技公司上班", ("用户在一家科技公司上班", "work")),
        ("我负责后端开发", ("用户负责后端开发", "work")),
        ("我们公司是做电商的", ("用户的公司是做电商的", "work")),
        ("我每天早上六点起床", ("用户每天早上六点起床", "habit")),
        ("我经常加班", ("用户经常加班", "habit")),
        ("我老公是医生", ("用户的老公是医生", "relationship")),
        ("我女儿叫小美", ("用户的女儿叫小美", "relationship")),
        ("我有两个孩子", ("用户有两个孩子", "relationship")),
        ("我喜欢猫", ("用户喜欢猫", "preference")),
        ("我会说英语", ("用户会说英语", "other")),
    ],
)
def test_fact_categories(extractor, message, expected):
    assert facts(extractor.extract(message)) == [expected]


# -- negation ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我不吃辣", ("用户不吃辣", "habit")),
        ("我没有车", ("用户没有车", "other")),
        ("我不是程序员", ("用户不是程序员", "work")),
        ("我不喜欢吃香菜", ("用户不喜欢吃香菜", "preference")),
        ("我不会开车", ("用户不会开车", "other")),
    ],
)
def test_negation_is_kept(extractor, message, expected):
    assert facts(extractor.extract(message)) == [expected]


# -- subject carry-over ------------------------------------------------------------


def test_relationship_noun_without_possessor_is_the_users(extractor):
    assert facts(extractor.extract("我在杭州工作，老板姓张")) == [
        ("用户在杭州工作", "location"),
        ("用户的老板姓张", "relationship"),
    ]


def test_relative_carries_to_the_next_clause(extractor):
    assert facts(extractor.extract("我老婆姓王，在银行工作")) == [
        ("用户的老婆姓王", "relationship"),
        ("用户的老婆在银行工作", "relationship"),
    ]
    assert facts(extractor.extract("我老婆姓王，她是老师")) == [
        ("用户的老婆姓王", "relationship"),
        ("用户的老婆是老师", "relationship"),
    ]


def test_user_subject_carries_across_clauses(extractor):
    assert facts(extractor.extract("我叫李雷，今年30岁，住在杭州")) == [
        ("用户叫李雷", "personal_info"),
        ("用户今年30岁", "personal_info"),
        ("用户住在杭州", "location"),
    ]
    assert facts(extractor.extract("我住在杭州，但是在上海工作")) == [
        ("用户住在杭州", "location"),
        ("用户在上海工作", "location"),
    ]


def test_user_and_relative_in_one_message(extractor):
    assert facts(extractor.extract("我喜欢吃辣，但是我老婆不吃辣")) == [
        ("用户喜欢吃辣", "preference"),
        ("用户的老婆不吃辣", "relationship"),
    ]


def test_reply_preferences_stay_the_users_after_a_relative(extractor):
    result = extractor.extract("老板姓张，说重点")
    assert facts(result) == [("用户的老板姓张", "relationship")]
    assert prefs(result) == [("偏好简洁直接的回复风格", "communication_style")]


# -- preferences ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我喜欢简短的回复", ("偏好简短的回复风格", "communication_style")),
        ("说重点", ("偏好简洁直接的回复风格", "communication_style")),
        ("直接说重点", ("偏好简洁直接的回复风格", "communication_style")),
        ("简短点", ("偏好简短的回复风格", "communication_style")),
        ("回答详细一点", ("偏好详细的回复风格", "communication_style")),
        ("不用解释", ("偏好不加解释的回复风格", "communication_style")),
        ("请用表格", ("偏好用表格的形式回复", "format")),
        ("我喜欢用列表", ("偏好用列表的形式回复", "format")),
        ("以后用中文回复我", ("偏好用中文回复", "language")),
        ("晚上别打扰我", ("晚上不希望被打扰", "time")),
        ("早上联系我", ("偏好在早上被联系", "time")),
        ("我平时用VSCode写代码", ("偏好使用VSCode", "tool")),
        ("我一般用微信", ("偏好使用微信", "tool")),
        ("我喜欢看科幻电影", ("喜欢看科幻电影", "content")),
        ("我对人工智能很感兴趣", ("对人工智能感兴趣", "content")),
    ],
)
def test_preference_categories(extractor, message, expected):
    result = extractor.extract(message)
    assert prefs(result) == [expected]
    assert result.facts == ()
    assert result.preferences[0].evidence == f"用户说'{message}'"


def test_preference_strength_explicit_and_strong(extractor):
    assert extractor.extract("我喜欢简短的回复").preferences[0].strength == 0.8
    assert extractor.extract("我非常喜欢简短的回复").preferences[0].strength == 0.95
    assert extractor.extract("一定要说重点").preferences[0].strength == 0.95


def test_a_style_request_inside_a_question_counts(extractor):
    assert prefs(extractor.extract("你能不能简短点？")) == [("偏好简短的回复风格", "communication_style")]


def test_things_not_stated_as_facts_give_nothing(extractor):
    for message in (
        "我有点累",
        "我有个问题想问",
        "我是不是该换工作？",
        "我在开会",
        "我们周末去爬山",
        "用Python写个脚本",
        "我明白你的意思",
        "I'm sure you'll love it",
        "你喜欢狗吗？",
    ):
        result = extractor.extract(message)
        assert result.facts == () and result.preferences == (), message


def test_tool_use_told_as_a_statement_is_a_fact_not_a_reply_preference(extractor):
    # "我用表格记账" says how the user keeps accounts, not how replies should look
    result = extractor.extract("我用表格记账")
    assert facts(result) == [("用户用表格记账", "other")]
    assert result.preferences == ()


# -- English ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I live in Paris", ("The user lives in Paris", "location")),
        ("I moved to Berlin last year", ("The user lives in Berlin", "location")),
        ("My name is Tom", ("The user's name is Tom", "personal_info")),
        ("I'm 30 years old", ("The user is 30 years old", "personal_info")),
        ("I work at Google", ("The user works at Google", "work")),
        ("I'm a software engineer", ("The user is a software engineer", "work")),
        ("My wife's name is Anna", ("The user's wife's name is Anna", "relationship")),
        ("I have a car", ("The user has a car", "other")),
        ("I don't have a car", ("The user does not have a car", "other")),
        ("I don't eat meat", ("The user does not eat meat", "habit")),
        ("I usually wake up at 7", ("The user usually wakes up at 7", "habit")),
    ],
)
def test_english_facts(extractor, message, expected):
    assert facts(extractor.extract(message)) == [expected]


def test_english_preferences(extractor):
    result = extractor.extract("I prefer short answers")
    assert [(p.text, p.category, p.strength) for p in result.preferences] == [
        ("Prefers short answers", "communication_style", 0.8)
    ]
    assert result.preferences[0].evidence == "The user said 'I prefer short answers'"
    assert prefs(extractor.extract("Please reply in English")) == [("Prefers replies in English", "language")]


def test_english_two_clauses(extractor):
    assert facts(extractor.extract("I live in Paris and I work at Google.")) == [
        ("The user lives in Paris", "location"),
        ("The user works at Google", "work"),
    ]


# -- known facts -------------------------------------------------------------------------


def test_known_fact_with_another_value_is_marked_as_conflicting(extractor):
    result = extractor.extract("我搬到上海了", known_facts=["用户住在杭州", "用户的老板姓张"])
    assert result.facts[0].text == "用户住在上海"
    assert result.facts[0].conflicts_with == "用户住在杭州"
    assert extractor.extract("我搬到上海了").facts[0].conflicts_with is None


@pytest.mark.parametrize(
    ("message", "known", "expected"),
    [
        ("我不在幼儿园了，去了一家培训机构当老师", "用户在幼儿园当老师", "用户在一家培训机构当老师"),
        ("我已经不在星巴克上班了，现在在瑞幸上班", "用户在星巴克上班", "用户在瑞幸上班"),
        ("我不住北京了，搬到上海了", "用户住在北京", "用户住在上海"),
    ],
)
def test_the_clause_that_only_ends_a_replaced_fact_goes_with_it(extractor, message, known, expected):
    # "我不在幼儿园了" only repeats the value the new fact replaces: it is no fact of its own
    result = extractor.extract(message, known_facts=[known])
    assert [(f.text, f.conflicts_with) for f in result.facts] == [(expected, known)]


@pytest.mark.parametrize(
    ("message", "known", "expected"),
    [
        ("小黑去年走丢了", "用户的猫叫小黑", "用户不再养猫了"),
        ("小黑走丢了", "用户的猫叫小黑", "用户不再养猫了"),
        ("旺财上个月病死了", "用户的狗叫旺财", "用户不再养狗了"),
    ],
)
def test_a_named_pet_gone_is_the_pet_no_longer_kept(extractor, message, known, expected):
    # the name says which pet: the fact is that one no longer kept, replacing what named it
    result = extractor.extract(message, known_facts=[known])
    assert [(f.text, f.conflicts_with) for f in result.facts] == [(expected, known)]


def test_same_message_twice_gives_the_same_extraction(extractor):
    message = "我在杭州工作，老板姓张，平时喜欢简短的回复"
    assert extractor.extract(message) == extractor.extract(message)


# -- statements no slot rule knows: restated as said, whole ---------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我在花园里种玫瑰。", ("用户在花园里种玫瑰", "other")),
        ("我父亲业余吹萨克斯。", ("用户的父亲业余吹萨克斯", "relationship")),
        ("我害怕蝎子", ("用户害怕蝎子", "preference")),
        ("我在外婆家长大。", ("用户在外婆家长大", "relationship")),
        ("科幻小说是我的最爱。", ("科幻小说是用户的最爱", "preference")),
        ("我是一名牙科医生，开了自己的诊所。", ("用户是一名牙科医生，开了自己的诊所", "work")),
        ("每到周末，我去养老院做义工。", ("每到周末，用户去养老院做义工", "other")),
        ("我可能有点近视", ("用户可能有点近视", "personal_info")),
    ],
)
def test_other_first_person_statements_are_restated_whole(extractor, message, expected):
    result = extractor.extract(message)
    assert facts(result) == [expected]
    assert "我" not in result.facts[0].text


def test_confidence_bands(extractor):
    assert extractor.extract("我住在杭州").facts[0].confidence == 0.9  # explicit, a known slot
    assert extractor.extract("我在花园里种玫瑰").facts[0].confidence == 0.8  # explicit, restated as said
    assert extractor.extract("我可能有点近视").facts[0].confidence == 0.6  # hedged
    assert extractor.extract("我特别喜欢简短的回复").preferences[0].strength == 0.95  # strongly worded


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("i repair pianos for a living.", ("The user repairs pianos for a living", "work")),
        ("my favorite tea is oolong.", ("The user's favorite tea is oolong", "preference")),
        ("i'm quite tall.", ("The user is quite tall", "personal_info")),
        (
            "i currently am engaged to my college girlfriend.",
            ("The user currently is engaged to the user's college girlfriend", "relationship"),
        ),
        ("i've two cats , one tabby and old persian.", ("The user has two cats, one tabby and old persian", "other")),
        ("i didn t pass the audition", ("The user did not pass the audition", "other")),
        ("i hate olives.", ("The user hates olives", "preference")),
        ("I have my own salon", ("The user has the user's own salon", "other")),
    ],
)
def test_english_statements_are_restated_about_the_user(extractor, message, expected):
    assert facts(extractor.extract(message)) == [expected]


def test_dialogue_exchange_is_not_a_fact(extractor):
    # first person that only frames the exchange with the listener
    for message in (
        "我明白你的意思",
        "你说得对，我都听你的",
        "I'm sure you'll pick the right one, Maria.",
        "Thanks, I appreciate it!",
        "小度，我们聊会天吧",
    ):
        assert extractor.extract(message).facts == (), message


@pytest.mark.parametrize(
    ("message", "strength"),
    [
        ("简短点", 0.6),  # a request: a preference read from behaviour
        ("用表格列出来", 0.6),
        ("我平时用VSCode写代码", 0.6),  # a habit
        ("我喜欢简短的回复", 0.8),  # stated as a liking
        ("我希望你回答简短点", 0.8),  # a request that states the wish
        ("请一定简短点", 0.95),  # strongly worded
    ],
)
def test_preference_strength_follows_the_spec_bands(extractor, message, strength):
    [pref] = extractor.extract(message).preferences
    assert pref.strength == strength
