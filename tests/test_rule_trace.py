"""The trace (issue 27): every offline extraction and verdict records the ids of the rules that
fired, the events keep them, and ``why`` shows them on every surface (library, CLI, HTTP, MCP).

A rule id is ``<module>.<rule>``: the module under ``infrastructure/offline`` that holds the rule.
The cases are kinds of supersession, each in its own words: a move told as an event (in Chinese
and in English) and a correction that names only the new value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from eventsourcing.persistence import StoredEvent
from fastapi.testclient import TestClient
from mcp import Client
from processes import run_cli, run_cli_json
from test_stored_events import stored

import factledger.infrastructure.offline as offline
from factledger.application.access import Scope
from factledger.application.audit import explain
from factledger.application.ledger import MemoryLedger
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory
from factledger.domain.values import Extraction
from factledger.entrypoints.http import create_app
from factledger.entrypoints.mcp_tools import Caller, build_server
from factledger.infrastructure.config import Settings
from factledger.infrastructure.offline import RuleExtractor
from factledger.infrastructure.offline.extractor import offline_extractor_id
from factledger.infrastructure.tenants import Tenants

OFFLINE_MODULES = {path.stem for path in Path(offline.__file__).parent.glob("*.py")}

# (what was known, what changes it, the module whose rule reads the change)
SUPERSESSIONS = {
    "moved-zh": ("我一直住在南京", "去年年底搬去厦门了", "rules_zh_facts"),
    "moved-en": ("I live in Leeds", "We finally relocated to Bristol in June", "rules_en"),
    "corrected-zh": ("我儿子叫乐乐", "打错字了，是笑笑", "extractor"),
}


def rule_modules(rules: Any) -> set[str]:
    """The modules the rule ids name; every id must name a module of the offline rules."""
    assert rules, "no rule named"
    modules = {rule.split(".", 1)[0] for rule in rules}
    assert modules <= OFFLINE_MODULES, modules - OFFLINE_MODULES
    return modules


def superseded(said: Callable[[str], dict[str, Any]], case: str) -> tuple[str, str]:
    """Say the case's two messages; (the id of the fact the second replaced, the new fact's id)."""
    known, change, _ = SUPERSESSIONS[case]
    said(known)
    items = said(change)["items"]
    replacing = [i for i in items if i["action"] == "superseded"]
    assert replacing, items
    return replacing[0]["superseded_id"], replacing[0]["id"]


def assert_names_its_rules(why_old: dict[str, Any], why_new: dict[str, Any], case: str) -> None:
    """``why`` of the replaced fact and of the new one, as the JSON every surface answers."""
    module = SUPERSESSIONS[case][2]
    ended = why_old["invalidated"]
    assert module in rule_modules(ended["rules"]), ended
    assert module in rule_modules(why_old["rules"])
    assert module in rule_modules(why_new["observed"]["rules"])
    assert set(ended["rules"]) <= set(why_new["rules"])  # the new fact names what decided its replacing
    assert set(why_new["supersedes"]["rules"]) == set(ended["rules"])


# ---- the extractor and the judge ----------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(SUPERSESSIONS))
def test_an_offline_extraction_names_the_rules_that_produced_it(extractor: RuleExtractor, case: str) -> None:
    known, change, module = SUPERSESSIONS[case]
    [known_fact] = extractor.extract(known).facts
    facts = extractor.extract(change, known_facts=[known_fact.text]).facts
    replacing = [f for f in facts if f.conflicts_with == known_fact.text]
    assert replacing, facts
    assert module in rule_modules(replacing[0].rules)
    # recorded with the extraction, and read back from it
    recorded = Extraction.from_dict(Extraction(offline_extractor_id(), facts=replacing).as_dict())
    assert recorded.facts[0].rules == replacing[0].rules


def test_the_judge_names_its_rule_and_none_for_a_pair_it_could_not_read(judge: Any) -> None:
    assert judge.judge("用户住在南京", "用户住在厦门").rules == ("judge.slot-exclusive",)
    unread = judge.judge("用户养了一只猫", "今天天气不错")
    assert not unread.compared and unread.rules == ()


# ---- library, both backends -------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(SUPERSESSIONS))
def test_why_of_an_offline_supersession_names_its_rules(service: LedgerService, case: str) -> None:
    old_id, new_id = superseded(lambda text: service.ingest("u", text).to_dict(), case)
    old, new = service.why("u", old_id), service.why("u", new_id)
    assert old.invalidated is not None and old.invalidated.rules  # typed, on the result itself
    assert old.rules == tuple(dict.fromkeys((*old.observed.rules, *old.invalidated.rules)))
    assert_names_its_rules(old.to_dict(), new.to_dict(), case)


def test_a_rebuilt_read_model_keeps_the_rules(service: LedgerService) -> None:
    """A rebuild never calls the extractor: the rules come back from the events."""
    old_id, new_id = superseded(lambda text: service.ingest("u", text).to_dict(), "moved-zh")
    before = service.why("u", old_id).to_dict()
    service.rebuild_read_model()
    assert service.why("u", old_id).to_dict() == before
    rows = {record.id: record for record in service.read_model.all_items("u")}
    assert "rules_zh_facts" in rule_modules(rows[new_id].metadata["rules"])
    assert rows[old_id].metadata["invalidation_rules"] == before["invalidated"]["rules"]


def test_a_confirmation_and_a_challenge_name_the_rules_that_decided(service: LedgerService) -> None:
    known, change, module = SUPERSESSIONS["moved-zh"]
    [said] = service.ingest("c", known).items
    [again] = service.ingest("c", known).items
    assert again.action == "confirmed"
    [confirmation] = service.why("c", said.id).confirmations
    assert "judge" in rule_modules(confirmation.rules)
    # an operator's fact is challenged, never replaced, by the change: the challenge names its rules
    restated = service.restate("c", said.text)
    [challenge] = [i for i in service.ingest("c", change).items if i.action == "contested"]
    assert challenge.id == restated.id
    [contest] = service.why("c", restated.id).contested
    assert module in rule_modules(contest.rules)
    assert set(contest.rules) <= set(service.why("c", restated.id).rules)


def test_a_preference_replaced_offline_names_its_rules(service: LedgerService) -> None:
    service.ingest("p", "回复尽量简短一些")
    [item] = service.ingest("p", "以后回复详细一点吧").items
    assert item.action == "superseded" and item.superseded_id is not None
    old = service.why("p", item.superseded_id)
    assert old.invalidated is not None and "judge" in rule_modules(old.invalidated.rules)
    assert rule_modules(service.why("p", item.id).observed.rules)


# ---- HTTP in process, both backends ---------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(SUPERSESSIONS))
def test_http_why_names_the_rules(settings: Settings, case: str) -> None:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {app.state.keys.create('acme', Scope.parse('write'), 'test').token}"}

        def said(text: str) -> dict[str, Any]:
            response = client.post("/v1/users/h/messages", json={"message": text}, headers=headers)
            assert response.status_code in (200, 201), response.text
            return dict(response.json())

        old_id, new_id = superseded(said, case)
        why = [client.get(f"/v1/users/h/items/{item}", headers=headers) for item in (old_id, new_id)]
        assert all(r.status_code == 200 for r in why)
        assert_names_its_rules(why[0].json(), why[1].json(), case)
        schema = client.get("/openapi.json").json()["components"]["schemas"]["Explanation"]
        assert "rules" in schema["properties"]


# ---- MCP in process ---------------------------------------------------------------------------------


def test_mcp_explain_names_the_rules(tmp_path: Path) -> None:
    tenants = Tenants(Settings(home=tmp_path / "home", backend="memory", schema="m_trace"))

    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator("demo"))) as client:
            for case in sorted(SUPERSESSIONS):

                async def remember(text: str, user: str = case) -> dict[str, Any]:
                    result = await client.call_tool("remember", {"user_id": user, "message": text})
                    assert not result.is_error, result
                    return dict(result.structured_content or {})

                known, change, _ = SUPERSESSIONS[case]
                await remember(known)
                items = (await remember(change))["items"]
                [item] = [i for i in items if i["action"] == "superseded"]
                whys = []
                for item_id in (item["superseded_id"], item["id"]):
                    result = await client.call_tool("explain", {"user_id": case, "item_id": item_id})
                    assert not result.is_error, result
                    whys.append(dict(result.structured_content or {}))
                assert_names_its_rules(whys[0], whys[1], case)

    try:
        anyio.run(main)
    finally:
        tenants.close()


# ---- the CLI, as a real process (PostgreSQL) -------------------------------------------------------


def test_cli_why_prints_the_rules(cli_env: dict[str, str]) -> None:
    for case in sorted(SUPERSESSIONS):
        old_id, new_id = superseded(lambda text, user=case: run_cli_json(cli_env, "ingest", "--user", user, text), case)
        as_json = [run_cli_json(cli_env, "why", case, item[:8]) for item in (old_id, new_id)]
        assert_names_its_rules(as_json[0], as_json[1], case)
        printed = run_cli(cli_env, "why", case, old_id[:8]).stdout
        assert f"rules: {', '.join(as_json[0]['invalidated']['rules'])}" in printed
        assert SUPERSESSIONS[case][2] + "." in printed


# ---- events an earlier version wrote ---------------------------------------------------------------

TRACED = (
    UserMemory.FactObserved,
    UserMemory.PreferenceObserved,
    UserMemory.FactInvalidated,
    UserMemory.PreferenceSuperseded,
    UserMemory.FactConfirmed,
    UserMemory.FactContested,
)


@pytest.mark.parametrize("fixture", ["events_v1.jsonl", "events_v2.jsonl"])
def test_events_recorded_before_the_trace_load_with_no_rules(fixture: str) -> None:
    ledger = MemoryLedger(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events", fixture)]
    traced = [e for e in events if isinstance(e, TRACED)]
    assert {type(e) for e in traced} >= {UserMemory.FactObserved, UserMemory.FactInvalidated, UserMemory.FactConfirmed}
    assert all(e.rules == [] for e in traced)
    ended = next(e for e in traced if isinstance(e, UserMemory.FactInvalidated))
    life = explain(events, ended.fact_id)
    assert life.rules == () and life.to_dict()["invalidated"]["rules"] == []


def test_a_preference_supersession_of_version_1_loads_with_no_rules(service: LedgerService) -> None:
    """No fixture holds a ``PreferenceSuperseded``: one is written as version 1 wrote it (no
    ``rules``, no ``class_version``), from an event of today's, and read back."""
    service.ingest("v", "回复尽量简短一些")
    service.ingest("v", "以后回复详细一点吧")
    ledger = MemoryLedger(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})
    [today] = [e for e in service.ledger.user_events("v") if isinstance(e, UserMemory.PreferenceSuperseded)]
    assert today.rules
    stored_event = ledger.mapper.to_stored_event(today)
    state = json.loads(stored_event.state)
    assert state.pop("class_version") == 3 and state.pop("rules") == list(today.rules)
    # version 1 held the reason as a Chinese sentence, not a code (version 3, ADR 0001)
    assert state.pop("reason_code") == "replaced-by-new-preference"
    state["reason"] = "被新偏好替代: 用户希望回复详细一点"
    old = StoredEvent(
        stored_event.originator_id,
        stored_event.originator_version,
        stored_event.topic,
        json.dumps(state).encode(),
    )
    again = ledger.mapper.to_domain_event(old)
    assert isinstance(again, UserMemory.PreferenceSuperseded) and again.rules == []
    assert again.verdict == today.verdict and again.superseded_by == today.superseded_by
    assert again.reason_code == today.reason_code and again.reason is None
