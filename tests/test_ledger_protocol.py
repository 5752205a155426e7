"""One API shape: ``LedgerService``, ``PartitionedLedger`` and ``AsyncLedger`` offer the ``Ledger``
protocol's calls with its exact signatures (issue 28: ``PartitionedLedger.replay(**options: Any)``
had lost its types, ``AsyncLedger.invalidate`` its ``at``, and ``diff_user`` had split off).

Annotations are compared as the strings written (every module has ``from __future__ import
annotations``), so a drift of a type, a default, a name or a parameter's kind fails here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import factledger
from factledger.application.asynchronous import AsyncLedger
from factledger.application.ledger_protocol import Ledger
from factledger.application.partitioned import PartitionedLedger
from factledger.application.service import LedgerService

#: The async name of a synchronous call, where it differs (``async with`` closes with ``aclose``).
ASYNC_NAMES = {"close": "aclose"}


def public_calls(cls: type) -> dict[str, Callable[..., Any]]:
    return {name: f for name, f in vars(cls).items() if callable(f) and not name.startswith("_")}


def shape(function: Callable[..., Any]) -> tuple[list[tuple[str, str, object, object]], object]:
    """Each parameter but ``self`` as (name, kind, default, annotation), and the return annotation."""
    signature = inspect.signature(function)
    parameters = [
        (p.name, p.kind.name, p.default, p.annotation) for p in signature.parameters.values() if p.name != "self"
    ]
    return parameters, signature.return_annotation


def protocol_calls() -> dict[str, Callable[..., Any]]:
    calls = public_calls(Ledger)
    assert {"ingest", "profile", "recall", "history", "why", "invalidate", "forget", "close"} <= set(calls)
    return calls


@pytest.mark.parametrize("implementation", [LedgerService, PartitionedLedger])
def test_each_ledger_has_every_call_of_the_protocol_with_its_signature(implementation: type) -> None:
    drifted = {
        name: (shape(call), shape(getattr(implementation, name, None) or (lambda: None)))
        for name, call in protocol_calls().items()
        if not hasattr(implementation, name) or shape(call) != shape(getattr(implementation, name))
    }
    assert drifted == {}


def test_the_async_ledger_mirrors_the_protocol_as_coroutines() -> None:
    drifted: dict[str, Any] = {}
    for name, call in protocol_calls().items():
        mirror = getattr(AsyncLedger, ASYNC_NAMES.get(name, name), None)
        if mirror is None or not inspect.iscoroutinefunction(mirror) or shape(mirror) != shape(call):
            drifted[name] = (shape(call), mirror and shape(mirror))
    assert drifted == {}
    extra = set(public_calls(AsyncLedger)) - {ASYNC_NAMES.get(name, name) for name in protocol_calls()}
    assert extra == set(), "AsyncLedger has a call the protocol lacks"


def test_partition_wide_calls_take_the_services_parameters_and_answer_per_partition() -> None:
    """``replay``, ``diff``, ``catch_up`` … answer ``{partition: what the service answers}``."""
    shared = (set(public_calls(PartitionedLedger)) & set(public_calls(LedgerService))) - set(protocol_calls())
    assert {"replay", "diff", "ledgers", "catch_up", "rebuild_read_model", "read_model_status"} <= shared
    for name in sorted(shared):
        (mine, answer), (theirs, single) = shape(getattr(PartitionedLedger, name)), shape(getattr(LedgerService, name))
        assert mine == theirs, name
        assert answer == f"dict[str, {single}]", name
    assert not hasattr(PartitionedLedger, "diff_user")  # one diff, with user_id, as on the service


def test_each_implementation_is_a_ledger_for_the_type_checker_too() -> None:
    """mypy checks these assignments structurally (``application/partitioned.py`` holds them)."""
    from factledger.application import partitioned

    assert set(partitioned.LEDGERS) == {LedgerService, PartitionedLedger}


def test_the_protocol_is_public() -> None:
    assert factledger.Ledger is Ledger
    assert "Ledger" in factledger.__all__
