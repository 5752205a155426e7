"""Status, action, kind and clock are closed vocabularies named once (domain/kinds.py): every
signature and record that carries one says which, and a misspelt value is refused when built."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from factledger.application.asynchronous import AsyncLedger
from factledger.application.audit import memory_as_of, select_history, when
from factledger.application.errors import InvalidInput
from factledger.application.outcomes import Outcome
from factledger.application.partitioned import PartitionedLedger
from factledger.application.queries import require_clock
from factledger.application.results import Explanation, IngestResult
from factledger.application.service import LedgerService
from factledger.domain.kinds import (
    CLOCKS,
    HISTORY_KINDS,
    INGEST_STATUSES,
    OUTCOME_ACTIONS,
    Clock,
    HistoryKind,
    IngestStatus,
    ItemKind,
    OutcomeAction,
)


def hints(thing: Any) -> dict[str, Any]:
    return typing.get_type_hints(thing)


def attrs_hints(cls: type) -> dict[str, Any]:
    return {f.name: f.type for f in attrs.fields(cls)} | hints(cls)


@pytest.mark.parametrize(
    ("record", "field", "vocabulary"),
    [
        (Outcome, "kind", ItemKind),
        (Outcome, "action", OutcomeAction),
        (IngestResult, "status", IngestStatus),
        (Explanation, "kind", ItemKind),
    ],
)
def test_records_name_their_vocabulary(record: type, field: str, vocabulary: Any) -> None:
    assert attrs_hints(record)[field] == vocabulary


READERS: list[Callable[..., Any]] = [
    LedgerService.profile,
    LedgerService.history,
    PartitionedLedger.profile,
    PartitionedLedger.history,
    AsyncLedger.profile,
    AsyncLedger.history,
    select_history,
    memory_as_of,
    when,
]


@pytest.mark.parametrize("reader", READERS, ids=lambda f: f.__qualname__)
def test_every_reader_takes_a_clock_not_any_string(reader: Callable[..., Any]) -> None:
    assert hints(reader)["clock"] == Clock
    if "kind" in hints(reader):
        assert hints(reader)["kind"] == HistoryKind | None


def test_the_values_are_the_strings_json_has_always_held() -> None:
    assert CLOCKS == ("said", "recorded")
    assert HISTORY_KINDS == ("message", "fact", "preference")
    assert INGEST_STATUSES == ("recorded", "duplicate", "extraction_failed")
    assert set(OUTCOME_ACTIONS) == {
        "observed", "confirmed", "superseded", "reinforced", "contested", "historical", "retracted",
    }  # fmt: skip


def test_a_misspelt_action_kind_or_status_is_refused_when_built() -> None:
    assert Outcome("fact", "f", "t", "other", "observed").to_dict()["action"] == "observed"
    with pytest.raises(ValueError, match="action"):
        Outcome("fact", "f", "t", "other", "observd")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="kind"):
        Outcome("facts", "f", "t", "other", "observed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status"):
        IngestResult("u", "m", (), (), (), "x", None, status="recordd")  # type: ignore[arg-type]


def test_a_callers_clock_is_typed_or_refused_naming_the_clocks() -> None:
    assert require_clock("recorded") == "recorded"
    with pytest.raises(InvalidInput, match="said, recorded"):
        require_clock("wall")
