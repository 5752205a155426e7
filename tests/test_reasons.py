"""Reasons are stored as codes and shown in the user's language (issue 28): a new event records
``reason_code`` (and a person's words beside it), an event an earlier version wrote with a Chinese
sentence is read back as its code, and ``why`` (library, HTTP, MCP, CLI, console) renders it in the
language the user's memories are in."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

import pytest
from eventsourcing.persistence import StoredEvent

from factledger.application.audit import explain
from factledger.application.ledger import MemoryLedger
from factledger.application.service import LedgerService
from factledger.domain import DomainError
from factledger.domain.memory import UserMemory, project_memory
from factledger.domain.reasons import REASON_CODES, entry_reason, reason_of_literal, render_reason
from factledger.domain.values import Verdict
from factledger.infrastructure.config import Settings

FIXTURES = Path(__file__).parent / "fixtures"
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def stored_events(fixture: str) -> list[object]:
    ledger = MemoryLedger(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    rows = [json.loads(line) for line in (FIXTURES / fixture).read_text(encoding="utf-8").splitlines()]
    return [
        ledger.mapper.to_domain_event(
            StoredEvent(UUID(r["originator_id"]), r["originator_version"], r["topic"], r["state"].encode("utf-8"))
        )
        for r in rows
        if r["table"] == "factledger_events"
    ]


@pytest.mark.parametrize(
    ("literal", "manual", "code", "kept"),
    [
        ("被新事实替代: 用户住在上海", False, "replaced-by-new-fact", None),
        ("被新偏好替代: 偏好详细的回复风格", False, "replaced-by-new-preference", None),
        ("由人工更正替代: 用户住在北京", True, "replaced-by-correction", None),
        ("被后来的陈述替代: 用户住在上海", False, "replaced-by-later-statement", None),
        ("被后来的陈述替代", False, "replaced-by-later-statement", None),
        ("用户收回或取消: 用户下周要去北京出差", False, "retracted-by-user", None),
        ("先前已说过: 用户住在上海", False, "said-before", None),
        ("用户说不对", True, "manual", "用户说不对"),
        ("wrong: they moved", True, "manual", "wrong: they moved"),
        ("the user changed their mind", False, "other", "the user changed their mind"),
    ],
)
def test_every_sentence_an_earlier_version_wrote_reads_back_as_its_code(
    literal: str, manual: bool, code: str, kept: str | None
) -> None:
    assert reason_of_literal(literal, manual=manual) == (code, kept)


def test_every_code_has_words_in_english_and_chinese() -> None:
    for code in REASON_CODES:
        chinese, english = render_reason(code, "zh"), render_reason(code, "en")
        assert chinese and english and chinese != english
        assert english.isascii() and not chinese.isascii()
    assert render_reason("replaced-by-new-fact", "zh", subject="用户住在上海") == "被新事实替代: 用户住在上海"
    assert render_reason("manual", "en", note="用户说不对") == "用户说不对", "a person's words are shown as said"


def test_events_of_the_previous_versions_load_with_codes_and_keep_free_words() -> None:
    """``events_v3.jsonl``: FactInvalidated at version 2 and PreferenceSuperseded at 1."""
    events = stored_events("events_v3.jsonl")
    ended = [e for e in events if isinstance(e, (UserMemory.FactInvalidated, UserMemory.PreferenceSuperseded))]
    assert [(type(e).__name__, e.reason_code, e.reason) for e in ended] == [
        ("FactInvalidated", "replaced-by-new-fact", None),
        ("PreferenceSuperseded", "replaced-by-new-preference", None),
        ("FactInvalidated", "replaced-by-new-fact", None),
        ("FactInvalidated", "manual", "用户说不对"),
        ("FactInvalidated", "manual", "moved again"),
        ("PreferenceSuperseded", "other", "the user changed their mind"),
    ]
    assert project_memory(events) is not None


def test_version_1_invalidations_are_upcast_through_to_codes() -> None:
    events = stored_events("events_v1.jsonl")
    ended = [e for e in events if isinstance(e, UserMemory.FactInvalidated)]
    assert {(e.relation, e.reason_code) for e in ended} >= {("update", "replaced-by-new-fact")}
    assert all(e.reason_code in REASON_CODES for e in ended)
    manual = [e for e in ended if e.reason_code == "manual"]
    assert manual and all(e.reason for e in manual), "an operator's words are kept"


def test_a_chinese_users_why_reads_as_it_always_did_from_old_events() -> None:
    events = stored_events("events_v3.jsonl")
    first = next(e for e in events if isinstance(e, UserMemory.FactInvalidated))
    invalidated = explain(events, first.fact_id).to_dict()["invalidated"]
    assert (invalidated["reason"], invalidated["reason_code"]) == ("被新事实替代: 用户住在上海", "replaced-by-new-fact")


def test_a_new_event_records_a_code_and_a_person_s_words_beside_it() -> None:
    memory = UserMemory.start("u")
    memory.ingest_message("m1", "I live in Boston", T0)
    memory.observe_fact("f1", "The user lives in Boston", "location", 0.9, "m1", T0, "x")
    memory.observe_fact("f2", "The user lives in Seattle", "location", 0.9, "m1", T0, "x")
    memory.invalidate_fact("f1", "update", "replaced-by-new-fact", T0, superseded_by="f2", message_id="m1")
    memory.invalidate_fact("f2", "manual", "manual", T0, note="they never lived there")
    first, second = memory.pending_events[-2:]
    assert (first.reason_code, first.reason) == ("replaced-by-new-fact", None)  # type: ignore[attr-defined]
    assert (second.reason_code, second.reason) == ("manual", "they never lived there")  # type: ignore[attr-defined]
    stored = MemoryLedger(env={"PERSISTENCE_MODULE": "eventsourcing.popo"}).mapper.to_stored_event(first)
    assert b'"reason_code":"replaced-by-new-fact"' in stored.state and "替代".encode() not in stored.state


def test_a_code_the_domain_does_not_know_or_a_manual_one_without_words_is_refused() -> None:
    memory = UserMemory.start("u")
    memory.ingest_message("m1", "我住在杭州", T0)
    memory.observe_fact("f1", "用户住在杭州", "location", 0.9, "m1", T0, "x")
    memory.observe_preference("p1", "偏好简短的回复", "communication_style", 0.8, "m1", T0, "x")
    pending = len(memory.pending_events)
    with pytest.raises(DomainError, match="reason code must be one of"):
        memory.invalidate_fact("f1", "update", "被新事实替代: 用户住在上海", T0)  # type: ignore[arg-type]
    with pytest.raises(DomainError, match="needs a reason"):
        memory.invalidate_fact("f1", "manual", "manual", T0, note=" ")
    with pytest.raises(DomainError, match="reason code"):
        memory.supersede_preference("p1", "f1", "moved", "m1", T0, Verdict("j", 1.0))  # type: ignore[arg-type]
    assert len(memory.pending_events) == pending


def test_a_history_entry_s_reason_is_rendered_naming_the_item_it_is_about() -> None:
    fields = {"fact_id": "a", "superseded_by": "b", "reason_code": "replaced-by-new-fact", "reason": None}
    texts = {"a": "The user lives in Boston", "b": "The user lives in Seattle"}
    assert entry_reason(fields, "en", texts) == "Replaced by a newer fact: The user lives in Seattle"
    retracted = {"fact_id": "a", "superseded_by": None, "reason_code": "retracted-by-user", "reason": None}
    assert entry_reason(retracted, "zh", texts) == "用户收回或取消: The user lives in Boston"
    assert entry_reason({"reason": "old words"}, "en") == "old words"


# ---- through the service, on both backends -----------------------------------------------------


def test_an_english_users_why_says_why_in_english(service: LedgerService) -> None:
    service.ingest("en", "I live in Boston")
    old = service.profile("en").facts[0]
    service.ingest("en", "I moved to Seattle")
    invalidated = service.why("en", old.id).to_dict()["invalidated"]
    assert invalidated is not None, "the offline rules replace a home that moved"
    assert invalidated["reason_code"] == "replaced-by-new-fact"
    assert invalidated["reason"].startswith("Replaced by a newer fact: ") and "Seattle" in invalidated["reason"]
    entry = next(e.to_dict() for e in service.history("en") if e.event == "FactInvalidated")
    assert (entry["reason_code"], entry["reason"]) == ("replaced-by-new-fact", None)


def test_a_chinese_users_why_still_says_why_in_chinese(service: LedgerService) -> None:
    service.ingest("zh", "我住在杭州")
    old = service.profile("zh").facts[0]
    service.ingest("zh", "我搬到上海了")
    invalidated = service.why("zh", old.id).to_dict()["invalidated"]
    assert (invalidated["reason"], invalidated["reason_code"]) == ("被新事实替代: 用户住在上海", "replaced-by-new-fact")
    service.invalidate("zh", service.profile("zh").facts[0].id, "用户说不对", actor="ops")
    manual = service.why("zh", service.history("zh").entries[-1].fields["fact_id"]).to_dict()["invalidated"]
    assert (manual["reason"], manual["reason_code"]) == ("用户说不对", "manual")


def test_the_cli_history_line_says_why_in_the_users_language(service: LedgerService) -> None:
    from factledger.entrypoints.cli.present import Reading, describe_event

    service.ingest("en", "I live in Boston")
    service.ingest("en", "I moved to Seattle")
    page = service.history("en")
    entry = next(e for e in page if e.event == "FactInvalidated")
    line = describe_event(entry, Reading.of(page))
    assert "(update): Replaced by a newer fact: The user lives in Seattle" in line, line
    assert "替代" not in line


def test_the_console_timeline_says_why_in_the_users_language(service: LedgerService) -> None:
    from factledger.entrypoints.http.console_person import observed_items, reasons_shown

    service.ingest("en", "I live in Boston")
    service.ingest("en", "I moved to Seattle")
    entries = service.history("en").to_dict()["entries"]
    shown = reasons_shown(entries, observed_items(entries))
    (ended,) = [e for e in shown if e["event"] == "FactInvalidated"]
    assert ended["reason"] == "Replaced by a newer fact: The user lives in Seattle"


def test_http_why_says_why_in_the_users_language(settings: Settings) -> None:
    from test_http import make_api

    for api in make_api(settings):
        read = api.headers("acme", "read")
        api.say("en", "I live in Boston")
        boston = api.client.get("/v1/users/en/profile", headers=read).json()["facts"]["location"][0]["id"]
        api.say("en", "I moved to Seattle")
        why = api.client.get(f"/v1/users/en/items/{boston}", headers=read).json()
        assert why["invalidated"]["reason"] == "Replaced by a newer fact: The user lives in Seattle"
        assert why["invalidated"]["reason_code"] == "replaced-by-new-fact"
        # the history's kind is one of three, said in the schema and refused naming the field
        bad = api.client.get("/v1/users/en/history", params={"kind": "facts"}, headers=read)
        assert bad.status_code == 422 and bad.json()["field"] == "kind"
