"""SignalDetector: the spec's keys and lists, plus the added patterns and exclusions."""

from __future__ import annotations

import pytest

from factledger.infrastructure.offline import SignalDetector
from factledger.infrastructure.offline.signals import (
    Clause,
    is_question_to_assistant,
    is_small_talk,
    split_clauses,
)

KEYS = {"has_fact_signal", "has_pref_signal", "fact_categories", "pref_categories"}


@pytest.fixture(scope="module")
def detector() -> SignalDetector:
    return SignalDetector()


def test_returns_exactly_the_spec_keys(detector):
    result = detector.detect("我在杭州工作")
    assert set(result) == KEYS
    assert isinstance(result["fact_categories"], list)
    assert isinstance(result["pref_categories"], list)


def test_keeps_the_spec_signal_lists_verbatim():
    assert SignalDetector.FACT_SIGNALS["identity"] == ["我是", "我叫", "我姓", "我的名字"]
    assert SignalDetector.FACT_SIGNALS["state"] == ["我有", "我没有", "我会", "我不会"]
    assert SignalDetector.PREF_SIGNALS["style_request"] == [
        "简短点",
        "详细点",
        "直接说",
        "说重点",
        "不用解释",
        "解释一下",
    ]
    assert list(SignalDetector.FACT_SIGNALS) == ["identity", "location", "relationship", "work", "possession", "state"]
    assert list(SignalDetector.PREF_SIGNALS) == ["explicit", "dislike", "style_request", "time", "frequency"]


def test_spec_worked_example_has_both_signals(detector):
    result = detector.detect("我在杭州工作，老板姓张，平时喜欢简短的回复")
    assert result["has_fact_signal"] and result["has_pref_signal"]
    assert "location" in result["fact_categories"]
    assert "relationship" in result["fact_categories"]  # 老板 without 我
    assert "explicit" in result["pref_categories"]  # 喜欢 without 我


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("我叫李雷", "identity"),
        ("我不是程序员", "identity"),
        ("我住在杭州", "location"),
        ("我最近搬去深圳了", "location"),
        ("我老婆姓王", "relationship"),
        ("老板姓张", "relationship"),
        ("我负责后端开发", "work"),
        ("我的车是白色的", "possession"),
        ("我有车", "state"),
        ("我没有车", "state"),
        ("我每天跑步", "habit"),
        ("我不吃辣", "habit"),
        ("I live in Paris", "location"),
        ("My name is Tom", "identity"),
        ("I work at Google", "work"),
        ("my wife is a teacher", "relationship"),
    ],
)
def test_fact_signal_categories(detector, text, category):
    result = detector.detect(text)
    assert result["has_fact_signal"] is True
    assert category in result["fact_categories"]


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("我喜欢简短的回复", "explicit"),
        ("我讨厌啰嗦", "dislike"),
        ("说重点", "style_request"),
        ("晚上别打扰我", "time"),
        ("请用表格", "format"),
        ("以后用中文回复", "language"),
        ("我习惯用VSCode", "tool"),
        ("I prefer short answers", "explicit"),
        ("I don't like long answers", "dislike"),
    ],
)
def test_pref_signal_categories(detector, text, category):
    result = detector.detect(text)
    assert result["has_pref_signal"] is True
    assert category in result["pref_categories"]


@pytest.mark.parametrize(
    "text", ["谢谢", "好的", "哈哈", "你好", "ok", "OK!", "thanks", "Thank you!", "嗯嗯", "好的，谢谢！", "", "？？"]
)
def test_small_talk_raises_no_signal(detector, text):
    result = detector.detect(text)
    assert result == {"has_fact_signal": False, "has_pref_signal": False, "fact_categories": [], "pref_categories": []}


@pytest.mark.parametrize("text", ["你能帮我写个函数吗？", "你是谁？", "你会说中文吗", "Can you help me with this?"])
def test_questions_to_the_assistant_raise_no_fact_signal(detector, text):
    result = detector.detect(text)
    assert result["has_fact_signal"] is False
    assert result["fact_categories"] == []


def test_a_question_to_the_assistant_may_still_ask_for_a_reply_style(detector):
    result = detector.detect("你能不能回答简短点？")
    assert result["has_fact_signal"] is False
    assert result["pref_categories"] == ["style_request"]


def test_statement_next_to_a_question_keeps_its_signal(detector):
    result = detector.detect("我住在杭州，你知道那边天气怎么样吗？")
    assert result["fact_categories"] == ["location"]


def test_non_string_input_gives_empty_result(detector):
    assert detector.detect(None)["has_fact_signal"] is False  # type: ignore[arg-type]


def test_split_clauses_on_punctuation_and_conjunctions():
    assert [c.text for c in split_clauses("我在杭州工作，老板姓张，平时喜欢简短的回复")] == [
        "我在杭州工作",
        "老板姓张",
        "平时喜欢简短的回复",
    ]
    assert [c.text for c in split_clauses("我住在杭州但是在上海工作")] == ["我住在杭州", "在上海工作"]
    assert [c.text for c in split_clauses("I live in Paris and I work at Google. Version 3.5 is fine")] == [
        "I live in Paris",
        "I work at Google",
        "Version 3.5 is fine",
    ]
    assert split_clauses("你好吗？")[0].terminator == "?"  # NFKC folds the full-width mark


def test_small_talk_and_question_helpers():
    assert is_small_talk("谢谢！") and is_small_talk("ok") and is_small_talk("")
    assert not is_small_talk("谢谢，我住在杭州")
    assert is_question_to_assistant(Clause("你能帮我写个函数吗", "？"))
    assert not is_question_to_assistant(Clause("我住在杭州", "。"))


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("我对蝎子感到恐惧", "activity"),  # any first-person statement, not only the fixed phrases
        ("我20多岁了", "identity"),
        ("晚上还要接孩子放学", "relationship"),  # a family word without 我
        ("在物流公司上班太辛苦了", "work"),  # a work word without 我
        ("我现在天天吃冰淇淋", "habit"),
        ("i repair pianos for a living.", "activity"),
        ("I'm married with 2 children", "relationship"),
        ("Still fixing up my garage.", "activity"),
    ],
)
def test_first_person_and_topic_patterns(detector, text, category):
    assert category in detector.detect(text)["fact_categories"]


@pytest.mark.parametrize(
    "text",
    [
        "我明白你的意思",  # 我 only frames the exchange
        "你真贴心，我请你喝茶",
        "小度，我现在有点困",  # the moment, not the person
        "以后再说吧",  # the spec's time words alone are chat
        "I'm sure you'll enjoy this album!",
        "Thanks, your advice helps a lot.",
        "你喜欢运动吗？",
    ],
)
def test_exchange_and_chat_raise_no_signal(detector, text):
    result = detector.detect(text)
    assert not result["has_fact_signal"] and not result["has_pref_signal"], result


def test_time_words_qualify_a_statement(detector):
    assert "time" in detector.detect("我晚上喜欢喝一杯")["pref_categories"]


def test_clauses_keep_joiner_and_sentence():
    clauses = split_clauses("我喜欢烹饪，但是我也喜欢钓鱼。我住在杭州")
    assert [(c.text, c.joiner, c.sentence) for c in clauses] == [
        ("我喜欢烹饪", "", 0),
        ("我也喜欢钓鱼", "但是", 0),
        ("我住在杭州", "", 1),
    ]
    assert [c.text for c in split_clauses("我可是个懒汉")] == ["我可是个懒汉"]  # 可是 after 我 joins nothing


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("周末经常去爬山", "habit"),  # subject-less habit: the dropped subject is the speaker
        ("平时没事就去钓鱼", "habit"),
        ("我妹妹常陪我一起打羽毛球", "habit"),  # a pastime shared with the speaker
        ("明天一起去游泳吗", "habit"),  # proposing a pastime tells what the speaker does
        ("Took the kids to the aquarium on Sunday.", "activity"),  # subject-less past narration
        ("Finally bought a new camera last week.", "activity"),
    ],
)
def test_pastimes_and_subjectless_narration(detector, text, category):
    assert category in detector.detect(text)["fact_categories"]


@pytest.mark.parametrize(
    "text",
    [
        "Patience can really make a big difference.",  # a value the speaker holds
        "It's so important to stay close to your family.",
        "It's a wonderful fantasy series with great characters.",  # an opinion of a work
        "This is a relaxing puzzle game.",
    ],
)
def test_values_and_opinions_of_works_are_preferences(detector, text):
    assert "explicit" in detector.detect(text)["pref_categories"]


@pytest.mark.parametrize(
    "text",
    [
        "你周末要不要一起去爬山？",  # an invitation put to the assistant asks, it does not state
        "你喜欢打篮球吗",
        "他们经常一起去钓鱼",  # someone else's pastime
        "我们聊点别的吧",  # 我们 as speaker and listener talking about the chat
        "我们再聊五分钟吧",
        "It's important that you get some rest.",  # advice to the listener
        "Got it, thanks!",
        "Can you recommend a good book?",
        "That's a great idea!",
    ],
)
def test_new_patterns_leave_chat_and_questions_alone(detector, text):
    result = detector.detect(text)
    assert not result["has_fact_signal"] and not result["has_pref_signal"], result


#: the speaker's moment, and the speaker acting on the listener: chat, not traits
MOMENTS = [
    # a reaction or a thought of the moment
    "我差点把水喷出来",
    "我还以为你下线了",
    "我忽然想起来还没交作业",  # 想起来: a thought, not a trait
    "我都快困死了",
    # the day's errands and events
    "我先去取个外卖",
    "我昨晚梦见自己在考试",
    "我今早出门忘带钥匙了",
    "我终于把那本书看完了",
    # deliberating, leaving, bantering
    "我再考虑一下",
    "我先撤了，明天聊",
    "我才不上当呢",
    # the speaker acting on the listener
    "我给你发个红包",
    "我回头再跟你细说",
    "我等你消息",
]
#: traits and changes told beside a moment or the listener: they still signal
TRAITS = [
    "我昨天搬到成都了",  # a change told with a day word stays a change
    "我今天开始戒烟了",
    "我跟你一样是老师",  # the listener named, and a trait all the same
    "我比你小两岁，今年28岁",
    "我刚养了一只柯基",
    "我差点忘了说，我女儿下个月结婚",
    "我终于考上研究生了",
    "我最近在学吉他",
    "我平时不吃早饭",
    "我下午也会喝杯茶",  # a time of day is a habit's, not the moment's
]


@pytest.mark.parametrize(("text", "signals"), [(t, False) for t in MOMENTS] + [(t, True) for t in TRAITS])
def test_the_speakers_moment_raises_no_signal_and_a_trait_beside_one_does(detector, text, signals):
    result = detector.detect(text)
    assert (result["has_fact_signal"] or result["has_pref_signal"]) is signals, result
