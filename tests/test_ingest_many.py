"""``LedgerService.ingest_many``: groups of messages in one save each, deciding exactly as
``ingest`` one after another does (ADR 0022)."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.errors import InvalidInput
from factledger.application.ingestion import Incoming
from factledger.application.results import IngestResult
from factledger.application.service import LedgerService

# A conversation in which later messages change what earlier ones recorded, so a group that
# decided a message on a stale memory would end with a different profile.
SAID = [
    "我住在杭州",
    "我在阿里巴巴做产品经理",
    "我喜欢喝咖啡",
    "我搬到上海了",
    "我养了一只猫，叫咪咪",
    "说错了，猫叫豆豆",
    "我不喜欢喝咖啡了，现在只喝茶",
    "我跳槽去了腾讯",
    "谢谢",
    "我女儿今年上小学",
    "如果明年去北京就好了",
    "我今年32岁",
    "我今年33岁了",
]


def state(service: LedgerService, user: str) -> dict[str, Any]:
    """What a user's memory ends as: active items, and every event in order (minus ids and times)."""
    profile = service.profile(user).to_dict()
    kinds = [e.event for e in service.history(user)]
    return {
        "facts": sorted(f["fact"] for group in profile["facts"].values() for f in group),
        "preferences": sorted(
            (p["preference"], round(p["strength"], 6)) for group in profile["preferences"].values() for p in group
        ),
        "events": kinds,
    }


def one_by_one(service: LedgerService, messages: list[Incoming]) -> list[IngestResult]:
    return [
        service.ingest(m.user_id, m.message, m.session_id, m.context, message_id=m.message_id, timestamp=m.timestamp)
        for m in messages
    ]


def results(outcomes: list[Any]) -> list[IngestResult]:
    assert all(isinstance(o, IngestResult) for o in outcomes), outcomes
    return outcomes


def test_a_group_decides_each_message_on_what_the_earlier_ones_recorded(service: LedgerService) -> None:
    service.bulk.group_messages = 5  # several groups, and users spread across them
    users = ["ann", "bob", "cy"]
    messages = [Incoming(f"bulk-{users[n % 3]}", text) for n, text in enumerate(SAID * 2)]
    outcomes = results(service.ingest_many(messages))
    alone = one_by_one(service, [Incoming(m.user_id.replace("bulk", "alone"), m.message) for m in messages])
    for user in users:
        assert state(service, f"bulk-{user}") == state(service, f"alone-{user}")
    assert [(o.status, o.facts, o.preferences) for o in outcomes] == [(a.status, a.facts, a.preferences) for a in alone]
    assert [[i.action for i in o.items] for o in outcomes] == [[i.action for i in a.items] for a in alone]
    assert "用户住在上海" in state(service, "bulk-ann")["facts"] + state(service, "bulk-bob")["facts"]


def test_positions_are_those_of_each_messages_last_event(service: LedgerService) -> None:
    outcomes = results(
        service.ingest_many([Incoming("u", "我住在杭州"), Incoming("v", "我是老师"), Incoming("u", "谢谢")])
    )
    positions = [o.notification_id or 0 for o in outcomes]
    assert min(positions) > 0 and len(set(positions)) == 3
    assert positions[2] > positions[0], "the same user's later message ends later"
    assert service.ledger.head() == max(positions)


def test_a_bad_message_gets_its_error_and_keeps_no_other_out(service: LedgerService) -> None:
    messages = [
        Incoming("u", "我住在杭州"),
        Incoming("", "我是老师"),
        Incoming("u", "x" * (service.limits.message_chars + 1)),
        Incoming("u", "我是老师", context="not a list"),  # type: ignore[arg-type]
        Incoming("u", "我养了一只狗"),
    ]
    outcomes = service.ingest_many(messages)
    assert [type(o).__name__ for o in outcomes] == [
        "IngestResult",
        "InvalidInput",
        "InvalidInput",
        "InvalidInput",
        "IngestResult",
    ]
    assert "user_id" in str(outcomes[1]) and "max_message_chars" in str(outcomes[2]) and "context" in str(outcomes[3])
    assert [e.event for e in service.history("u")].count("MessageIngested") == 2
    assert isinstance(outcomes[1], InvalidInput)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_message_id_seen_before_or_twice_in_one_call_is_recorded_once(service: LedgerService, workers: int) -> None:
    service.bulk.workers = workers
    service.ingest("u", "我住在杭州", message_id="m1")
    messages = [
        Incoming("u", "我住在杭州", message_id="m1"),
        Incoming("u", "我是老师", message_id="m2"),
        Incoming("u", "我是老师", message_id="m2"),
        Incoming("v", "我是老师", message_id="m2"),  # another user's m2 is another message
    ]
    outcomes = results(service.ingest_many(messages))
    assert [o.status for o in outcomes] == ["duplicate", "recorded", "duplicate", "recorded"]
    assert results(service.ingest_many(messages)) and all(
        o.status == "duplicate" for o in results(service.ingest_many(messages))
    )
    ingested = Counter(e.fields["message_id"] for e in service.history("u") if e.event == "MessageIngested")
    assert ingested == Counter({"m1": 1, "m2": 1})
    assert [e.fields["message_id"] for e in service.history("v") if e.event == "MessageIngested"] == ["m2"]


def test_nothing_to_ingest_is_no_error(service: LedgerService) -> None:
    assert service.ingest_many([]) == []


def test_a_user_forgotten_before_the_group_starts_again(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州")
    service.forget("u")
    [outcome] = results(service.ingest_many([Incoming("u", "我是老师")]))
    assert outcome.status == "recorded"
    assert [f.text for f in service.profile("u").facts] == ["用户是老师"]


@pytest.mark.parametrize("backend", ["memory"], indirect=True)
@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    said=st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.sampled_from(SAID)), min_size=1, max_size=14),
    group=st.integers(min_value=1, max_value=6),
    workers=st.integers(min_value=1, max_value=3),
)
def test_in_groups_or_one_by_one_every_memory_ends_the_same(
    open_service: Callable[..., LedgerService], said: list[tuple[str, str]], group: int, workers: int
) -> None:
    service = open_service()
    service.bulk.group_messages = group
    service.bulk.workers = workers  # users on threads (an LLM's setting), users taking turns in the groups
    run = uuid.uuid4().hex[:8]  # hypothesis reuses the fixture's store: fresh users each example
    messages = [Incoming(f"{run}-g-{user}", text) for user, text in said]
    results(service.ingest_many(messages))
    one_by_one(service, [Incoming(m.user_id.replace("-g-", "-s-"), m.message) for m in messages])
    for user in {user for user, _ in said}:
        assert state(service, f"{run}-g-{user}") == state(service, f"{run}-s-{user}")


def test_memories_held_in_this_process_are_brought_up_to_date_in_one_read(
    open_service: Callable[..., LedgerService],
) -> None:
    here, elsewhere = open_service(), open_service()
    for user in ("u", "v", "w"):
        here.ingest(user, "我住在杭州")  # ``here`` now holds all three memories
    elsewhere.ingest("u", "我搬到上海了")
    elsewhere.forget("v")
    elsewhere.ingest("v", "我是老师")  # begun again since
    outcomes = results(
        here.ingest_many(
            [Incoming("u", "我在阿里巴巴工作"), Incoming("v", "我喜欢喝茶"), Incoming("w", "我搬到成都了")]
        )
    )
    assert [o.status for o in outcomes] == ["recorded"] * 3
    assert sorted(f.text for f in here.profile("u").facts) == ["用户住在上海", "用户在阿里巴巴工作"]
    assert "用户住在杭州" not in [f.text for f in here.profile("v").facts], "nothing forgotten came back"
    assert "用户是老师" in [f.text for f in here.profile("v").facts]
    assert [f.text for f in here.profile("w").facts] == ["用户住在成都"]
    assert [e.event for e in here.history("u")].count("MessageIngested") == 3
