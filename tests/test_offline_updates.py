"""Keeping a ledger true offline: updates, corrections, retractions, plans, preference changes.

Every sentence here is invented for the test; each rule is checked with
several wordings. The extractor and the judge are tested directly (the pairs
the decider will judge), then whole conversations run through an in-memory
ledger and the final active facts and preferences are checked.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from factledger.domain.values import Relation
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.content_ids import behaviour_id
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.rules_en import en_third_person
from factledger.infrastructure.offline.slots import slot_of


def texts(extractor: RuleExtractor, message: str, known: tuple[str, ...] = ()) -> list[str]:
    result = extractor.extract(message, known_facts=known)
    return [f.text for f in result.facts] + [p.text for p in result.preferences]


def test_ids_name_the_rules_by_their_content(extractor, judge):
    # never bumped by hand (ADR 0031): tests/test_content_ids.py shows a changed rule is a new id
    assert extractor.extractor_id == behaviour_id("offline-rules", "extractor")
    assert judge.judge_id == behaviour_id("offline-rules", "judge")


# -- changes told as events: the extractor restates them in the slot's canonical form ------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        # moves, with the time said first and no 我
        ("上周刚搬到漳州古城附近", "用户住在漳州古城附近"),
        ("去年搬去了洛阳", "用户住在洛阳"),
        ("我们家前阵子搬到常德了", "用户住在常德"),
        ("最后还是在嘉兴买了房", "用户住在嘉兴"),
        ("搬家了！新家在株洲", "用户住在株洲"),
        # job moves: a city is where the user works, a company whom for
        ("后来跳槽到了惠州", "用户在惠州工作"),
        ("今年又调到绵阳分公司了", "用户在绵阳工作"),
        ("上个月入职了顺丰", "用户在顺丰工作"),
        ("毕业后去了宜昌工作", "用户在宜昌工作"),
        # promotions, new jobs, quitting
        ("去年升了店长", "用户是店长"),
        ("我现在转行做摄影师了", "用户转行做摄影师"),
        ("当上了项目经理", "用户是项目经理"),
        ("辞职了", "用户辞职了"),
        ("我已经退休了", "用户退休了"),
        # ages that grow, the user's and a child's
        ("我今年四十二了", "用户今年四十二岁"),
        ("正式步入35岁", "用户35岁"),
        ("一眨眼儿子都五岁了", "用户的儿子五岁"),
        ("今天闺女七岁生日", "用户的闺女七岁"),
        # a new car or phone
        ("把旧车卖了，提了台理想L7", "用户开的是理想L7"),
        ("换了个荣耀手机", "用户的手机是荣耀"),
        # school years, weight, pay
        ("开学了，闺女升五年级了", "用户的闺女上五年级"),
        ("我体重120斤", "用户体重120斤"),
        ("减到110斤了", "用户体重110斤"),
        ("我月薪一万五", "用户月薪一万五"),
        # status
        ("我现在单身", "用户单身"),
        ("我结婚了！", "用户结婚了"),
        ("我是新手", "用户是新手"),
        ("练了半年，算入门了", "用户入门了"),
    ],
)
def test_changes_said_as_events(extractor, message, expected):
    assert expected in texts(extractor, message)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I just moved to Halifax", "The user lives in Halifax"),
        ("we finally moved into a flat in Glasgow last week", "The user lives in Glasgow"),
        ("got promoted to team lead!", "The user is a team lead"),
        ("I'm now the head of sales at a design studio", "The user is the head of sales at a design studio"),
        ("just started a new job at Acme", "The user works at Acme"),
        ("I turned 44 yesterday", "The user turned 44"),
        ("I quit my job", "The user quit the user's job"),
        ("now driving a Volvo XC40", "The user drives a Volvo XC40"),
        ("we adopted a puppy", "The user has a puppy"),
        ("gave up on the piano lessons", "The user gave up on the piano lessons"),
    ],
)
def test_english_changes_said_as_events(extractor, message, expected):
    assert expected in texts(extractor, message)


@pytest.mark.parametrize(
    "message",
    [
        "我可能下个月搬去珠海",
        "要是能去丽江定居就好了",
        "公司说明年可能把我调去徐州",
        "等攒够钱就换辆新车",
        "万一考上公务员，就不干销售了",
        "I might move to Perth next year",
        "if the offer is good I'll take a job in Calgary",
        "thinking about becoming a pilot",
    ],
)
def test_plans_wishes_and_hypotheticals_fill_no_slot(extractor, message):
    for text in texts(extractor, message):
        assert slot_of(text) is None, text


@pytest.mark.parametrize(
    ("message", "forbidden"),
    [
        ("我同事前阵子搬到佛山了", "用户住在佛山"),
        ("我表哥在扬州上班", "用户在扬州工作"),
        ("我姐下周就满四十了", "用户四十岁"),
        ("my brother just moved to Leeds", "The user lives in Leeds"),
        ("my wife turned 40 last week", "The user turned 40"),
    ],
)
def test_other_peoples_changes_are_not_the_users(extractor, message, forbidden):
    assert forbidden not in texts(extractor, message)


def test_a_pronoun_is_the_one_known_relative_it_can_be(extractor):
    assert "用户的女儿上六年级" in texts(extractor, "她上六年级了", ("用户的女儿上五年级",))
    assert "The user's son turned 9" in texts(extractor, "he turned 9 last week", ("The user's son is 8",))
    # two relatives it could be: nobody is guessed
    assert not any(
        t.startswith("用户的") for t in texts(extractor, "她上六年级了", ("用户的女儿上五年级", "用户的妹妹上初二"))
    )


def test_a_subject_less_school_year_is_the_childs_when_only_the_child_has_one(extractor):
    assert "用户的儿子上初一" in texts(extractor, "现在都上初一了", ("用户的儿子上小学",))
    assert "用户上初一" in texts(extractor, "现在都上初一了", ())


# -- corrections: the marker goes, the corrected fact names the one it corrects -------------------


def test_a_correction_followed_by_the_whole_statement_is_one_fact() -> None:
    # "其实是南京" is the correction's value, said again in full after it: no fact of its own
    result = RuleExtractor().extract("口误，其实是南京，我住在南京", known_facts=("用户住在杭州",))
    assert [(f.text, f.conflicts_with) for f in result.facts] == [("用户住在南京", "用户住在杭州")]


@pytest.mark.parametrize(
    ("message", "known", "expected"),
    [
        # a value alone, with no known fact it could go in: which fact it corrects is not said
        ("口误，其实是南京，我住在南京", (), ["用户住在南京"]),
        ("口误，是南京", (), []),
        ("打错了，是李然", ("用户喜欢猫",), []),
        ("typo, I meant Lyon", (), []),
        # near misses: a whole statement, or a value the judge reads against a known fact
        ("说错了，我是老师", (), ["用户是老师"]),
        ("口误，是在烟台读大二", ("用户在青岛读大二",), ["用户其实是在烟台读大二"]),
    ],
)
def test_a_corrections_lone_value_is_no_fact_of_its_own(message: str, known: tuple[str, ...], expected: list[str]):
    assert [f.text for f in RuleExtractor().extract(message, known_facts=known).facts] == expected


@pytest.mark.parametrize(
    ("message", "known", "expected"),
    [
        ("说错了，我住在江宁区", ("用户住在浦口区",), "用户住在江宁区"),
        ("刚才打错了，我叫周宁", ("用户叫周柠",), "用户叫周宁"),
        ("哎呀名字写错了，是木子李的李，李然", ("用户叫吕然",), "用户叫李然"),
        ("纠正一下，老家是山西大同的", ("用户老家是山西太原",), "用户老家是山西大同的"),
        ("口误，是在百度做测试", ("用户在网易做测试",), "用户在百度做测试"),
        ("纠正下，奶茶其实是只布偶", ("用户养了只英短叫奶茶",), "用户养了只布偶叫奶茶"),
        ("不好意思说错了，是农行", ("用户在中行上班",), "用户在农行上班"),
        ("记错了，是四个孩子", ("用户有三个孩子",), "用户有四个孩子"),
        ("oops, I meant Bristol", ("The user lives in Bath",), "The user lives in Bristol"),
        ("sorry, misspelled it, it's Rhys (R-H-Y-S)", ("The user's name is Reece",), "The user's name is Rhys"),
        (
            "sorry, I meant Portland, Maine",
            ("The user works in Portland, Oregon",),
            "The user works in Portland, Maine",
        ),
        ("correction: 1987, not 1978", ("The user was born in 1978",), "The user was born in 1987"),
    ],
)
def test_corrections(extractor, judge, message, known, expected):
    result = extractor.extract(message, known_facts=known)
    found = {f.text: f for f in result.facts}
    assert expected in found, [f.text for f in result.facts]
    assert found[expected].conflicts_with == known[0]
    assert judge.judge(known[0], expected).relation in (Relation.UPDATE, Relation.CONFLICT)
    for text in found:
        assert not any(word in text for word in ("说错", "打错", "写错", "纠正", "口误", "oops", "typo", "meant"))


@pytest.mark.parametrize(
    ("message", "known", "expected", "corrected"),
    [
        # a name one character off the known name is that name, never a place
        ("口误，应该是李然", ("用户叫吕然", "用户住在杭州"), "用户叫李然", "用户叫吕然"),
        ("口误，应该是张伟", ("用户的老板叫王伟", "用户老家是成都"), "用户的老板叫张伟", "用户的老板叫王伟"),
        # a company is no place, a district no one's name
        ("口误，应该是腾讯", ("用户在阿里巴巴工作", "用户住在杭州"), "用户在腾讯工作", "用户在阿里巴巴工作"),
        ("口误，应该是浦东新区", ("用户住在杭州", "用户叫吕然"), "用户住在浦东新区", "用户住在杭州"),
        # a city, a number: the fact whose value has their shape
        ("口误，应该是上海", ("用户叫吕然", "用户住在杭州"), "用户住在上海", "用户住在杭州"),
        ("口误，应该是30岁", ("用户今年28岁", "用户住在杭州"), "用户今年30岁", "用户今年28岁"),
        (
            "typo, I meant Lena",
            ("The user's name is Lina", "The user lives in Leeds"),
            "The user's name is Lena",
            "The user's name is Lina",
        ),
    ],
)
def test_a_bare_correction_goes_to_the_fact_its_value_fits(extractor, message, known, expected, corrected):
    facts = extractor.extract(message, known_facts=known).facts
    assert [(f.text, f.conflicts_with) for f in facts] == [(expected, corrected)]


def test_a_correction_with_nothing_to_correct_changes_nothing(extractor):
    assert texts(extractor, "说错了") == []
    assert texts(extractor, "oops, my bad") == []


# -- retractions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "known"),
    [
        ("嘿嘿我根本没养狗，刚才骗你的", "用户养了只柴犬，叫可乐"),
        ("骗你的啦，我根本没养鸟", "用户养了只鹦鹉，叫豆豆"),
        ("哈哈骗你的，我哪有游艇", "用户有一艘游艇"),
        ("其实是吹的，我就会做个番茄炒蛋", "用户厨艺达到了米其林水平"),
        ("开玩笑啦，其实就几十个读者", "用户的公众号有两万读者"),
        ("瑜伽不练了，太累", "用户在练瑜伽，每周三次"),
        ("不考了，想想还是算了", "用户在准备考研"),
        ("lol just kidding, I don't own a yacht", "The user has a yacht"),
        ("ok that was a lie, I only know a few chords", "The user plays guitar professionally"),
        ("jk, I'm not allergic to anything", "The user is allergic to shellfish"),
        ("gave up on the marathon, my knees hurt", "The user is training for a marathon"),
    ],
)
def test_retractions_conflict_with_what_they_take_back(extractor, judge, message, known):
    result = extractor.extract(message, known_facts=(known,))
    assert any(f.conflicts_with == known for f in result.facts), [f.text for f in result.facts]
    taken_back = next(f.text for f in result.facts if f.conflicts_with == known)
    assert judge.judge(known, taken_back).relation is Relation.CONFLICT


@pytest.mark.parametrize(
    ("message", "known"),
    [
        ("出差取消了", "用户打算下周去天津出差"),
        ("旅游泡汤了，没请到假", "用户准备五一去桂林旅游"),
        ("nvm, the trip got cancelled", "The user is flying to Lisbon next week for a conference"),
    ],
)
def test_a_cancelled_plan_takes_the_plan_back(extractor, judge, message, known):
    result = extractor.extract(message, known_facts=(known,))
    assert any(judge.judge(known, f.text).relation is Relation.CONFLICT for f in result.facts)


def test_a_cancelled_plan_nobody_knew_of_records_nothing(extractor):
    assert texts(extractor, "出差取消了") == []
    assert texts(extractor, "nvm, the trip got cancelled") == []


# -- the judge -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在绍兴工作", "用户在台州工作"),
        ("用户的女儿今年4岁，在上幼儿园", "用户的女儿5岁"),
        ("用户开的是一台本田雅阁", "用户开的是蔚来ET5"),
        ("用户一天两包烟", "用户一天抽五六根烟"),
        ("用户一天抽五六根烟", "用户彻底戒烟了"),
        ("用户在腾讯做前端", "用户在美团工作"),
        ("用户在腾讯做前端", "用户是产品经理"),
        ("用户在腾讯做前端", "用户辞职了"),
        ("用户是实习生", "用户是正式员工"),
        ("用户是新手", "用户入门了"),
        ("用户骑自行车上班", "用户每天坐地铁上班"),
        ("用户属兔", "用户属龙"),
        ("用户是天秤座", "用户是射手座"),
        ("用户月薪九千", "用户月薪一万二"),
        ("用户的男朋友叫大伟", "用户的男朋友叫小林"),
        ("用户单身", "用户交了个男朋友"),
        ("用户的男朋友叫大伟", "用户和男朋友分手了"),
        ("用户喜欢民谣", "用户现在更喜欢摇滚"),
        ("喜欢看武侠小说", "更喜欢看科幻小说"),
        ("The user is a junior analyst", "The user was promoted to senior analyst"),
        ("The user is a sophomore in college", "The user is a junior now"),
        ("The user's daughter is 6", "The user's daughter turned 7"),
        ("The user likes techno", "The user now prefers jazz"),
        ("The user has three dogs", "The user has two dogs"),
        ("The user's cat's name is Mochi", "The user's cat's name is Miso"),
    ],
)
def test_one_slot_new_value_is_an_update(judge, old, new):
    assert judge.judge(old, new).relation is Relation.UPDATE, judge.judge(old, new).raw_answer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户养了只狸花猫，叫年糕", "用户压根没养过猫"),
        ("用户在练瑜伽，每周三次", "用户不练瑜伽了"),
        ("用户会说五种语言", "用户其实就会普通话和英语"),
        ("用户的猫叫年糕", "用户不再养猫了"),
        ("The user has a yacht", "The user does not own a yacht"),
        ("The user has a golden retriever", "The user no longer has a dog"),
        ("The user is allergic to shellfish", "The user is not allergic to anything"),
        ("The user is training for a marathon", "The user gave up on the marathon"),
    ],
)
def test_taking_back_is_a_conflict(judge, old, new):
    assert judge.judge(old, new).relation is Relation.CONFLICT, judge.judge(old, new).raw_answer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在绍兴工作", "用户住在绍兴"),
        ("用户住在无锡", "用户的同事住在昆山"),
        ("用户的同事在常州上班", "用户的同事在南通上班"),
        ("用户今年31岁", "用户的哥哥37岁"),
        ("用户喜欢民谣", "用户喜欢摇滚"),
        ("用户养了只猫叫年糕", "用户养了条狗叫旺仔"),
        ("用户从不喝酒", "用户的爸爸每天喝半斤白酒"),
        ("用户在准备考研", "用户不想吃饭"),
        ("用户会说五种语言", "用户只会做番茄炒蛋"),  # no "其实": not said as taking anything back
        ("用户也许后年搬去珠海", "用户住在无锡"),
        ("The user works in Leeds", "The user lives in York"),
        ("The user is 31", "The user's brother turned 44"),
    ],
)
def test_different_things_stay_different(judge, old, new):
    assert judge.judge(old, new).relation is Relation.DIFFERENT, judge.judge(old, new).raw_answer


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("用户在绍兴上班", "用户在绍兴工作"),
        ("用户是江西人", "用户老家是江西"),
        ("用户彻底戒烟了", "用户快一年没碰烟"),
        ("用户在腾讯做前端", "用户在腾讯工作"),
    ],
)
def test_the_same_thing_said_again_is_a_duplicate(judge, old, new):
    assert judge.judge(old, new).relation is Relation.DUPLICATE, judge.judge(old, new).raw_answer


# -- preferences: one dimension, two sides -----------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("偏好简短的回复风格", "偏好详细的回复风格"),
        ("Prefers short answers", "Prefers detailed answers"),
        ("偏好正式的回复风格", "偏好随意、口语化的回复风格"),
        ("Prefers a formal tone", "Prefers a casual tone"),
        ("偏好回复里带emoji表情", "偏好纯文字的回复"),
        ("Prefers replies with emoji", "Prefers plain-text replies"),
        ("偏好少用专业术语", "偏好使用专业术语的讲解"),
        ("Prefers plain explanations with analogies", "Prefers technical explanations with proper terms"),
        ("偏好用Java写代码示例", "偏好用Rust写代码示例"),
        ("Prefers code examples in Ruby", "Prefers code examples in Swift"),
        ("Prefers metric units", "Prefers imperial units"),
        ("偏好使用公制单位", "偏好使用英制单位"),
        ("偏好用中文回复", "偏好用英文回复"),
        ("不希望用英文回复", "偏好用英文回复"),
        ("偏好用表格的形式回复", "偏好用段落的形式回复"),
        ("偏好使用Windows", "偏好使用Mac"),
    ],
)
def test_the_other_side_of_one_dimension_replaces_a_preference(judge, old, new):
    assert judge.judge(old, new).relation is Relation.UPDATE


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("偏好简短的回复风格", "偏好正式的回复风格"),
        ("Prefers short answers", "Prefers a casual tone"),
        ("偏好纯文字的回复", "偏好少用专业术语"),
        ("偏好用Java写代码示例", "偏好详细的回复风格"),
    ],
)
def test_two_dimensions_keep_both_preferences(judge, old, new):
    assert judge.judge(old, new).relation is Relation.DIFFERENT


def test_the_same_side_said_again_reinforces(judge):
    assert judge.judge("偏好简短的回复风格", "偏好简短的回复风格，三两句就好").relation is Relation.DUPLICATE
    assert dimensions("偏好简洁直接的回复风格") == {"length": "short", "directness": "direct"}
    assert dimensions("不希望回复带emoji") == {"emoji": "without"}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("以后回复短一点，两三句话就行", "偏好简短的回复风格"),
        ("不用那么详细了", "偏好简短的回复风格"),
        ("答案尽量长一点", "偏好详细的回复风格"),
        ("你随意点就行，别太正式", "偏好随意、口语化的回复风格"),
        ("以后回复只要纯文字", "偏好纯文字的回复"),
        ("回复可以多带点表情", "偏好回复里带emoji表情"),
        ("解释的时候多举例子", "偏好回答时多举例子"),  # examples are a dimension of their own
        ("解释的时候多打比方", "偏好通俗易懂、多打比方的讲解"),
        ("可以直接说专业术语了", "偏好使用专业术语的讲解"),
        ("以后示例都用Rust写", "偏好用Rust写代码示例"),
        ("还是换回中文吧", "偏好用中文回复"),
        ("switch to metric please", "Prefers metric units"),
        ("no more emojis please", "Prefers plain-text replies"),
        ("explain it to me like I'm five", "Prefers plain explanations with analogies"),
        ("you can get technical with me", "Prefers technical explanations with proper terms"),
        ("show me the code examples in Kotlin from now on", "Prefers code examples in Kotlin"),
        ("keep it casual", "Prefers a casual tone"),
        ("switch back to English", "Prefers replies in English"),
    ],
)
def test_reply_preferences_by_side(extractor, message, expected):
    assert expected in texts(extractor, message)


def test_a_one_off_task_is_no_code_preference(extractor):
    assert texts(extractor, "用Rust写个排序") == []


# -- English: the user, as whole words and with agreement -------------------------------------------


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("I mean the other one", "The user means the other one"),
        ("I meant the blue one", "The user meant the blue one"),
        ("I'm a chef", "The user is a chef"),
        ("I have a bike", "The user has a bike"),
        ("it's Ivy, I-V-Y", "It's Ivy, I-V-Y"),
        ("I-5 runs past my office", "I-5 runs past the user's office"),
        ("my mime act", "The user's mime act"),
        ("I'd like that", "The user would like that"),
    ],
)
def test_english_subject_rewriting(said, expected):
    assert en_third_person(said) == expected


def test_a_capital_after_a_comma_stays_a_name(extractor):
    assert texts(extractor, "I work in Salem, Oregon") == ["The user works in Salem, Oregon"]


# -- whole conversations, in a throwaway in-memory ledger ---------------------------------------------

CONVERSATIONS = [
    # (messages, keys that must be in one active item, keys no active item may hold)
    (["我住在宣城", "今天好热", "前几天搬到了芜湖"], [["芜湖"]], [["宣城"]]),
    (["我在嘉兴上班", "后来跳槽到湖州了", "周末去爬山了", "今年被调去衢州分公司了"], [["衢州"]], [["嘉兴"], ["湖州"]]),
    (["我儿子今年3岁", "一眨眼儿子都4岁了", "今天儿子5岁生日"], [["5岁"]], [["3岁"], ["4岁"]]),
    (["我一天两包烟", "正在戒，现在每天只抽五六根", "彻底戒了！三个月没碰烟了"], [["戒"]], [["两包"], ["五六根"]]),
    (["我男朋友叫大伟", "我们分手了，最近在和一个叫小林的男生约会"], [["小林"]], [["大伟"]]),
    (["我养了只狸花猫，叫年糕", "今天下雨", "我压根没养过猫，瞎说的"], [], [["年糕"]]),
    (["我在准备考研，每天刷题", "研究生我不考了，还是好好上班吧"], [], [["准备考研"]]),
    (["下周我要去西宁出差", "出差取消了"], [], [["西宁"]]),
    (["我叫吕然", "帮我起个网名", "不好意思名字写错了，是李然"], [["李然"]], [["吕然"]]),
    (["我目前单身", "我表妹下周订婚，我去帮忙"], [["单身"]], []),
    (["我住在无锡", "说不定过两年搬去南通，还没想好"], [["无锡"]], []),
    (["回答详细点", "最近太忙，以后简短点"], [["简短"]], [["详细"]]),
    (["回我消息多带点表情", "以后回复只要纯文字"], [["纯文字"]], [["表情"]]),
    (["以后示例都用Java写", "我们换技术栈了，以后示例都用Rust"], [["Rust"]], [["Java"]]),
    (["I live in Tucson.", "we relocated to Phoenix in March"], [["Phoenix"]], [["Tucson"]]),
    (["My daughter is 9.", "she just turned 10 on Friday"], [["daughter", "10"]], [["daughter", "9"]]),
    (
        ["I work as a barista.", "got promoted to shift lead", "I'm the store manager now"],
        [["store manager"]],
        [["barista"]],
    ),
    (["My name is Jon.", "ugh, typo: Jen, not Jon"], [["Jen"]], [["Jon"]]),
    (["I have a yacht.", "lol just kidding, I don't own a yacht"], [], [["has a yacht"]]),
    (["I live in Tucson.", "I might move to Boise next year"], [["Tucson"]], []),
    (
        ["Give me temperatures in Fahrenheit.", "I've moved to Madrid, use Celsius from now on"],
        [["metric"]],
        [["imperial"]],
    ),
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


# -- the detector: changes told without 我 reach the extractor; exchanges and moments do not ------


@pytest.mark.parametrize(
    "message",
    [
        "去年调去了遂宁",
        "后来跳槽到湖州了",
        "减到115斤了",
        "新学期开始，孩子上三年级了",
        "彻底戒了",
        "骑手的活儿辞了",
        "说错了，是农行",
        "出差取消了",
        "以后回复只要纯文字",
        "解释的时候多举例子",
        "got promoted to team lead",
        "nvm, the trip got cancelled",
        "switch back to English",
        "use Celsius from now on",
    ],
)
def test_the_detector_flags_changes_without_the_first_person(message):
    from factledger.infrastructure.offline import SignalDetector

    result = SignalDetector().detect(message)
    assert result["has_fact_signal"] or result["has_pref_signal"], message


@pytest.mark.parametrize(
    "message",
    [
        "我们这边今天下雨",  # a group, not the speaker
        "要不是你提醒我，我都忘了",  # the listener acting on the speaker
        "我好困啊",  # a passing state
        "我正在吃饭",
        "我去洗个澡",
    ],
)
def test_the_detector_leaves_moments_and_exchanges_alone(message):
    from factledger.infrastructure.offline import SignalDetector

    result = SignalDetector().detect(message)
    assert not (result["has_fact_signal"] or result["has_pref_signal"]), (message, result)
