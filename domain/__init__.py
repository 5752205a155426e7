"""The domain: one event-sourced aggregate per user, its events and value objects.

Pure Python: nothing here performs I/O or imports another factledger layer.
The aggregate (``UserMemory``, ``user_memory_id``) is imported when first asked
for: it needs the event library, which the errors and values do not (the CLI's
parser and ``import factledger`` stay light: ``tests/test_fast_start.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from factledger.domain.categories import (
    FACT_CATEGORIES,
    PREF_CATEGORIES,
    fact_category,
    preference_category,
)
from factledger.domain.errors import DomainError, DuplicateMessage, FactNotActive, UnknownItem
from factledger.domain.values import (
    Authority,
    ExtractedFact,
    ExtractedPreference,
    Extraction,
    InvalidationRelation,
    Relation,
    RelationVerdict,
    Turn,
)

if TYPE_CHECKING:  # imported on first use at run time: ``__getattr__``
    from factledger.domain.memory import UserMemory, user_memory_id

_AGGREGATE_NAMES = ("UserMemory", "user_memory_id")

__all__ = [
    "FACT_CATEGORIES",
    "PREF_CATEGORIES",
    "Authority",
    "DomainError",
    "DuplicateMessage",
    "ExtractedFact",
    "ExtractedPreference",
    "Extraction",
    "FactNotActive",
    "InvalidationRelation",
    "Relation",
    "RelationVerdict",
    "Turn",
    "UnknownItem",
    "UserMemory",
    "fact_category",
    "preference_category",
    "user_memory_id",
]


def __getattr__(name: str) -> Any:
    """``UserMemory`` and ``user_memory_id``, imported from ``domain.memory`` when first asked for."""
    if name not in _AGGREGATE_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("factledger.domain.memory"), name)
    globals()[name] = value
    return value
