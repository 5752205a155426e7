"""Offline adapters: rule-based extraction and judging, hashed n-gram embeddings.

They need no network and no model, and give the same answer on every run, so
the whole pipeline can be built, tested and replayed without an LLM.

The rule modules compile about 800 patterns when imported (a few hundred
milliseconds), so this package imports nothing itself: each adapter is imported
when first asked for, which is where one is built (``bootstrap.offline_parts``,
the ``eval`` command). ``import factledger`` and the CLI's parser never pay
for them (``tests/test_fast_start.py``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time: ``__getattr__``
    from factledger.infrastructure.offline.embedder import HashedNgramEmbedder
    from factledger.infrastructure.offline.extractor import RuleExtractor
    from factledger.infrastructure.offline.judge import RuleJudge
    from factledger.infrastructure.offline.signals import SignalDetector

#: Each adapter and the module that defines it.
_ADAPTERS = {
    "HashedNgramEmbedder": "factledger.infrastructure.offline.embedder",
    "RuleExtractor": "factledger.infrastructure.offline.extractor",
    "RuleJudge": "factledger.infrastructure.offline.judge",
    "SignalDetector": "factledger.infrastructure.offline.signals",
}

__all__ = ["HashedNgramEmbedder", "RuleExtractor", "RuleJudge", "SignalDetector"]


def __getattr__(name: str) -> Any:
    """An adapter, imported (its rules compiled) the first time it is asked for."""
    module = _ADAPTERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
