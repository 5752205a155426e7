"""The domain: one event-sourced aggregate per user, its events and value objects.

Pure Python: nothing here performs I/O or imports another factledger layer.
"""

from factledger.domain.categories import (
    FACT_CATEGORIES,
    PREF_CATEGORIES,
    fact_category,
    preference_category,
)
from factledger.domain.memory import (
    DomainError,
    DuplicateMessage,
    FactNotActive,
    UnknownItem,
    UserMemory,
    user_memory_id,
)
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
