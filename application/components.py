"""What a ``LedgerService`` is made of: one ``Components`` value that a backend builds.

Each backend (PostgreSQL, in memory: ``infrastructure.bootstrap``) builds the same value with its
own adapters, and the service takes nothing else (ADR 0038): there is one constructor, and a part
one backend forgot shows as a missing field, not as a behaviour that differs in silence.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from factledger.application.candidates import BYTES_KEPT
from factledger.application.ledger import MemoryLedger
from factledger.application.ports import (
    Embedder,
    Eraser,
    Extractor,
    LedgerDirectory,
    MemoryReadModel,
    ReadModelUpdater,
    RelationJudge,
    UsageReport,
)
from factledger.application.screening import DEFAULT_POLICIES
from factledger.application.sensitive import Kind, Policy
from factledger.application.validation import DEFAULT_LIMITS, InputLimits
from factledger.application.writing import WRITE_ATTEMPTS


@attrs.frozen
class Tuning:
    """The settings that shape decisions and limits, the same for every backend."""

    inline_projection: bool = True
    fact_similarity: float = 0.75
    preference_similarity: float = 0.7
    limits: InputLimits = DEFAULT_LIMITS
    policies: Mapping[Kind, Policy] = DEFAULT_POLICIES
    bulk_workers: int = 1
    candidate_cache_bytes: int = BYTES_KEPT
    write_attempts: int = WRITE_ATTEMPTS


@attrs.frozen
class Components:
    """The parts of one ledger's service.

    ``projector``: None for a service that never updates its read model; ``directory``: None
    for one that cannot replay, diff or promote; ``usage``: None where no call log is kept (in
    memory); ``eraser``: None where forgetting is not offered; ``free_judge``: the judge that
    costs no call, used where an LLM extraction already related its facts (ADR 0019).
    """

    ledger: MemoryLedger
    extractor: Extractor
    judge: RelationJudge
    embedder: Embedder
    read_model: MemoryReadModel
    projector: ReadModelUpdater | None = None
    ledger_name: str = "live"
    directory: LedgerDirectory | None = None
    usage: UsageReport | None = None
    eraser: Eraser | None = None
    free_judge: RelationJudge | None = None
    tuning: Tuning = Tuning()
