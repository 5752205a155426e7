"""A new choice of a thing a known fact names a choice of (see ``offline.topics``), invented sentences.

Kinds of phrasing: a drink, a way to get to work, a platform, a school, dog or
cat person, a genre or a sport given up for another; and the look-alikes that
must change nothing: a second choice added, the old one kept, someone else's
switch, a question, a choice that has not changed.
"""

from __future__ import annotations

import pytest
from offline_cases import replacement

from factledger.domain.values import Relation
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.judge import RuleJudge
from factledger.infrastructure.offline.topics import succeeds, topics_of


@pytest.mark.parametrize(
    ("first", "then", "wanted"),
    [
        ("我每天早上一杯拿铁", "现在改喝豆浆了，胃受不了", "豆浆"),  # a drink that gave way
        ("我上班都骑自行车", "后来单位搬远了，现在坐地铁", "地铁"),  # one way to work at a time
        ("我是猫派", "养了条柯基之后彻底成了狗派", "狗派"),
        ("我在饿了么跑单", "这个月转到美团了", "美团"),  # the platform one works for
        ("我每天晚上都看韩剧", "看腻了，最近只看纪录片", "纪录片"),  # a genre, only the new one
        ("我以前天天打篮球", "现在主要练瑜伽", "瑜伽"),  # held before, and now another
        ("我在三中读初一", "开学转去了外国语中学", "外国语中学"),  # one school at a time
        ("我爱打乒乓球", "腰伤了就不打了，现在改成游泳", "游泳"),  # the words of giving way a clause before
        ("我的笔记本是惠普的", "记混了，我用的是联想小新", "联想"),  # a choice said wrong, corrected
        ("我家猫是英短", "说错了，它其实是美短", "美短"),
        ("我是高中语文老师", "其实我教的是历史，刚才手滑", "历史"),
        ("我在单位是初级会计", "今年评上了中级", "中级"),  # a rank, one at a time
        ("我后来改打网球了", "现在又迷上飞盘了", "飞盘"),  # a pastime taken up in place of one taken up before
        ("我最喜欢的水果是芒果", "口味变了，现在最爱杨梅", "杨梅"),  # a favourite is one at a time
        ("我平时开车就听民谣", "最近听腻了，迷上说唱了", "说唱"),  # a music genre given up
        ("I love jazz.", "these days I'm more into hip hop", "hip hop"),  # held over the other now
        ("我喜欢夏天", "这两年怕晒，反而喜欢秋天了", "秋天"),  # 反而: held over the other now
    ],
)
def test_a_new_choice_replaces_the_known_one(
    extractor: RuleExtractor, judge: RuleJudge, first: str, then: str, wanted: str
) -> None:
    _, verdict = replacement(extractor, judge, first, then, wanted)
    assert verdict.relation is Relation.UPDATE, verdict.raw_answer


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("我每天喝咖啡", "下午偶尔也喝点绿茶"),  # a second drink, added
        ("我喜欢打羽毛球", "最近开始学游泳"),  # people do several sports
        ("我上班坐地铁", "周末骑自行车去郊外转转"),  # no word that puts it after
        ("我每天两杯美式", "随口问问，咖啡是戒不掉了"),  # the same choice, and not given up
        ("我坐公交上班", "我同事现在改骑电动车了"),  # someone else's switch
        ("我每天都刷悬疑剧", "如果改看综艺会不会轻松点？"),  # asked, on a condition
        ("我是狗派", "我室友是猫派"),
        ("我在县二中读高一", "现在二中要求住校"),  # the same school, said shorter
        ("我平时爱游泳", "最近又迷上了骑行，腿也练粗了"),  # a pastime added to one held all along
        ("我爱吃芒果", "最近也挺爱吃杨梅"),  # a fruit added, no favourite
        ("I love horror movies.", "I'm also more into comedies lately"),  # "also": one added
        ("我喜欢春天", "也挺喜欢秋天的"),  # a season added
        ("我每天睡前看纸质书", "我儿子这几年都看电子书了"),  # someone else's way
    ],
)
def test_look_alikes_replace_nothing(extractor: RuleExtractor, first: str, then: str) -> None:
    known = [f.text for f in extractor.extract(first).facts]
    assert known, first
    facts = extractor.extract(then, known_facts=known).facts
    assert not [f for f in facts if f.conflicts_with in known], [(f.text, f.conflicts_with) for f in facts]


@pytest.mark.parametrize(
    ("old", "new", "relation"),
    [
        ("The user takes the bus to work", "The user now bikes to work instead", Relation.UPDATE),
        ("The user used to play tennis", "These days the user plays golf", Relation.UPDATE),
        ("The user drinks green tea every afternoon", "These days it's espresso for the user", Relation.UPDATE),
        ("The user drinks coffee every morning", "The user also likes tea in the evening", Relation.DIFFERENT),
        ("The user plays tennis", "The user started golf lessons", Relation.DIFFERENT),
        ("The user runs 5k most mornings", "Switched to cycling after the user's knee gave out", Relation.UPDATE),
        ("The user's laptop is a Dell XPS", "Correction: the user's laptop is a MacBook Air", Relation.UPDATE),
        ("The user has a Dell XPS laptop", "Actually, the user's own laptop is a Lenovo ThinkPad", Relation.UPDATE),
        ("用户骑的是美利达", "用户最后还是入了辆崔克", Relation.UPDATE),  # 还是 adds nothing
        ("The user loves thrillers", "The user is done with those, comedies from now on", Relation.UPDATE),
        ("The user's wife takes the bus", "The user now drives to work", Relation.DIFFERENT),  # not the same person
    ],
)
def test_the_judge_reads_a_choice_that_gave_way(judge: RuleJudge, old: str, new: str, relation: Relation) -> None:
    verdict = judge.judge(old, new)
    assert verdict.relation is relation, verdict.raw_answer


def test_one_choice_said_in_several_words_is_one_choice() -> None:
    assert topics_of("每天两杯美式")["drink"] == topics_of("离不开咖啡")["drink"] == {"咖啡"}
    assert topics_of("在县一中读书")["school"] == topics_of("转到县一中")["school"] == {"县一中"}
    assert succeeds("用户每天两杯美式", "用户现在只喝咖啡") is None  # the same drink, said again


@pytest.mark.parametrize(
    ("liking", "then", "taken_up"),
    [
        ("我最爱玩王者荣耀", "玩腻了，现在天天玩蛋仔派对", "蛋仔派对"),  # a game given up for another
        ("我喜欢看言情剧", "这两年口味变了，迷上悬疑了", "悬疑"),
        ("出去玩我喜欢跟团", "以后都自由行了，自己做攻略有意思", "自由行"),  # one way to travel at a time
        ("我最爱听林俊杰", "听腻了，这阵子单曲循环的是李健", "李健"),  # a singer on repeat now
        ("我平时爱看纸质书", "这几年都改看电子书了，省地方", "电子书"),  # one way to read at a time
    ],
)
def test_a_taste_taken_up_retires_the_liking_it_replaces(
    settings: Settings, liking: str, then: str, taken_up: str
) -> None:
    with open_ledger(settings, warn_if_offline=False) as service:
        service.ingest("u1", liking)
        before = service.profile("u1")
        old = [p.id for p in before.preferences] + [f.id for f in before.facts]
        service.ingest("u1", then)
        profile = service.profile("u1")
        assert [f.text for f in profile.facts if taken_up in f.text], profile
        assert not {p.id for p in profile.preferences} & set(old), profile
        assert not {f.id for f in profile.facts} & set(old), profile
        gone = service.why("u1", old[0])
        assert gone.invalidated is not None and gone.invalidated.superseded_by is not None
        assert taken_up in (gone.invalidated.superseded_by.text or "")


@pytest.mark.parametrize(
    ("liking", "then"),
    [
        ("我最爱玩王者荣耀", "最近还迷上了原神"),  # another game, added
        ("我喜欢看韩剧", "我最近还在追美剧"),  # one more show, nothing given up
        ("我最爱玩王者荣耀", "我表弟现在天天玩原神"),  # someone else's taste
    ],
)
def test_a_taste_added_keeps_the_liking(settings: Settings, liking: str, then: str) -> None:
    with open_ledger(settings, warn_if_offline=False) as service:
        service.ingest("u1", liking)
        before = service.profile("u1")
        service.ingest("u1", then)
        after = service.profile("u1")
        assert len(after.facts) + len(after.preferences) > len(before.facts) + len(before.preferences), after
        assert {p.id for p in before.preferences} <= {p.id for p in after.preferences}
        assert {f.id for f in before.facts} <= {f.id for f in after.facts}


def test_a_change_ends_every_fact_it_updates_not_only_the_one_named(settings: Settings) -> None:
    with open_ledger(settings, warn_if_offline=False) as service:
        service.ingest("u1", "我每天早上喝一杯拿铁")
        service.ingest("u1", "我下午也会再喝一杯拿铁")
        said = {f.id: f.text for f in service.profile("u1").facts}
        assert len(said) == 2, said  # two facts of one drink
        service.ingest("u1", "胃疼以后拿铁戒了，现在只喝豆浆")
        active = {f.id: f.text for f in service.profile("u1").facts}
        assert not set(said) & set(active), active
        assert any("豆浆" in t for t in active.values()), active
