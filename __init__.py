"""factledger: an event-sourced memory of what people tell an assistant.

The public API: :func:`open_ledger` returns a :class:`LedgerService`, a
:class:`Ledger` (the protocol ``PartitionedLedger`` implements too); results
are typed (``IngestResult``, ``Profile``, ``MemoryContext``, ``Explanation``,
``HistoryPage``, ``Diff``, ``RecallHit``), each with ``to_dict()``; every
deliberate error is a :class:`FactledgerError`. Asyncio backends wrap the
service in :class:`AsyncLedger` (each call in a worker thread).

The names are imported when first used (``__getattr__`` below), so
``import factledger`` costs nothing and a command, a test process or an MCP
stdio server pays only for the parts it uses (asyncio, psycopg and the offline
rules are heavy: ``docs/startup.md``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as type checkers and editors see them; at run time: ``__getattr__``
    from factledger.application.asynchronous import AsyncLedger
    from factledger.application.error_kinds import ErrorKind, kind_of
    from factledger.application.errors import (
        ConfigError,
        FactledgerError,
        InvalidInput,
        LLMAuthError,
        LLMError,
        LLMUnavailable,
        MessageIdReused,
        NotFound,
        StoreBusy,
        WriteConflict,
    )
    from factledger.application.ingestion import Incoming
    from factledger.application.ledger_protocol import Ledger
    from factledger.application.outcomes import Outcome
    from factledger.application.people import UserPage
    from factledger.application.ports import ProjectionStatus, RecallHit, Tombstone
    from factledger.application.replay import ReplayEstimate, ReplayReport
    from factledger.application.results import (
        Diff,
        Explanation,
        HistoryPage,
        IngestResult,
        MemoryContext,
        Profile,
    )
    from factledger.application.service import LedgerService
    from factledger.domain.errors import DomainError, UnknownItem
    from factledger.infrastructure.bootstrap import open_ledger
    from factledger.infrastructure.config import Settings

__version__ = "0.2.0"

#: Each public name and the module that defines it (imported on first use).
_PUBLIC_NAMES: dict[str, str] = {
    "AsyncLedger": "factledger.application.asynchronous",
    "ConfigError": "factledger.application.errors",
    "FactledgerError": "factledger.application.errors",
    "InvalidInput": "factledger.application.errors",
    "LLMAuthError": "factledger.application.errors",
    "LLMError": "factledger.application.errors",
    "LLMUnavailable": "factledger.application.errors",
    "MessageIdReused": "factledger.application.errors",
    "NotFound": "factledger.application.errors",
    "StoreBusy": "factledger.application.errors",
    "WriteConflict": "factledger.application.errors",
    "ErrorKind": "factledger.application.error_kinds",
    "kind_of": "factledger.application.error_kinds",
    "Incoming": "factledger.application.ingestion",
    "Ledger": "factledger.application.ledger_protocol",
    "Outcome": "factledger.application.outcomes",
    "UserPage": "factledger.application.people",
    "ProjectionStatus": "factledger.application.ports",
    "RecallHit": "factledger.application.ports",
    "Tombstone": "factledger.application.ports",
    "ReplayEstimate": "factledger.application.replay",
    "ReplayReport": "factledger.application.replay",
    "DomainError": "factledger.domain.errors",
    "UnknownItem": "factledger.domain.errors",
    "Diff": "factledger.application.results",
    "Explanation": "factledger.application.results",
    "HistoryPage": "factledger.application.results",
    "IngestResult": "factledger.application.results",
    "MemoryContext": "factledger.application.results",
    "Profile": "factledger.application.results",
    "LedgerService": "factledger.application.service",
    "open_ledger": "factledger.infrastructure.bootstrap",
    "Settings": "factledger.infrastructure.config",
}

__all__ = [
    "AsyncLedger",
    "ConfigError",
    "Diff",
    "DomainError",
    "ErrorKind",
    "Explanation",
    "FactledgerError",
    "HistoryPage",
    "Incoming",
    "IngestResult",
    "InvalidInput",
    "LLMAuthError",
    "LLMError",
    "LLMUnavailable",
    "Ledger",
    "LedgerService",
    "MemoryContext",
    "MessageIdReused",
    "NotFound",
    "Outcome",
    "Profile",
    "ProjectionStatus",
    "RecallHit",
    "ReplayEstimate",
    "ReplayReport",
    "Settings",
    "StoreBusy",
    "Tombstone",
    "UnknownItem",
    "UserPage",
    "WriteConflict",
    "__version__",
    "kind_of",
    "open_ledger",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    module = _PUBLIC_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'factledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once: later lookups do not come back here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
