"""factledger: an event-sourced memory of what people tell an assistant.

The public API is :class:`factledger.application.service.LedgerService`
(also available as ``factledger.LedgerService``) and :func:`factledger.open_ledger`.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["LedgerService", "open_ledger", "__version__"]


def __getattr__(name: str) -> Any:
    # Lazy, so that ``import factledger.domain`` does not pull in PostgreSQL.
    if name == "LedgerService":
        from factledger.application.service import LedgerService

        return LedgerService
    if name == "open_ledger":
        from factledger.infrastructure.bootstrap import open_ledger

        return open_ledger
    raise AttributeError(name)
