"""What a caller receives from a ledger, it can name: every class a public method of ``LedgerService``
returns (and every error the service raises on purpose) is importable from ``factledger``.

``Outcome``, ``Tombstone``, ``ReplayReport`` and ``DomainError`` reached callers without being
exported (issue 28).
"""

from __future__ import annotations

import inspect
import typing

import factledger
from factledger.application import errors
from factledger.application.service import LedgerService
from factledger.domain import errors as domain_errors


def _classes_in(annotation: object) -> set[type]:
    if typing.get_origin(annotation) is not None:
        return {c for arg in typing.get_args(annotation) for c in _classes_in(arg)}
    is_ours = inspect.isclass(annotation) and annotation.__module__.startswith("factledger")
    return {annotation} if is_ours else set()  # type: ignore[arg-type]


def returned_classes() -> set[type]:
    found: set[type] = set()
    for name, method in inspect.getmembers(LedgerService, inspect.isfunction):
        if not name.startswith("_"):
            found |= _classes_in(typing.get_type_hints(method).get("return"))
    return found


def test_every_class_a_ledger_returns_is_exported() -> None:
    returned = returned_classes()
    assert {c.__name__ for c in returned} >= {"IngestResult", "Profile", "Outcome", "Tombstone", "ReplayReport"}
    missing = sorted(c.__name__ for c in returned if getattr(factledger, c.__name__, None) is not c)
    assert missing == []
    assert {c.__name__ for c in returned} <= set(factledger.__all__)


def test_every_error_raised_on_purpose_is_exported_but_internal_ones() -> None:
    raised = {
        cls
        for module in (errors, domain_errors)
        for cls in vars(module).values()
        if inspect.isclass(cls) and issubclass(cls, factledger.FactledgerError)
    }
    internal = {"ExtractionFailure", "DuplicateMessage", "FactNotActive", "MessageAlreadyRecorded"}
    internal |= {"EmbedderMismatch", "LLMConfigError", "LLMRequestRejected", "RebuildRunning"}  # under exported kinds
    missing = sorted(c.__name__ for c in raised if c.__name__ not in internal and c.__name__ not in factledger.__all__)
    assert missing == []
