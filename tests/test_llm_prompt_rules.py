"""Prompts a model cannot misread (issue 25, item 4): each rule of the combined set is stated in it,
and the code does what the rule's answer means, through the fake OpenAI server over HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import pytest
from fake_openai import FakeOpenAI

from factledger.application.ports import ReadsKnownPreferences
from factledger.application.service import LedgerService
from factledger.domain.values import ExtractedFact, Extraction
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.llm import load_prompt_set
from factledger.infrastructure.llm.client import LLMClient
from factledger.infrastructure.llm.extractor import LLMExtractor
from factledger.infrastructure.llm.parsing import named_facts, parse_combined, parse_combined_answer
from factledger.infrastructure.rule_overrides import OverriddenExtractor, RuleOverrides

COMBINED = load_prompt_set("combined")
RULES = COMBINED.templates["combined"]


def rule(number: int) -> str:
    """The text of the combined prompt's numbered fact rule."""
    found = re.search(rf"^{number}\. (.*)$", RULES.split("事实分类")[0], re.MULTILINE)
    assert found, f"rule {number}"
    return found.group(1)


def category_line(category: str) -> str:
    found = re.search(rf"^- {category}: (.*)$", RULES.split("偏好（preferences）规则")[0], re.MULTILINE)
    assert found, category
    return found.group(1)


# ---- what the prompts say ---------------------------------------------------------------------------


def test_the_seed_set_stays_as_the_spec_wrote_it() -> None:
    seed = load_prompt_set("seed")
    assert seed.id == "seed@fa48ec2c"  # the file's hash: any edit of it changes this
    assert "preference_check" not in seed.templates


def test_conflicts_with_is_a_list_that_may_name_several_facts() -> None:
    assert "conflicts_with" in rule(4) and "全部列出" in rule(4) and "[]" in rule(4)
    assert '"conflicts_with": []' in RULES  # the example answers a list too


def test_a_settled_plan_is_a_fact_and_a_wish_is_not() -> None:
    assert "定下来的安排" in rule(7) and "是事实" in rule(7) and "hypothetical 为 false" in rule(7)
    assert "不取代现在仍成立的事实" in rule(7)
    assert "愿望" in rule(8) and "不是事实" in rule(8) and "hypothetical 为 true" in rule(8)


def test_other_peoples_facts_are_about_them_and_never_replace_the_users() -> None:
    assert "别人" in rule(9) and "主语写明是谁" in rule(9) and "hypothetical 为 false" in rule(9)
    assert "不取代用户本人的" in rule(9)


def test_a_form_of_address_is_a_preference_and_a_name_a_fact() -> None:
    assert "call me Mike" in rule(10) and "communication_style" in rule(10) and "是偏好" in rule(10)
    assert "personal_info" in rule(10)
    assert "怎么称呼用户" in RULES.split("偏好分类")[1]


@pytest.mark.parametrize(
    ("kind", "category"),
    [
        ("健康", "personal_info"),
        ("过敏", "personal_info"),
        ("学历", "work"),
        ("学校", "work"),
        ("宠物", "relationship"),
        ("老家", "location"),
    ],
)
def test_common_kinds_of_fact_have_a_category(kind: str, category: str) -> None:
    assert kind in category_line(category)
    assert COMBINED.json_schema is not None
    enum = COMBINED.json_schema["properties"]["facts"]["items"]["properties"]["category"]["enum"]
    assert enum == ["personal_info", "location", "relationship", "work", "habit", "preference", "other"]


def test_the_relation_check_tells_update_from_conflict_and_names_follows_from_as_different() -> None:
    check = COMBINED.templates["conflict_check"]
    lines = {line.split("：")[0].lstrip("- "): line for line in check.splitlines() if line.startswith("- ")}
    assert "随时间" in lines["update"] and "同一时间" in lines["conflict"]
    assert "推出" in lines["different"] and "一致" in lines["different"]
    assert "偏好" not in check  # facts only
    assert "偏好" in COMBINED.templates["preference_check"]


# ---- what the code does with the answers ---------------------------------------------------------


def test_conflicts_with_is_read_as_a_list_or_as_one_text() -> None:
    assert named_facts("用户住在杭州") == ["用户住在杭州"]  # seed, and combined answers recorded before
    assert named_facts(["A", "B", "A", None, "", "null"]) == ["A", "B"]
    assert named_facts(None) == [] and named_facts([]) == []
    facts, _ = parse_combined(json.dumps({"facts": [{"fact": "x", "conflicts_with": ["A", "B"]}], "preferences": []}))
    assert (facts[0].conflicts_with, facts[0].also_conflicts_with, facts[0].conflicting) == ("A", ("B",), ("A", "B"))


def test_an_extraction_naming_one_fact_is_stored_as_it_always_was_and_two_round_trip() -> None:
    one = Extraction("x", [ExtractedFact("f", conflicts_with="A")])
    assert "also_conflicts_with" not in one.as_dict()["facts"][0]
    two = Extraction("x", [ExtractedFact("f", conflicts_with="A", also_conflicts_with=["B"])])
    assert Extraction.from_dict(two.as_dict()).facts[0].conflicting == ("A", "B")
    old = {"extractor_id": "x", "facts": [{"fact": "f", "conflicts_with": "A"}], "preferences": []}
    assert Extraction.from_dict(old).facts[0].conflicting == ("A",)  # events recorded before lists


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def opener(settings: Settings, fake: FakeOpenAI) -> Iterator[Callable[..., LedgerService]]:
    opened: list[LedgerService] = []

    def factory(prompts: str = "combined") -> LedgerService:
        changes: dict[str, Any] = {"openai_api_key": "test", "openai_base_url": fake.url + "/v1"}
        service = open_ledger(attrs.evolve(settings, embedding_model="offline", prompts=prompts, **changes))
        opened.append(service)
        return service

    yield factory
    for service in opened:
        service.close()


def fact(text: str, category: str = "relationship", named: list[str] | None = None, **more: Any) -> dict[str, Any]:
    return {"fact": text, "category": category, "confidence": 0.9, "conflicts_with": named or [], **more}


def test_a_list_conflicts_with_ends_both_facts_a_break_up_retires(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我女朋友叫小美"] = ([fact("用户的女朋友叫小美")], [])
    fake.answers["我和小美异地恋"] = ([fact("用户和小美异地恋")], [])
    fake.answers["我们分手了"] = ([fact("用户已和小美分手", named=["用户的女朋友叫小美", "用户和小美异地恋"])], [])
    fake.relation = "different"  # a judge asked would keep both
    service = opener()
    service.ingest("u", "我女朋友叫小美")
    service.ingest("u", "我和小美异地恋")
    service.ingest("u", "我们分手了")
    assert [f.text for f in service.profile("u").facts] == ["用户已和小美分手"]
    ended = [e for e in service.history("u") if e.to_dict()["event"] == "FactInvalidated"]
    assert len(ended) == 2
    answers = [json.loads(e.to_dict()["raw_answer"]) for e in ended]
    assert all(a["conflicts_with"] == ["用户的女朋友叫小美", "用户和小美异地恋"] for a in answers)


@pytest.mark.parametrize(
    ("said", "answered"),
    [
        ("我同事刚搬去上海了", fact("用户的同事搬去了上海")),  # another person's fact
        ("下个月我要调去上海分公司", fact("用户下个月将调去上海分公司", "work")),  # a settled plan
        ("要是能去上海住就好了", fact("用户住在上海", "location", named=["用户住在青岛"], hypothetical=True)),
    ],
)
def test_another_persons_fact_a_plan_or_a_wish_leaves_the_users_fact_standing(
    opener: Callable[..., LedgerService], fake: FakeOpenAI, said: str, answered: dict[str, Any]
) -> None:
    fake.answers["我住在青岛"] = ([fact("用户住在青岛", "location")], [])
    fake.answers[said] = ([answered], [])
    fake.relation = "update"  # a judge asked would replace it
    service = opener()
    service.ingest("u", "我住在青岛")
    service.ingest("u", said)
    assert "用户住在青岛" in [f.text for f in service.profile("u").facts]


def preference(text: str) -> dict[str, Any]:
    return {"preference": text, "category": "communication_style", "strength": 0.8, "evidence": "e"}


@pytest.mark.parametrize(("prompts", "asked"), [("combined", "判断这两条偏好"), ("seed", "判断这两个事实是否冲突")])
def test_preferences_are_judged_with_their_own_check_where_the_set_has_one(
    opener: Callable[..., LedgerService], fake: FakeOpenAI, prompts: str, asked: str
) -> None:
    fake.answers["回答详细点"] = ([], [preference("偏好详细的回复")])
    fake.answers["回答详细一些吧"] = ([], [preference("偏好详细一些的回复")])
    service = opener(prompts)
    service.ingest("u", "回答详细点")
    service.ingest("u", "回答详细一些吧")
    checks = [p for p in map(FakeOpenAI.prompt, fake.chat_requests()) if "判断这两" in p]
    assert checks and all(asked in p for p in checks)


def test_a_judge_that_calls_two_alike_preferences_different_keeps_both(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    """The preference check's ``different`` is heard however alike the words: a formal style for
    writing and a casual one for chatting are two preferences, not one said again."""
    fake.answers["写材料的时候正式一点"] = ([], [preference("偏好正式的回复风格（用于写材料）")])
    fake.answers["平时聊天随意点"] = ([], [preference("偏好随意的回复风格（用于平时聊天）")])
    fake.relation = "different"
    service = opener()
    service.ingest("u", "写材料的时候正式一点")
    outcome = service.ingest("u", "平时聊天随意点")
    assert [o.action for o in outcome.items] == ["observed"]
    texts = sorted(p.text for p in service.profile("u").preferences)
    assert texts == ["偏好正式的回复风格（用于写材料）", "偏好随意的回复风格（用于平时聊天）"]


def test_said_earlier_a_preference_the_judge_calls_different_is_not_absorbed_by_a_later_alike_one(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["写材料的时候正式一点"] = ([], [preference("偏好正式的回复风格（用于写材料）")])
    fake.answers["平时聊天随意点"] = ([], [preference("偏好随意的回复风格（用于平时聊天）")])
    fake.relation = "different"
    service = opener()
    service.ingest("u", "写材料的时候正式一点", timestamp=datetime(2026, 3, 2, tzinfo=UTC))
    service.ingest("u", "平时聊天随意点", timestamp=datetime(2026, 3, 1, tzinfo=UTC))  # said before it
    texts = sorted(p.text for p in service.profile("u").preferences)
    assert texts == ["偏好正式的回复风格（用于写材料）", "偏好随意的回复风格（用于平时聊天）"]


# ---- retracted: taken back with nothing in its place ---------------------------------------------


def test_the_prompt_asks_for_what_holds_now_and_a_retracted_list() -> None:
    assert "retracted" in rule(5) and "不写否定句" in rule(5)
    assert "现在的状态" in rule(6) and "不提已结束的旧内容" in rule(6) and "目前单身" in rule(6)
    assert COMBINED.json_schema is not None
    assert "retracted" in COMBINED.json_schema["required"]
    assert COMBINED.json_schema["properties"]["retracted"]["items"] == {"type": "string"}


@pytest.mark.parametrize(
    ("value", "read"),
    [(None, []), ("用户住在青岛", ["用户住在青岛"]), (["A", "", "A", {"fact": "B"}], ["A", "B"]), ([], [])],
)
def test_retracted_is_read_absent_null_a_text_or_a_list(value: Any, read: list[str]) -> None:
    body: dict[str, Any] = {"facts": [], "preferences": []}
    if value is not None:
        body["retracted"] = value
    assert parse_combined_answer(json.dumps(body)).retracted == read
    assert parse_combined_answer(json.dumps({**body, "retracted": None})).retracted == []


def test_an_extraction_without_retracted_loads_and_one_with_it_round_trips() -> None:
    old = {"extractor_id": "x", "prompt_id": "p", "facts": [], "preferences": [], "raw_output": "", "signals": {}}
    assert Extraction.from_dict(old).retracted == ()
    assert "retracted" not in Extraction.from_dict(old).as_dict()  # stored as it always was
    said = Extraction("x", retracted=["用户下周去大理"])
    assert Extraction.from_dict(said.as_dict()).retracted == ("用户下周去大理",)


def a_trip_planned_then_called_off(fake: FakeOpenAI) -> None:
    """The model's answers for a home, a trip planned, and the trip called off (retracted)."""
    fake.answers["我下周去大理玩"] = ([fact("用户下周去大理旅游", "other")], [])
    fake.answers["我住在青岛"] = ([fact("用户住在青岛", "location")], [])
    fake.retracted["大理不去了"] = ["用户下周去大理旅游"]


def ended(service: LedgerService) -> list[dict[str, Any]]:
    return [e.to_dict() for e in service.history("u") if e.to_dict()["event"] == "FactInvalidated"]


def test_a_cancelled_plan_leaves_no_active_fact_about_it(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    a_trip_planned_then_called_off(fake)
    service = opener()
    service.ingest("u", "我住在青岛")
    service.ingest("u", "我下周去大理玩")
    result = service.ingest("u", "大理不去了")
    assert [(o.action, o.text) for o in result.items] == [("retracted", "用户下周去大理旅游")]
    assert [f.text for f in service.profile("u").facts] == ["用户住在青岛"]
    [retraction] = ended(service)
    assert retraction["relation"] == "retracted"
    assert json.loads(retraction["raw_answer"]) == {"retracted": ["用户下周去大理旅游"]}
    assert retraction["judge_id"].startswith("openai:") and retraction["judge_prompt_id"].startswith("combined@")
    why = service.why("u", retraction["fact_id"]).to_dict()
    assert "retracted" in json.dumps(why, ensure_ascii=False)


def test_a_take_back_with_nothing_new_ends_the_fact_and_replays_without_a_call(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我钢琴考过十级"] = ([fact("用户钢琴考过十级", "work")], [])
    fake.retracted["开玩笑的，没考过"] = ["用户钢琴考过十级"]
    service = opener()
    service.ingest("u", "我钢琴考过十级")
    service.ingest("u", "开玩笑的，没考过")
    assert service.profile("u").facts == ()
    calls = len(fake.chat_requests())
    service.rebuild_read_model()
    assert service.profile("u").facts == () and len(fake.chat_requests()) == calls


def test_a_retracted_text_naming_no_known_fact_ends_nothing(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我住在青岛"] = ([fact("用户住在青岛", "location")], [])
    fake.retracted["算了不说了"] = ["用户住在烟台"]
    service = opener()
    service.ingest("u", "我住在青岛")
    result = service.ingest("u", "算了不说了")
    assert result.items == () and [f.text for f in service.profile("u").facts] == ["用户住在青岛"]
    assert ended(service) == []


def test_said_before_later_statements_a_retraction_ends_the_fact_at_its_own_time(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    a_trip_planned_then_called_off(fake)
    service = opener()
    service.ingest("u", "我下周去大理玩", timestamp=datetime(2026, 3, 1, tzinfo=UTC))
    service.ingest("u", "我住在青岛", timestamp=datetime(2026, 3, 5, tzinfo=UTC))
    service.ingest("u", "大理不去了", timestamp=datetime(2026, 3, 3, tzinfo=UTC))  # recorded late
    assert [f.text for f in service.profile("u").facts] == ["用户住在青岛"]
    [retraction] = ended(service)
    assert retraction["relation"] == "retracted" and retraction["at"].startswith("2026-03-03")


# ---- preferences: the known ones shown, the replaced ones named ----------------------------------


def pref_replacing(text: str, category: str, replaces: list[str]) -> dict[str, Any]:
    return {"preference": text, "category": category, "strength": 0.8, "evidence": "e", "replaces": replaces}


def test_the_prompt_shows_known_preferences_and_asks_which_are_replaced(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    assert "{existing_preferences}" in RULES and "replaces" in RULES.split("偏好（preferences）规则")[1]
    assert COMBINED.json_schema is not None
    items = COMBINED.json_schema["properties"]["preferences"]["items"]
    assert "replaces" in items["required"] and items["properties"]["replaces"]["items"] == {"type": "string"}
    fake.answers["回复里多用表情吧"] = ([], [preference("偏好回复里多用表情符号")])
    service = opener()
    service.ingest("u", "回复里多用表情吧")
    service.ingest("u", "我住在青岛")
    last = FakeOpenAI.prompt(fake.chat_requests()[-1])
    assert "已知偏好：\n- 偏好回复里多用表情符号" in last


@pytest.mark.parametrize("said_earlier", [False, True])
def test_a_preference_the_extractor_says_replaces_a_known_one_supersedes_it(
    opener: Callable[..., LedgerService], fake: FakeOpenAI, said_earlier: bool
) -> None:
    """However unlike in words (a judge asked would call them different), and of another category."""
    fake.answers["回复里多用表情吧"] = ([], [preference("偏好回复里多用表情符号")])
    fake.answers["以后别加表情了，纯文字就好"] = (
        [],
        [pref_replacing("偏好纯文字的回复", "format", ["偏好回复里多用表情符号"])],
    )
    fake.relation = "different"
    service = opener()
    first, second = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)
    service.ingest("u", "回复里多用表情吧", timestamp=first)
    if said_earlier:  # something later was said already: the change is decided in said order
        service.ingest("u", "我住在青岛", timestamp=datetime(2026, 3, 9, tzinfo=UTC))
    result = service.ingest("u", "以后别加表情了，纯文字就好", timestamp=second)
    assert [p.text for p in service.profile("u").preferences] == ["偏好纯文字的回复"]
    assert result.items[0].action == "superseded"
    [ended_pref] = [e.to_dict() for e in service.history("u") if e.to_dict()["event"] == "PreferenceSuperseded"]
    assert json.loads(ended_pref["raw_answer"])["replaces"] == ["偏好回复里多用表情符号"]


def test_a_replaces_naming_no_known_preference_replaces_nothing_and_old_answers_name_none(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["回复里多用表情吧"] = ([], [preference("偏好回复里多用表情符号")])
    fake.answers["周末别找我"] = ([], [pref_replacing("偏好周末不被打扰", "time", ["偏好早上联系"])])
    fake.relation = "different"
    service = opener()
    service.ingest("u", "回复里多用表情吧")
    service.ingest("u", "周末别找我")
    assert sorted(p.text for p in service.profile("u").preferences) == ["偏好周末不被打扰", "偏好回复里多用表情符号"]
    old = {"extractor_id": "x", "preferences": [{"preference": "p", "category": "format"}]}
    assert Extraction.from_dict(old).preferences[0].replaces == ()
    assert "replaces" not in Extraction.from_dict(old).preferences[0].as_dict()


def test_a_rules_file_over_the_llm_extractor_keeps_showing_it_the_known_preferences(
    fake: FakeOpenAI, tmp_path: Path
) -> None:
    rules = tmp_path / "rules.toml"
    rules.write_text('name = "r"\n[[drop]]\nkind = "fact"\ncategory = "relationship"\n', encoding="utf-8")
    client = LLMClient(api_key="test", base_url=fake.url + "/v1")
    wrapped = OverriddenExtractor(LLMExtractor(client, "m", COMBINED), RuleOverrides(rules))
    assert isinstance(wrapped, ReadsKnownPreferences)
    wrapped.extract_knowing_preferences("我住在青岛", (), (), ["偏好纯文字的回复"])
    assert "已知偏好：\n- 偏好纯文字的回复" in FakeOpenAI.prompt(fake.chat_requests()[-1])
