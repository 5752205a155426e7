"""Order-independent truth (ADR 0025): what a user said, with the times they said it, gives the
same memory now and at any said time, whatever order the messages are recorded in.

A message said before something the memory already holds is decided against what held when it
was said: it never supersedes a later statement; it enters history in its place, valid from
its said time until the later statement's.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

T0 = datetime(2025, 1, 1, tzinfo=UTC)
CITIES = ["上海", "北京", "广州", "成都"]
COMPANIES = ["华为", "腾讯", "阿里"]
FOODS = ["火锅", "寿司"]
#: statements of the kinds a life is told in: single-valued things of the user and of a relative,
#: likings and their negation, a second slot that coexists, small talk
TEMPLATES = [
    ("我住在{}", CITIES),
    ("我搬到{}了", CITIES),
    ("我在{}工作", COMPANIES),
    ("我女儿在{}上学", CITIES),
    ("我喜欢吃{}", FOODS),
    ("我不喜欢吃{}", FOODS),
    ("I live in {}", ["Boston", "Denver", "Austin"]),
    ("平时喜欢{}的回复", ["简短", "详细"]),
    ("I prefer {} answers", ["short", "detailed"]),
    ("我喜欢用{}写代码", ["Python", "Go"]),
    ("谢谢{}", ["", "你"]),
]

statement = st.sampled_from(TEMPLATES).flatmap(lambda t: st.sampled_from(t[1]).map(t[0].format))
conversation = st.lists(statement, min_size=2, max_size=7).flatmap(
    lambda said: st.tuples(st.just(said), st.permutations(range(len(said))))
)


def said_at(index: int) -> datetime:
    return T0 + timedelta(days=30 * index)


def items(service: LedgerService, user: str, as_of: datetime | None = None) -> dict[str, Any]:
    """What a profile says, independent of item ids (which come from message ids)."""
    profile = service.profile(user, as_of=as_of)
    return {
        "facts": sorted((f.text, f.category) for f in profile.facts),
        "preferences": sorted((p.text, p.category, round(p.strength, 6)) for p in profile.preferences),
    }


def check_any_order_gives_the_said_order_memory(service: LedgerService, said: list[str], order: list[int]) -> None:
    in_order, shuffled = f"o-{uuid.uuid4().hex[:10]}", f"s-{uuid.uuid4().hex[:10]}"
    for index, text in enumerate(said):
        service.ingest(in_order, text, message_id=f"m{index}", timestamp=said_at(index))
    for index in order:
        service.ingest(shuffled, said[index], message_id=f"m{index}", timestamp=said_at(index))
    assert items(service, shuffled) == items(service, in_order), f"{said} recorded in the order {order}"
    for index in range(len(said)):
        for when in (said_at(index), said_at(index) + timedelta(days=1)):
            assert items(service, shuffled, when) == items(service, in_order, when), (
                f"{said} recorded in the order {order}, as of message {index}"
            )


@pytest.fixture
def ledger(settings: Settings) -> LedgerService:
    return open_ledger(settings)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(conversation)
def test_any_recording_order_gives_the_memory_of_the_said_order(
    ledger: LedgerService, backend: str, case: tuple[list[str], list[int]]
) -> None:
    said, order = case
    check_any_order_gives_the_said_order_memory(ledger, said, list(order))


@pytest.mark.parametrize(
    "said, order",
    [
        (["我住在上海", "我搬到北京了", "我搬到广州了"], [2, 0, 1]),
        (["我女儿在北京上学", "我女儿在上海上学"], [1, 0]),
        (["我在华为工作", "我在腾讯工作", "我在华为工作"], [2, 1, 0]),
        (["I live in Boston", "I live in Denver", "谢谢", "I live in Austin"], [3, 1, 2, 0]),
    ],
)
def test_told_cases_recorded_out_of_order(ledger: LedgerService, said: list[str], order: list[int]) -> None:
    check_any_order_gives_the_said_order_memory(ledger, said, order)


def test_a_backdated_message_enters_history_and_never_replaces_a_newer_fact(ledger: LedgerService) -> None:
    ledger.ingest("u", "我搬到上海了", timestamp=datetime(2026, 3, 1, tzinfo=UTC))
    result = ledger.ingest("u", "我搬到北京了", timestamp=datetime(2025, 1, 1, tzinfo=UTC))
    (item,) = result.items
    assert (item.action, item.replaced_by_text) == ("historical", "用户住在上海")
    assert [f.text for f in ledger.profile("u").facts] == ["用户住在上海"]
    assert [f.text for f in ledger.profile("u", as_of=datetime(2025, 6, 1, tzinfo=UTC)).facts] == ["用户住在北京"]
    life = ledger.why("u", item.id)
    assert life.invalidated is not None and life.invalidated.at == datetime(2026, 3, 1, tzinfo=UTC)
    assert life.invalidated.superseded_by is not None and life.invalidated.superseded_by.text == "用户住在上海"


def test_a_message_said_between_two_moves_shortens_the_first(ledger: LedgerService) -> None:
    ledger.ingest("u", "我住在上海", timestamp=datetime(2025, 1, 1, tzinfo=UTC))
    ledger.ingest("u", "我搬到广州了", timestamp=datetime(2025, 12, 1, tzinfo=UTC))
    between = ledger.ingest("u", "我搬到北京了", timestamp=datetime(2025, 6, 1, tzinfo=UTC))
    (item,) = between.items
    assert (item.superseded_text, item.replaced_by_text) == ("用户住在上海", "用户住在广州")
    entries = ledger.history("u", kind="fact").entries
    shanghai = next(e.fields["fact_id"] for e in entries if e.fields.get("text") == "用户住在上海")
    life = ledger.why("u", shanghai)
    assert life.invalidated is not None and life.invalidated.superseded_by is not None
    assert (life.invalidated.at, life.invalidated.superseded_by.text) == (
        datetime(2025, 6, 1, tzinfo=UTC),
        "用户住在北京",
    )


@pytest.mark.parametrize(
    "said", [["我喜欢看科幻电影", "我现在只看纪录片了"], ["我喜欢用Python写代码", "我现在改用Go写代码了"]]
)
def test_a_liking_said_earlier_is_ended_by_a_later_fact_that_says_the_taste_changed(
    ledger: LedgerService, said: list[str]
) -> None:
    check_any_order_gives_the_said_order_memory(ledger, said, [1, 0])
    ledger.ingest("u", said[1], timestamp=datetime(2026, 3, 1, tzinfo=UTC))
    (liking,) = ledger.ingest("u", said[0], timestamp=datetime(2025, 1, 1, tzinfo=UTC)).items
    (fact,) = ledger.profile("u").facts
    assert (liking.kind, liking.action, liking.replaced_by_text) == ("preference", "historical", fact.text)
    then = ledger.profile("u", as_of=datetime(2025, 6, 1, tzinfo=UTC))
    assert [p.text for p in then.preferences] == [liking.text] and not then.facts
    assert not ledger.profile("u").preferences
