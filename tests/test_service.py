"""The application service on the embedded PostgreSQL: the spec's flow end to end."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from scripted import ExplodingJudge, ScriptedExtractor

from factledger.application.service import InvalidInput, LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

EXAMPLE = "我在杭州工作，老板姓张，平时喜欢简短的回复"
CONTEXT = [{"role": "assistant", "content": "你好，有什么可以帮你的？"}]


def test_the_spec_worked_example(service: LedgerService) -> None:
    result = service.ingest("user_123", EXAMPLE, session_id="session_456", context=CONTEXT)
    assert result.to_dict() | {"items": None, "message_id": None} == {
        "facts_extracted": 2,
        "preferences_extracted": 1,
        "facts": ["用户在杭州工作", "用户的老板姓张"],
        "preferences": ["偏好简短的回复风格"],
        "user_id": "user_123",
        "message_id": None,
        "extractor_id": service.extractor.extractor_id,
        "status": "recorded",
        "redacted": {},
        "items": None,
    }
    assert [i.action for i in result.items] == ["observed", "observed", "observed"]
    profile = service.profile("user_123").to_dict()
    assert {k: [f["fact"] for f in v] for k, v in profile["facts"].items()} == {
        "location": ["用户在杭州工作"],
        "relationship": ["用户的老板姓张"],
    }
    assert {k: [p["preference"] for p in v] for k, v in profile["preferences"].items()} == {
        "communication_style": ["偏好简短的回复风格"],
    }
    assert profile["facts_count"] == 2 and profile["preferences_count"] == 1
    assert profile["facts"]["location"][0]["confidence"] == pytest.approx(0.9)
    assert profile["facts"]["location"][0]["times_mentioned"] == 1
    assert profile["preferences"]["communication_style"][0]["strength"] == pytest.approx(0.8)


def test_same_statement_twice_is_confirmed_even_when_the_projection_lags(settings: Settings) -> None:
    import attrs

    lagging = open_ledger(attrs.evolve(settings, inline_projection=False))
    try:
        first = lagging.ingest("u", "我住在杭州")
        second = lagging.ingest("u", "我住在杭州")
        assert lagging.read_model_status().lag > 0, "the read model must really lag for this test"
        assert first.items[0].action == "observed"
        assert second.items[0].action == "confirmed"
        assert second.items[0].id == first.items[0].id
        lagging.catch_up()
        facts = lagging.profile("u").to_dict()["facts"]["location"]
        assert [(f["fact"], f["times_mentioned"]) for f in facts] == [("用户住在杭州", 2)]
    finally:
        lagging.close()


def test_a_move_supersedes_the_old_residence_with_full_provenance(service: LedgerService) -> None:
    old = service.ingest("u", "我住在杭州", session_id="s1").items[0]
    moved = service.ingest("u", "我搬到上海了", session_id="s2")
    item = moved.items[0]
    assert (item.action, item.text, item.superseded_id) == ("superseded", "用户住在上海", old.id)
    assert item.relation == "update"
    profile = service.profile("u").to_dict()
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户住在上海"]
    invalidated = [e for e in [e.to_dict() for e in service.history("u")] if e["event"] == "FactInvalidated"]
    assert len(invalidated) == 1
    inv = invalidated[0]
    assert inv["fact_id"] == old.id and inv["superseded_by"] == item.id
    assert inv["relation"] == "update" and inv["message_id"] == moved.message_id
    assert inv["judge_id"] == service.judge.judge_id and inv["raw_answer"]
    assert inv["similarity"] >= 0.75
    # The read model keeps the invalidated row, inactive, with the reason.
    rows = {r["content"]: r for r in service.read_model.all_rows()}
    assert rows["用户住在杭州"]["is_active"] is False
    assert rows["用户住在杭州"]["metadata"]["superseded_by"] == item.id
    assert rows["用户住在杭州"]["metadata"]["invalidation_reason"] == "replaced-by-new-fact"  # a code, not words


def test_preferences_are_reinforced_by_the_spec_formula(open_service: Callable[..., LedgerService]) -> None:
    extractor = ScriptedExtractor(
        {
            "a": ([], [("偏好简短的回复风格", "communication_style", 0.8, "e1")]),
            "b": ([], [("偏好简短的回复风格", "communication_style", 1.0, "e2")]),
            "c": ([], [("偏好简短的回复风格", "format", 1.0, "e3")]),
        }
    )
    service = open_service(extractor=extractor)
    first = service.ingest("u", "a").items[0]
    second = service.ingest("u", "b").items[0]
    assert second.action == "reinforced" and second.id == first.id
    assert second.strength == pytest.approx((0.8 * 1 + 1.0 * 1.5) / 2.5, abs=1e-6)
    other_category = service.ingest("u", "c").items[0]
    assert other_category.action == "observed", "a similar preference of another category is a new one"
    prefs = service.profile("u").to_dict()["preferences"]
    assert prefs["communication_style"][0]["strength"] == pytest.approx(0.92, abs=1e-6)
    assert len(prefs["format"]) == 1


def test_a_failed_decision_records_nothing(open_service: Callable[..., LedgerService]) -> None:
    extractor = ScriptedExtractor(
        {
            "first": ([("用户住在杭州", "location", 0.9)], []),
            "second": ([("用户有猫", "other", 0.9), ("用户住在杭州", "location", 0.9)], []),
        }
    )
    healthy = open_service(extractor=extractor)
    healthy.ingest("u", "first")
    before = [e.to_dict() for e in healthy.history("u")]
    broken = open_service(extractor=extractor, judge=ExplodingJudge())
    with pytest.raises(RuntimeError, match="judge unavailable"):
        broken.ingest("u", "second")
    assert [e.to_dict() for e in healthy.history("u")] == before, "a failed ingest must leave no event behind"
    assert healthy.read_model_status().lag == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"user_id": "", "message": "hi"}, "user_id must not be empty"),
        ({"user_id": "u", "message": "   "}, "message must not be empty"),
        ({"user_id": "u", "message": 3}, "message must be a string"),
        ({"user_id": "u", "message": "hi", "context": [{"role": "user"}]}, r"context\[0\].*content"),
        ({"user_id": "u", "message": "hi", "context": "text"}, "context must be a list"),
        ({"user_id": "u", "message": "hi", "session_id": 5}, "session_id must be a string"),
    ],
)
def test_bad_input_is_refused_with_a_clear_error(service: LedgerService, kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        service.ingest(**kwargs)
    assert [e.to_dict() for e in service.history("u")] == []


def test_recall_filters_by_type_similarity_and_top_k(service: LedgerService) -> None:
    service.ingest("u", EXAMPLE)
    service.ingest("u", "我住在杭州")
    hits = service.recall("u", "用户住在杭州", top_k=2, min_similarity=0.0)
    assert len(hits) == 2
    assert hits[0].record.content == "用户住在杭州" and hits[0].similarity == pytest.approx(1.0, abs=1e-4)
    assert hits[0].similarity >= hits[1].similarity
    prefs = service.recall("u", "回复风格", types=["preference"])
    assert {h.record.type for h in prefs} == {"preference"}
    strict = service.recall("u", "用户住在杭州", min_similarity=0.99)
    assert [h.record.content for h in strict] == ["用户住在杭州"]
    assert service.recall("someone-else", "杭州") == []
    # By default only what is related: the embedder's threshold, not every row of the user;
    # and what the user said that shares the question's words (ADR 0030), after the fact.
    assert [h.record.content for h in service.recall("u", "住在哪里")] == ["用户住在杭州", "我住在杭州"]
    memories = service.recall("u", "住在哪里", types=["fact", "preference"])
    assert [h.record.content for h in memories] == ["用户住在杭州"]
    with pytest.raises(InvalidInput, match="unknown memory type"):
        service.recall("u", "x", types=["facts"])


def test_history_keeps_message_time_context_and_extraction(service: LedgerService) -> None:
    at = datetime(2025, 5, 4, 3, 2, 1, tzinfo=UTC)
    service.ingest("u", EXAMPLE, session_id="s", context=CONTEXT, timestamp=at)
    history = [e.to_dict() for e in service.history("u")]
    kinds = [e["event"] for e in history]
    assert kinds[:3] == ["Started", "MessageIngested", "ExtractionRecorded"]
    message = history[1]
    assert message["at"] == at.isoformat() and message["context"] == CONTEXT and message["session_id"] == "s"
    extraction = history[2]["extraction"]
    assert extraction["extractor_id"] == service.extractor.extractor_id
    assert [f["fact"] for f in extraction["facts"]] == ["用户在杭州工作", "用户的老板姓张"]
    observed = [e for e in history if e["event"] == "FactObserved"]
    assert all(e["at"] == at.isoformat() for e in observed)


def test_snapshots_keep_a_long_history_loadable(open_service: Callable[..., LedgerService]) -> None:
    script = {f"m{i}": ([(f"用户的第{i}个爱好是编号{i}", "habit", 0.7)], []) for i in range(30)}
    service = open_service(extractor=ScriptedExtractor(script), snapshot_interval=50)
    for i in range(30):
        service.ingest("u", f"m{i}")
    snapshots = list(service.ledger.snapshots.get(service.ledger.find_memory("u").id))  # type: ignore[union-attr]
    assert snapshots, "a snapshot is taken every 50 events"
    fresh = open_service(extractor=ScriptedExtractor(script))
    memory = fresh.ledger.find_memory("u")
    assert memory is not None and len(memory.active_facts()) == 30


@pytest.mark.pg_only  # snapshots are pruned by the PostgreSQL recorder
def test_only_the_latest_snapshots_are_kept_and_older_versions_still_load(
    open_service: Callable[..., LedgerService],
) -> None:
    script = {f"m{i}": ([(f"用户的第{i}个爱好是编号{i}", "habit", 0.7)], []) for i in range(60)}
    service = open_service(extractor=ScriptedExtractor(script), snapshot_interval=50)
    for i in range(60):  # 3 events a message and Started: 181 events, a snapshot every 50
        service.ingest("u", f"m{i}")
    memory = service.ledger.find_memory("u")
    assert memory is not None
    versions = [s.originator_version for s in service.ledger.snapshots.get(memory.id)]  # type: ignore[union-attr]
    assert versions == [100, 151], "older snapshots are pruned (each taken by the save that crossed an interval)"
    early = service.ledger.memory_at("u", 60)  # before every kept snapshot: rebuilt from the events
    assert (
        early.version == 60 and len(early.active_facts()) == 19
    )  # Started, 19 whole messages, the 20th without its fact yet


def _ingest_many(settings: Settings, count: int) -> None:
    service = open_ledger(settings)
    try:
        for _ in range(count):
            service.ingest("shared", "我住在杭州")
    finally:
        service.close()


@pytest.mark.pg_only  # other processes share a database, not a memory
def test_concurrent_processes_never_duplicate_a_fact(settings: Settings, service: LedgerService) -> None:
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_ingest_many, args=(settings, 5)) for _ in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    service.catch_up()
    memory = service.ledger.find_memory("shared")
    assert memory is not None
    assert memory.messages_ingested == 15
    facts = memory.active_facts()
    assert [(f.text, f.times_mentioned) for f in facts] == [("用户住在杭州", 15)]
    rows = [r for r in service.read_model.all_rows() if r["user_id"] == "shared" and r["type"] != "message"]
    assert len(rows) == 1 and rows[0]["metadata"]["times_mentioned"] == 15


def test_a_failed_extraction_is_recorded_and_retried_after_later_messages(
    open_service: Callable[..., LedgerService],
) -> None:
    from scripted import FlakyExtractor

    extractor = FlakyExtractor(
        {
            "住": ([("用户住在杭州", "location", 0.9)], [("偏好简短的回复风格", "communication_style", 0.8, "e")]),
            "车": ([("用户有车", "other", 0.9)], []),
        },
        failing={"住"},
    )
    service = open_service(extractor=extractor)
    failed = service.ingest("u", "住")
    assert failed.status == "extraction_failed" and failed.items == ()
    service.ingest("u", "车")  # a later message: the failed one is no longer the latest
    [event] = [e for e in [e.to_dict() for e in service.history("u")] if e["event"] == "ExtractionFailed"]
    assert (event["message_id"], event["raw_output"]) == (failed.message_id, "<html>502</html>")
    extractor.failing.clear()
    [retried] = service.retry_failed()
    assert retried.status == "recorded" and retried.message_id == failed.message_id
    assert [i.action for i in retried.items] == ["observed", "observed"]
    profile = service.profile("u").to_dict()
    assert sorted(f["fact"] for facts in profile["facts"].values() for f in facts) == sorted(
        ["用户有车", "用户住在杭州"]
    )
    assert service.retry_failed() == [], "nothing is left to retry"
    observed = [
        e
        for e in [e.to_dict() for e in service.history("u")]
        if e["event"] == "FactObserved" and e["text"] == "用户住在杭州"
    ]
    assert observed[0]["message_id"] == failed.message_id, "decisions refer to the original message"


def test_a_change_the_judge_cannot_see_is_the_extractors_verdict(service: LedgerService) -> None:
    """ADR 0010 addendum 11: '调到门店' shares no slot with '在仓库做分拣'; the offline extractor
    read the change in the message, names the fact, and its word is the recorded verdict."""
    old = service.ingest("u", "我在仓库做分拣", session_id="s1").items[0]
    moved = service.ingest("u", "这个月又调到门店了，站一天腿都麻了", session_id="s2")
    item = next(i for i in moved.items if "门店" in i.text)
    assert service.judge.judge(old.text, item.text).relation.value == "different"
    assert (item.action, item.superseded_id, item.relation) == ("superseded", old.id, "update")
    inv = next(e for e in [e.to_dict() for e in service.history("u")] if e["event"] == "FactInvalidated")
    assert inv["fact_id"] == old.id and inv["superseded_by"] == item.id
    assert inv["judge_id"] == service.extractor.extractor_id and old.text in inv["raw_answer"]
