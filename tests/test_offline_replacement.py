"""A change told in words no slot rule reads still replaces what it changes (ADR 0010, addendum 11).

Every sentence here is invented for the mechanism it pins: a word of change or correction in the
message, and the frame of a recent fact about the same person. The look-alikes share the words
and change nothing: a word of adding, someone else, a plan, a moment, a fact of the past.
"""

from __future__ import annotations

import pytest

from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.replacement import replaced_fact, told_changes
from tests.offline_cases import said_after


@pytest.mark.parametrize(
    ("first", "then", "new_value"),
    [
        # a new employer said by its verb, with no word the employer rules read
        ("我在一家面包房做学徒", "上个月入职星巴克了，做咖啡师", "星巴克"),
        # a correction that names only the thing it was about
        ("我这周末去苏州参加婚礼", "搞错了，是去无锡，看了下请柬", "无锡"),
        ("I'm a project manager at Oracle.", "wait, wrong company — I'm at SAP, typed too fast", "SAP"),
        # a move told in a clause beside others, with the one it was made with
        ("我住在天河区，合租的", "租约到期了，上周跟老公一起搬到番禺了，离他公司近", "番禺"),
        # a figure reached: the new value follows the verb
        ("我现在体重65公斤", "练了半年，减到58了", "58"),
        # a transfer said by its verb, the kind of work shared with the known fact
        ("我在仓库做分拣", "这个月又调到门店了，站一天腿都麻了", "门店"),
        # an English change said as "and now", the subject in the middle
        ("I live in Leeds.", "and now I'm in York, closer to my sister", "York"),
    ],
)
def test_a_change_told_in_other_words_replaces_the_fact_it_changes(
    extractor: RuleExtractor, first: str, then: str, new_value: str
) -> None:
    known, said = said_after(extractor, first, then)
    assert known, first
    assert any(new_value in text and ended in known for text, ended in said), said


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("我在一家面包房做学徒", "我也在学做咖啡，想以后去星巴克"),  # adding, and a plan
        ("我住在天河区", "我同事上周搬到番禺了"),  # someone else moved
        ("我住在天河区", "单位把我同事调到番禺了"),  # someone else's transfer, told after 我
        ("我老家是湖南的", "现在在深圳上班"),  # where one comes from stays true
        ("我本科在武大读的", "现在在浙大读研"),  # a school of the past stays true
        ("我在读初二", "今天语文课又被点名了"),  # a moment, not a change of school year
        ("我在仓库做分拣", "要是哪天调到门店就好了"),  # imagined
        ("我每天骑车上班", "周末骑车去湖边转转"),  # 转转 is a stroll
        ("I live in Leeds.", "my brother just moved to York"),  # someone else
        ("I work at a bakery.", "I also started a pottery class"),  # adding
        ("我在杭州工作", "现在做运营"),  # what one does and where are two things
    ],
)
def test_look_alikes_replace_nothing(extractor: RuleExtractor, first: str, then: str) -> None:
    known, said = said_after(extractor, first, then)
    assert not [t for t, ended in said if ended in known], said


def test_the_guards_hold_where_the_rules_read_no_fact() -> None:
    """Two look-alikes above read no fact at all; the mechanism's own guards, asked directly."""
    assert told_changes("单位把我同事调到番禺了", []) == []  # someone else's transfer
    assert replaced_fact("用户调到门店", "要是哪天调到门店就好了", ["用户在仓库做分拣"]) is None  # imagined
    assert replaced_fact("用户调到门店", "这个月调到门店了", ["用户在仓库做分拣"]) == "用户在仓库做分拣"


def test_the_fact_chosen_is_the_one_whose_kind_and_frame_the_change_shares() -> None:
    known = ["用户在一家面包房做学徒", "用户养了一只猫", "用户住在天河区"]
    assert replaced_fact("用户入职星巴克，做咖啡师", "上个月入职星巴克了，做咖啡师", known) == known[0]
    assert replaced_fact("用户搬到番禺", "上周搬到番禺了", known) == known[2]
    # nothing of the same kind or frame: nothing replaced, however marked the change
    assert replaced_fact("用户换了辆电动车", "换了辆电动车", known[:2]) is None


def test_a_correction_reaches_a_fact_sharing_little_but_its_frame() -> None:
    known = ["用户下周去厦门出差", "用户今天加班到十点"]
    assert replaced_fact("用户其实是去泉州", "说错了，是去泉州", known) == known[0]


def test_a_relatives_change_replaces_only_that_relatives_fact() -> None:
    known = ["用户的老婆是江西人", "用户是湖南人"]
    assert replaced_fact("用户的老婆其实是福建人", "纠正一下，她是福建人", known) == known[0]
    assert replaced_fact("用户其实是福建人", "纠正一下，她是福建人", known[1:]) is None


def test_told_changes_restates_the_clause_that_no_fact_says() -> None:
    assert told_changes("合同到期了，月初搬到温州了", []) == ["用户月初搬到温州"]
    # said already by a fact read from the message: nothing more to say
    assert told_changes("合同到期了，月初搬到温州了", ["用户月初搬到温州"]) == []
    assert told_changes("we moved into a loft in Denver", []) == ["The user moved into a loft in Denver"]
    assert told_changes("我同事搬到温州了", []) == []


@pytest.mark.parametrize(
    ("message", "replaced"),
    [
        # the relative named in English is the fact's owner (held as its canonical role, 老婆), and so is she
        ("My wife switched jobs, she now works at Meta", "The user's wife works at Google"),
        # near miss: someone else's change is not the owner's
        ("My brother switched jobs, he now works at Meta", None),
    ],
)
def test_an_english_relatives_change_replaces_that_relatives_fact(message: str, replaced: str | None) -> None:
    known = ["The user's wife works at Google"]
    assert replaced_fact("The user's wife works at Meta", message, known) == replaced
