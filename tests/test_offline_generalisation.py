"""Kinds of phrasing the offline rules read, each checked with sentences invented for it.

Each rule is a kind of wording, not a sentence: a correction said in the old
statement's frame, a new amount in the same unit, a subject left out, a
standing request, a swap that names only the new thing, having none of a
kind, a verb that goes with what was given up. The judge and the extractor are
tested directly, then whole conversations run through an in-memory ledger.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from factledger.domain.values import Relation
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.offline import RuleExtractor, SignalDetector
from factledger.infrastructure.offline.changes import is_correction, is_retraction
from factledger.infrastructure.offline.clauses import standing_request


def texts(extractor: RuleExtractor, message: str, known: tuple[str, ...] = ()) -> list[str]:
    result = extractor.extract(message, known_facts=known)
    return [f.text for f in result.facts] + [p.text for p in result.preferences]


# -- markers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        "刚才说的不对，我在苏州",
        "上面写得不准确，应该是三楼",
        "刚才脑子抽了，是周四",
        "眼花了，是后天",
        "I should clarify: it's the blue one",
        "sorry, slip of the tongue, Tuesday",
    ],
)
def test_correction_markers(message):
    assert is_correction(message)


@pytest.mark.parametrize(
    "message",
    ["好吧我夸张了，其实就跑过一次", "刚才吹过头了", "ok that was a stretch, I can barely swim", "I exaggerated a bit"],
)
def test_retraction_markers(message):
    assert is_retraction(message)


# -- a correction in the old statement's frame --------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在成都读本科", "用户其实是在绵阳读本科"),
        ("用户穿38码的鞋", "用户其实是39码"),
        ("用户每天早上七点起床", "用户其实每天早上六点起床"),
        ("The user teaches at Oakwood Middle School", "The user actually teaches at Maple Middle School"),
    ],
)
def test_a_correction_in_the_same_frame_updates(judge, old, new):
    assert judge.judge(old, new).relation is Relation.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户会说粤语", "用户会说日语"),  # not marked as a correction: a second language
        ("用户的哥哥在成都读本科", "用户其实是在绵阳读本科"),  # a relative's, not the user's
        ("用户在成都读本科", "用户其实不在绵阳读本科"),  # a negation is not a new value
    ],
)
def test_no_frame_correction_without_its_conditions(judge, old, new):
    assert judge.judge(old, new).relation is not Relation.UPDATE


def test_a_correcting_message_restates_in_the_frame(extractor):
    result = extractor.extract("口误，我是在绵阳读的本科", known_facts=("用户在成都读本科",))
    assert any(f.conflicts_with == "用户在成都读本科" for f in result.facts), [f.text for f in result.facts]


# -- a new amount in the same unit -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户每天抽十根烟", "用户现在减到一天五根"),
        ("用户每周跑三次步", "用户现在改成每周五次"),
        ("用户的雅思是6分", "用户今年考到了7分"),
        ("用户的韩语是TOPIK3级", "用户考下了TOPIK5级"),
    ],
)
def test_a_new_amount_in_the_same_unit_updates(judge, old, new):
    assert judge.judge(old, new).relation is Relation.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户每天跑5公里", "用户现在每周游泳2公里"),  # another activity in the same unit
        ("用户每天喝两杯茶", "用户今天喝了三杯"),  # no change said
        ("用户的女儿8岁", "用户现在减到60公斤"),  # another person, another unit
    ],
)
def test_amounts_that_do_not_update(judge, old, new):
    assert judge.judge(old, new).relation is not Relation.UPDATE


def test_a_bare_new_amount_keeps_what_it_measures(extractor):
    result = extractor.extract("现在改成一天两根了", known_facts=("用户每天抽十根烟",))
    assert "用户每天抽两根烟" in [f.text for f in result.facts]


# -- a subject left out ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("老家是江西赣州的", "赣州"),
        ("体重已经降到一百零五斤了", "一百零五斤"),
        ("周末偶尔也去钓鱼", "钓鱼"),
        ("后来升了店长", "店长"),
        ("时间过得好快，转眼已经当上组长了", "组长"),
    ],
)
def test_a_statement_without_wo_is_the_speakers(extractor, message, expected):
    found = texts(extractor, message)
    assert any(expected in t and t.startswith("用户") for t in found), found


@pytest.mark.parametrize(
    "message",
    [
        "周末去看了场话剧",  # one outing, not a habit
        "老家是哪里的？",  # a question
        "后来他升了店长",  # someone else
        "明年打算搬去厦门",  # a plan
    ],
)
def test_no_subject_is_supplied_where_it_is_not_the_speakers(extractor, message):
    assert not [t for t in texts(extractor, message) if t.startswith("用户") and "他" not in t]


def test_an_english_change_without_i_is_read_only_when_it_fills_a_slot(extractor):
    assert texts(extractor, "moved to Tacoma last spring") == ["The user lives in Tacoma"]
    assert texts(extractor, "sold it and got a new one") == []


# -- standing requests ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "content"),
    [
        ("以后推荐电影多推荐点悬疑的吧", "推荐电影多推荐点悬疑的"),
        ("算了还是用拼音吧", "用拼音"),
        ("从现在起叫我阿伟就行", "叫我阿伟"),
    ],
)
def test_standing_requests(message, content):
    assert standing_request(message) == content


@pytest.mark.parametrize("message", ["以后再说吧", "我以后想去新疆", "以后会好的"])
def test_not_standing_requests(message):
    assert standing_request(message) is None
    assert not SignalDetector().detect(message)["pref_categories"] or message == "我以后想去新疆"


@pytest.mark.parametrize(
    ("old_message", "new_message"),
    [
        ("以后跟我说话用四川话吧", "算了还是用普通话吧"),
        ("给我推荐书的时候多推荐点科幻的", "以后推荐书多推荐点历史的吧"),
        ("以后叫我陈老板吧", "以后直接叫我小陈就行"),
    ],
)
def test_a_request_asked_again_replaces_the_first(extractor, judge, old_message, new_message):
    (old,) = [p.text for p in extractor.extract(old_message).preferences]
    (new,) = [p.text for p in extractor.extract(new_message).preferences]
    assert judge.judge(old, new).relation is Relation.UPDATE


def test_requests_about_different_occasions_both_stay(judge):
    old, new = "偏好以后回答时推荐电影的时候多推荐点悬疑的", "偏好以后回答时推荐歌的时候多推荐点摇滚的"
    assert judge.judge(old, new).relation is not Relation.UPDATE


def test_refusing_bullet_points_is_prose(extractor):
    assert "偏好成段落的回复格式" in texts(extractor, "别分条了")


# -- a swap that names only the new thing -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "known", "expected"),
    [
        ("上周又换了一台Pixel 9", ("用户的手机是vivo X100",), "用户的手机是Pixel 9"),
        ("后来换到了江北，房租低一点", ("用户住在渝中区",), "用户住在江北"),
    ],
)
def test_a_swap_is_said_in_the_words_of_what_it_replaces(extractor, message, known, expected):
    result = extractor.extract(message, known_facts=known)
    assert any(f.text == expected and f.conflicts_with == known[0] for f in result.facts), [
        f.text for f in result.facts
    ]


def test_someone_elses_swap_replaces_nothing(extractor):
    result = extractor.extract("我同事换了一台Pixel 9", known_facts=("用户的手机是vivo X100",))
    assert not any(f.conflicts_with for f in result.facts)


# -- none of the kind, a verb and what goes with it ----------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户有一辆捷安特自行车", "那是用户表哥的，用户自己没有自行车"),
        ("用户有一台索尼相机", "用户其实没有相机"),
        ("The user has a red kayak", "The user doesn't have a kayak"),
    ],
)
def test_having_none_of_the_kind_conflicts(judge, old, new):
    assert judge.judge(old, new).relation is Relation.CONFLICT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在学尤克里里", "用户早就不弹了"),
        ("用户每周踢两次足球", "用户好久不踢了"),
        ("用户在学民族舞", "用户不跳了"),
    ],
)
def test_giving_up_by_the_verb_that_goes_with_it(judge, old, new):
    assert judge.judge(old, new).relation is Relation.CONFLICT


def test_nothing_at_all(judge):
    assert judge.judge("用户养了一只龙猫", "用户其实对毛过敏，啥也没养").relation is Relation.CONFLICT


# -- he or she after a time word, a household's move, what is rented ------------------------------------------


def test_pronoun_after_a_time_word_is_the_known_relative(extractor):
    found = texts(extractor, "现在他已经上二年级了", ("用户的儿子上一年级",))
    assert "用户的儿子上二年级" in found, found


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("我们一家前年搬到了佛山", "用户住在佛山"),
        ("毕业后租了个开间", "用户住在开间"),
        ("and now we've bought a condo in Tampa", "The user bought a condo in Tampa"),
    ],
)
def test_where_the_user_lives(extractor, message, expected):
    assert expected in texts(extractor, message)


def test_a_reply_language_said_as_fine_from_now_on(extractor):
    assert "Prefers replies in German" in texts(extractor, "ok German is fine from now on")


# -- whole conversations ----------------------------------------------------------------------------------------

CONVERSATIONS = [
    (["我在青岛读大二", "口误，是在烟台读大二"], [["烟台"]], [["青岛"]]),
    (["我每天喝两罐可乐", "今天好热", "现在减到一天一罐了"], [["一罐"]], [["两罐"]]),
    (["我住在大学宿舍", "毕业后租了个开间", "现在搬到未婚夫家去住了"], [["未婚夫"]], [["宿舍"], ["开间"]]),
    (["以后跟我说话用四川话吧", "算了还是用普通话吧，同事要看"], [["普通话"]], [["四川话"]]),
    (["我的手机是OPPO Reno", "去年换成了华为P60", "上个月又换了一台荣耀Magic"], [["荣耀"]], [["OPPO"], ["P60"]]),
    (["我有一辆捷安特自行车", "说错了，那辆是我表哥的，我自己没有自行车"], [], [["捷安特"]]),
    (["I rent an apartment in Oakland.", "and now we've bought a house in Fremont!"], [["Fremont"]], [["Oakland"]]),
    (["我儿子刚上一年级", "今天家长会", "现在他已经上二年级了"], [["二年级"]], [["一年级"]]),
    (["我同事换了一台Pixel 9", "我用的是vivo手机"], [["vivo"]], []),
]


@pytest.mark.parametrize(("messages", "active", "stale"), CONVERSATIONS)
def test_conversations_end_with_what_is_true(tmp_path: Path, messages, active, stale):
    ledger = open_ledger(
        Settings(home=tmp_path, backend="memory", schema=f"u{uuid.uuid4().hex[:10]}"), warn_if_offline=False
    )
    try:
        for n, message in enumerate(messages):
            ledger.ingest("u1", message, session_id="s", message_id=f"m{n}")
        memory = ledger.ledger.find_memory("u1")
        items = [f.text for f in memory.active_facts()] + [p.text for p in memory.all_preferences()]
    finally:
        ledger.close()
    for keys in active:
        assert any(all(k in item for k in keys) for item in items), (keys, items)
    for keys in stale:
        assert not any(all(k in item for k in keys) for item in items), (keys, items)


# -- English: a change without "I" inside a message, a school year at a named school ----------------------------


def test_an_english_clause_without_i_is_read_when_it_fills_a_slot(extractor):
    known = ("The user is a senior at Rutgers",)
    result = extractor.extract("graduated last month!! I teach at Lincoln High now", known_facts=known)
    assert any(f.conflicts_with == known[0] for f in result.facts), [f.text for f in result.facts]


def test_a_school_year_at_a_named_school_is_not_a_job(judge):
    assert judge.judge("The user is a senior at Rutgers", "The user graduated last spring").relation is Relation.UPDATE
    assert judge.judge("The user is a senior developer", "The user graduated last spring").relation is not (
        Relation.UPDATE
    )
