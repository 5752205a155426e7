"""factledger: an event-sourced memory of what people tell an assistant.

The public API: :func:`open_ledger` returns a :class:`LedgerService`; results
are typed (``IngestResult``, ``Profile``, ``MemoryContext``, ``Explanation``,
``HistoryPage``, ``Diff``, ``RecallHit``), each with ``to_dict()``; every
deliberate error is a :class:`FactledgerError`. Asyncio backends wrap the
service in :class:`AsyncLedger` (each call in a worker thread).
"""

from __future__ import annotations

from factledger.application.asynchronous import AsyncLedger
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
from factledger.application.ports import RecallHit
from factledger.application.results import (
    Diff,
    Explanation,
    HistoryPage,
    IngestResult,
    MemoryContext,
    Profile,
)
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

__version__ = "0.2.0"

__all__ = [
    "AsyncLedger",
    "ConfigError",
    "Diff",
    "Explanation",
    "FactledgerError",
    "HistoryPage",
    "Incoming",
    "IngestResult",
    "InvalidInput",
    "LLMAuthError",
    "LLMError",
    "LLMUnavailable",
    "LedgerService",
    "MemoryContext",
    "MessageIdReused",
    "NotFound",
    "Profile",
    "RecallHit",
    "Settings",
    "StoreBusy",
    "WriteConflict",
    "__version__",
    "open_ledger",
]
