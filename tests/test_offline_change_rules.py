"""The change rules of rules/changes.toml (ADR 0042): each names only the handlers, makers and finders
changes.py has and only the keys its runner reads, so a typo fails here rather than when a message
first fires the rule; and the rules that read the known facts by a pattern (``held``, ``slot``,
``either``, ``recent``) find the fact and say the change."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.infrastructure.offline import changes
from factledger.infrastructure.offline.registry import Registry, Rule

#: the keys ``changes._fired``, ``_target``, ``_changed`` and ``_message_events`` read
READ_KEYS = {
    *("handler", "make", "finder", "slots", "kinds", "slot", "either", "held", "recent", "by_slot", "value", "in_fact"),
    *("differs", "differs_i", "differs_value", "holds", "stop", "trim", "reads"),
    *("on", "every", "group", "also"),
}
TABLES: dict[str, Any] = {
    "handler": changes._HANDLERS,
    "make": changes._MAKERS,
    "finder": changes._FINDERS,
}
RULES = [rule for value in vars(changes).values() if isinstance(value, Registry) for rule in value.rules]


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_each_change_rule_names_only_what_changes_py_has(rule: Rule) -> None:
    assert set(rule.values) <= READ_KEYS, sorted(set(rule.values) - READ_KEYS)
    for key, table in TABLES.items():
        assert key not in rule.values or rule.values[key] in table, f"{rule.id}: no {key} {rule.values[key]!r}"
    assert rule.values.get("stop", "always") in ("always", "found", "made")


@pytest.mark.parametrize(
    ("message", "known", "change"),
    [
        # held + respan: the known title of the same kind, with the rank it has now
        ("got promoted to senior analyst", ["The user is a junior analyst"], "The user is a senior analyst"),
        # held + recent: a weight in one of the last three facts
        ("down to 195 after two months", ["The user weighs 210 pounds"], "The user weighs 195 pounds"),
        # a finder of the words after "about", of any fact (not the last)
        (
            "please forget what I said about my middle name",
            ["The user's middle name is Rose", "The user lives in Leeds"],
            "The user took back what they had just said",
        ),
        # slots, a maker by the fact's own words
        ("现在在青岛分公司", ["用户在阿里巴巴上班"], "用户在青岛分公司上班"),
        # a finder of a kind (碳酸饮料: 雪碧 …)
        ("碳酸饮料早戒了", ["用户每天都喝雪碧"], "用户戒了碳酸饮料"),
        # held with a group filled in: the thing named, lost
        ("手环弄丢了", ["用户有一个小米手环"], "用户的手环弄丢了"),
        # "that thing": a pursuit first, a habit after
        ("那事儿早就坚持不下去了", ["用户每天跑步", "用户最近在学游泳，每周三次"], "用户放弃了之前在学的"),
    ],
)
def test_a_change_rule_finds_the_known_fact_and_says_the_change(message: str, known: list[str], change: str) -> None:
    found = changes.events(message, known)
    assert [new for new, _ in found] == [change]
    assert found[0][1] in known


def test_in_turns_gate_leaves_the_clause_rules_advice_as_advice() -> None:
    # [[registries.in_turn]] reads nothing in a message of advice, a plan or a relative named
    # (advised_or_planned()); the clause rules' advised() is advice alone, so a relative's switch is no advice
    rule = next(rule for rule in RULES if rule.id == "changes.clause.switched-advised")
    assert rule.fire("改喝奶", {"text": "妈妈让我改喝奶"}) is not None
    assert rule.fire("改喝奶", {"text": "我老公改喝奶"}) is None
    assert changes.events("她改学了二胡", ["用户的女儿一开始学的是长笛"]) == [
        ("用户的女儿改学二胡了", "用户的女儿一开始学的是长笛")
    ]
    assert changes.events("医生建议她改学二胡", ["用户的女儿一开始学的是长笛"]) == []


def test_a_name_said_again_replaces_the_latest_name_of_its_shape_in_a_message_about_a_name() -> None:
    known = ["The user's dog is called Max", "用户叫吕然", "The user's cat is named Mochi"]
    said = "sorry, her name is actually Momo"
    assert changes.named_instead("Momo", said, known) == ("The user's cat is named Momo", known[2])
    assert changes.named_instead("李然", "我叫李然", known) == ("用户叫李然", known[1])
    assert changes.named_instead("Momo", "it's Momo", known) is None  # the message speaks of no name
    assert changes.named_instead("Mochi", said, known[2:]) is None  # the name known already
    assert changes.named_instead("42", said, known) is None  # no name of that shape is known


def test_a_thing_switched_to_by_name_replaces_the_latest_of_the_last_two_facts_that_name_one() -> None:
    carrier = "The user's phone carrier is Verizon"
    said = "switched over to T-Mobile"
    assert changes.english_swaps(said, [carrier, "The user likes tea"]) == [
        ("The user's phone carrier is T-Mobile", carrier)
    ]
    assert changes.english_swaps(said, [carrier, "The user likes tea", "The user runs"]) == []  # not of the last two
    assert changes.english_swaps(said, ["The user's phone carrier is T-Mobile Plus"]) == []  # named already


def test_a_thing_got_rid_of_is_swapped_for_the_new_one_and_said_sold_unless_a_car_or_phone_is_known() -> None:
    ps5 = "The user has a PS5"
    said = "sold it and got a Steam Deck"
    assert changes.english_swaps(said, [ps5]) == [("The user has a Steam Deck", ps5), ("The user sold it", ps5)]
    assert changes.english_swaps("got a Steam Deck", [ps5]) == []  # nothing got rid of
    assert changes.english_swaps(said, [ps5, "The user likes tea"]) == []  # not the thing said last
    assert changes.english_swaps(said, ["The user has a Steam Deck"]) == []  # the same one


def test_a_pursuit_now_changes_the_latest_of_the_last_two_known_to_have_changed_or_given_up() -> None:
    changed = "用户的女儿改学小提琴了"
    assert changes.events("现在在学大提琴", [changed]) == [("用户的女儿改学大提琴了", changed)]
    assert changes.events("现在在学大提琴", ["用户的女儿在学小提琴"]) == []  # a relative's, not changed before
    assert changes.events("现在在学大提琴", [changed, "用户喜欢猫", "用户住在北京"]) == []  # not of the last two
    said = "韩语也学不下去了，现在学西班牙语"  # the user's own, given up in the message
    assert changes.events(said, ["用户在学韩语"]) == [("用户改学西班牙语了", "用户在学韩语")]


def test_a_change_in_turn_is_said_of_the_latest_thing_known_done_by_that_verb_or_none() -> None:
    daughter, own = "用户的女儿在学长笛", "用户在学钢琴"
    assert changes.events("她改学了二胡", [own, daughter]) == [("用户的女儿改学二胡了", daughter)]
    assert changes.events("换成象棋了", [daughter, own]) == [("用户改学象棋了", own)]  # by any verb
    assert changes.events("她改学了二胡", [daughter, own]) == []  # the latest is the user's own: not hers
    assert changes.events("改玩王者荣耀了", [daughter, own]) == []  # nothing known played


def test_a_habit_let_go_is_the_latest_kept_up_by_the_verb_said_and_a_kind_quit_the_latest_naming_one() -> None:
    gym, runs = "用户每天健身", "用户每周跑步三次"
    let_go = "用户已经不再坚持之前的习惯了"
    assert changes.events("很久没练了", [gym, runs]) == [(let_go, gym)]  # 练: 健身 too
    assert changes.events("现在已经不跑了", [runs, gym]) == [(let_go, runs)]
    sprite = "用户每天都喝雪碧"
    assert changes.events("碳酸饮料早戒了", [sprite, "用户不喝可乐了"]) == [("用户戒了碳酸饮料", sprite)]


def test_what_is_forgotten_is_the_latest_fact_the_words_after_about_name_else_nothing() -> None:
    name, cats = "The user's MIDDLE name is Rose", "The user likes cats"
    took_back = "The user took back what they had just said"
    assert changes.events("please forget what I said about my middle name", [name, cats]) == [(took_back, name)]
    assert changes.events("forget what I said about the cats", [cats, name]) == [(took_back, cats)]
    assert changes.events("forget what I said about the cats", [name]) == []  # none named: nothing taken back


@pytest.mark.parametrize(
    ("mark", "message", "marked"),
    [
        # each a test of one pattern of rules/changes.toml (``_marked``), the reason written beside it
        ("is_correction", "说错了，是杭州", True),
        ("is_correction", "oops, I meant Lyon", True),
        ("is_correction", "要是说错了，是不是三年级？", False),  # wondering whether to correct
        ("is_correction", "我住在杭州", False),
        ("is_retraction", "开玩笑的，我不养猫", True),
        ("is_retraction", "just kidding, I live in Ohio", True),
        ("is_retraction", "I live in Ohio", False),
        ("is_conditional", "万一考上研究生，就不干会计了", True),
        ("is_conditional", "if I get the job I'll move", True),
        ("is_conditional", "I got the job", False),
        ("is_plan", "The user is flying to Oslo next week", True),
        ("is_plan", "用户周末要去海边", True),
        ("is_plan", "用户住在北京", False),
        ("told_of_someone_else", "我室友原来跟我一起学，现在改学架子鼓了", True),
        ("told_of_someone_else", "她现在不学了", True),
        ("told_of_someone_else", "我原来学钢琴", False),
        ("may_change", "后来换到了昌平", True),
        ("may_change", "刚才那句不算数，别记", True),
        ("may_change", "你换工作了吗", False),  # asked
        ("may_change", "我喜欢猫", False),
    ],
)
def test_a_mark_of_a_message_is_its_pattern_unless_its_exception(mark: str, message: str, marked: bool) -> None:
    assert getattr(changes, mark)(message) is marked


@pytest.mark.parametrize(
    ("message", "known", "recounted"),
    [
        ("其实就几十个读者", "用户有两万读者", "用户有几十个读者"),
        ("I meant two Kids", "The user has three kids", "The user has two kids"),  # any case, plural
        ("I meant three kids", "The user has three kids", None),  # the count known already
    ],
)
def test_a_count_said_again_is_put_in_place_of_the_known_count_in_its_language(
    message: str, known: str, recounted: str | None
) -> None:
    found = changes.recount(message, [known])
    assert (found[0] if found else None) == recounted


@pytest.mark.parametrize(
    ("message", "known", "swapped"),
    [
        # [tables._SWAP_SLOTS]: by the measure word (台: a phone, a computer or a car) …
        ("又换了一台三星折叠屏", ["用户的手机是iPhone 12"], "用户的手机是三星折叠屏"),
        ("又换了一辆比亚迪", ["用户的手机是iPhone 12"], None),  # 辆: a vehicle, and none is known
        # … else by the verb: 换到 a place, a home when the message speaks of one
        ("后来换到了昌平", ["用户住在北京海淀", "用户在中关村的公司上班"], "用户在昌平上班"),
        ("后来租房换到了昌平", ["用户住在北京海淀", "用户在中关村的公司上班"], "用户住在昌平"),
    ],
)
def test_a_swap_is_about_the_slots_its_measure_word_or_its_verb_names(
    message: str, known: list[str], swapped: str | None
) -> None:
    found = changes.swapped(message, known)
    assert (found[0] if found else None) == swapped


def test_a_habit_quit_is_the_latest_habit_known_when_it_names_the_same_word_and_is_kept_up() -> None:
    smokes = "The user smokes"
    assert changes.english_swaps("I quit smoking last year", [smokes]) == [("The user quit that habit", smokes)]
    assert changes.english_swaps("I quit smoking last year", [smokes, "The user drinks coffee daily"]) == []
    assert changes.english_swaps("I quit smoking last year", ["The user never smokes"]) == []  # not kept up
    gym = "The user goes to the gym every day"
    assert changes.english_swaps("I stopped going", [gym]) == [("The user stopped doing that", gym)]
    assert changes.english_swaps("I stopped going", ["The user does not go to the gym every day"]) == []


@pytest.mark.parametrize(
    ("message", "known", "found"),
    [
        ("把朗逸换成了特斯拉", ["用户开的是朗逸"], ("用户开的是特斯拉", "用户开的是朗逸")),
        (
            "traded my Jetta for a Subaru Outback",
            ["The user drives a Jetta"],
            ("The user drives a Subaru Outback", "The user drives a Jetta"),
        ),
        # near miss: nothing known names the thing replaced
        ("把朗逸换成了特斯拉", ["用户喜欢猫"], None),
    ],
)
def test_a_thing_replaced_by_name_is_the_known_fact_that_names_it(
    message: str, known: list[str], found: tuple[str, str] | None
) -> None:
    assert changes.replaced(message, known) == found
