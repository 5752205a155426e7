"""Events are forever: what an earlier version stored still loads, through the upcasters, to the same state.

``fixtures/events_v1.jsonl`` holds the events and snapshots main stored before
the event classes were versioned (made by ``fixtures/record_events_v1.py``);
``events_v1_expected.json`` what that version projected them to.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import attrs
import pytest
from eventsourcing.persistence import StoredEvent

from factledger.application.audit import explain, profile_of
from factledger.application.ledger import MemoryLedger
from factledger.application.results import HistoryEntry
from factledger.domain.memory import Fact, UserMemory, project_memory
from factledger.domain.values import Extraction, Verdict

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def ledger() -> MemoryLedger:
    return MemoryLedger(env={"PERSISTENCE_MODULE": "eventsourcing.popo"})


def stored(table: str, fixture: str = "events_v1.jsonl") -> list[StoredEvent]:
    rows = [json.loads(line) for line in (FIXTURES / fixture).read_text(encoding="utf-8").splitlines()]
    return [
        StoredEvent(UUID(r["originator_id"]), r["originator_version"], r["topic"], r["state"].encode("utf-8"))
        for r in rows
        if r["table"] == table
    ]


def forgetting_mentions(items: dict[str, Any]) -> dict[str, Any]:
    return {item_id: attrs.evolve(item, mentions=()) for item_id, item in items.items()}


def expected() -> dict[str, Any]:
    return json.loads((FIXTURES / "events_v1_expected.json").read_text(encoding="utf-8"))


def test_version_1_events_load_and_project_to_the_same_profile(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events")]
    memory = project_memory(events)
    assert memory is not None
    want = expected()
    profile = json.loads(json.dumps(profile_of(memory, "fixture").to_dict(), default=str))
    assert {key: profile[key] for key in want["profile"]} == want["profile"]  # later versions add page fields
    assert memory.version == want["version"] and memory.messages_ingested == want["messages_ingested"]
    active = {fid for fid, f in want["facts"].items() if f["is_active"]}
    assert set(memory.facts) == active
    assert memory.retired_facts == {fid: f["invalidated_by"] for fid, f in want["facts"].items() if not f["is_active"]}
    for fid in active:
        record = memory.facts[fid]
        assert (record.times_mentioned, record.contested, record.authority) == (
            want["facts"][fid]["times_mentioned"],
            want["facts"][fid]["contested"],
            want["facts"][fid]["authority"],
        )


def test_version_1_verdicts_and_extractions_are_upcast_to_typed_values(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events")]
    confirmed = [e for e in events if isinstance(e, UserMemory.FactConfirmed)]
    assert confirmed and all(isinstance(e.verdict, Verdict) for e in confirmed)
    assert confirmed[0].verdict.judge_id.startswith("offline-rules")
    manual = [e for e in events if isinstance(e, UserMemory.FactInvalidated) and e.superseded_by is None]
    assert manual and all(e.verdict is None for e in manual)
    extractions = [e.extraction for e in events if isinstance(e, UserMemory.ExtractionRecorded)]
    assert extractions and all(isinstance(x, Extraction) for x in extractions)
    # history keeps its JSON: a verdict's four fields, an extraction as a dict
    entry = HistoryEntry.of(confirmed[0]).to_dict()
    assert {"judge_id", "judge_prompt_id", "similarity", "raw_answer"} <= set(entry) and "verdict" not in entry
    fact_id = confirmed[0].fact_id
    life = explain(events, fact_id)
    assert life.confirmations[0].verdict == confirmed[0].verdict
    assert life.to_dict()["confirmations"][0]["judge_id"] == confirmed[0].verdict.judge_id


def test_version_1_snapshots_load_as_the_events_do(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events")]
    for snapshot in (ledger.mapper.to_domain_event(s) for s in stored("factledger_snapshots")):
        from_snapshot = snapshot.mutate(None)
        from_events = project_memory([e for e in events if e.originator_version <= snapshot.originator_version])
        # an old snapshot kept no mentions (ADR 0025): everything else is the same
        assert forgetting_mentions(from_snapshot.facts) == forgetting_mentions(from_events.facts)  # type: ignore[union-attr]
        assert from_snapshot.retired_facts == from_events.retired_facts  # type: ignore[union-attr]
        assert forgetting_mentions(from_snapshot.preferences) == forgetting_mentions(from_events.preferences)  # type: ignore[union-attr]


def test_new_snapshots_round_trip_through_the_transcoder(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events")]
    memory = project_memory(events)
    assert memory is not None
    from eventsourcing.domain import Snapshot

    snapshot = Snapshot.take(memory)
    again = ledger.mapper.to_domain_event(ledger.mapper.to_stored_event(snapshot)).mutate(None)
    assert vars(again) | {"_pending_events": []} == vars(memory) | {"_pending_events": []}
    assert all(isinstance(f, Fact) for f in again.facts.values())


def test_a_copy_of_the_aggregate_is_independent_of_the_original(ledger: MemoryLedger) -> None:
    memory = project_memory([ledger.mapper.to_domain_event(s) for s in stored("factledger_events")])
    assert memory is not None
    before = vars(copy.deepcopy(memory)) | {}
    clone = copy.deepcopy(memory)
    clone.ingest_message("m-new", "我住在深圳", memory.modified_on)
    fact_id = next(iter(clone.facts))
    clone.confirm_fact(fact_id, "m-new", memory.modified_on, Verdict("j", 0.9))
    assert memory.facts == before["facts"] and memory.recent_message_ids == before["recent_message_ids"]
    assert memory.pending_events == [] and len(clone.pending_events) == 2


# ``events_v2.jsonl``: the aggregate at class version 2 and ``FactConfirmed`` at 2 (before ADR 0025).


def test_version_2_confirmations_load_with_their_said_time_and_become_mentions(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events", "events_v2.jsonl")]
    confirmed = [e for e in events if isinstance(e, UserMemory.FactConfirmed)]
    assert len(confirmed) == 2
    assert all(e.said_at == e.last_confirmed and e.said_text is None for e in confirmed)
    memory = project_memory(events)
    assert memory is not None
    by_text = {f.text: f for f in memory.active_facts()}
    assert [m.message_id for m in by_text["用户住在上海"].mentions] == ["m5"]
    assert memory.said_until == max(e.said_at for e in confirmed)
    (retired,) = memory.past_facts.values()
    assert (retired.text, retired.valid_until) == ("用户住在杭州", by_text["用户住在上海"].first_seen)
    assert [m.message_id for m in retired.mentions] == ["m2"]


def test_version_2_snapshots_load_without_spans_and_decide_as_before(ledger: MemoryLedger) -> None:
    events = [ledger.mapper.to_domain_event(s) for s in stored("factledger_events", "events_v2.jsonl")]
    snapshots = [ledger.mapper.to_domain_event(s) for s in stored("factledger_snapshots", "events_v2.jsonl")]
    assert snapshots
    for snapshot in snapshots:
        from_snapshot = snapshot.mutate(None)
        from_events = project_memory([e for e in events if e.originator_version <= snapshot.originator_version])
        assert forgetting_mentions(from_snapshot.facts) == forgetting_mentions(from_events.facts)  # type: ignore[union-attr]
        assert from_snapshot.retired_facts == from_events.retired_facts  # type: ignore[union-attr]
        assert from_snapshot.past_facts == {} and from_snapshot.past_preferences == {}
        items = [*from_events.facts.values(), *from_events.preferences.values()]  # type: ignore[union-attr]
        assert from_snapshot.said_until == max(item.first_seen for item in items)
    # the last snapshot, then a message said before its latest fact: decided against what held then
    memory = snapshots[-1].mutate(None)
    shanghai = next(f for f in memory.active_facts() if f.text == "用户住在上海")
    earlier = shanghai.first_seen - timedelta(hours=1)
    assert memory.said_before(earlier)
    held, later = memory.facts_around(earlier)
    assert [s.text for s in later] == ["用户住在上海"] and all(s.valid_until is None for s in held)
