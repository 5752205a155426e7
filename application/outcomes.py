"""What deciding on an item produces and reads: the outcome, where the items came from, and the
shared limits and matching of the Decider and of deciding in said order (ADR 0025)."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

import attrs
import numpy as np

from factledger.application.ports import Vector
from factledger.domain.kinds import ITEM_KINDS, OUTCOME_ACTIONS, ItemKind, OutcomeAction
from factledger.domain.values import ExtractedFact

CANDIDATES = 3
#: how many of the latest preferences the free judge reads against a new fact (bounded: a user
#: with thousands must not cost thousands of rule verdicts a message)
FREE_JUDGED = 32
#: how many of the latest facts a named change is also judged against
SIBLINGS_JUDGED = 8
# Below ``fact_similarity``, an item of the same category this similar is still worth asking the judge about.
RELATED = 0.35


@attrs.frozen
class Outcome:
    """What happened to one extracted item."""

    # checked when built as well as by mypy: a misspelt kind or action is refused, not written into JSON
    kind: ItemKind = attrs.field(validator=attrs.validators.in_(ITEM_KINDS))
    id: str
    text: str
    category: str
    action: OutcomeAction = attrs.field(validator=attrs.validators.in_(OUTCOME_ACTIONS))
    superseded_id: str | None = None
    superseded_text: str | None = None
    # historical: said before a later statement that replaces it (ADR 0025), which is this one
    replaced_by_id: str | None = None
    replaced_by_text: str | None = None
    relation: str | None = None
    similarity: float | None = None
    confidence: float | None = None
    strength: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        return {k: v for k, v in data.items() if v is not None}


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity of two unit vectors."""
    return float(np.dot(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))


class Said(Protocol):
    """A fact or preference as deciding reads it: active (``Fact``) or held at some time (``Span``)."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def category(self) -> str: ...


_S = TypeVar("_S", bound=Said)


@attrs.frozen
class KnownFactsCompared:
    """The known facts an extraction was shown and answered ``conflicts_with`` for, and the prompt that did."""

    facts: frozenset[str]
    prompt_id: str


@attrs.frozen
class DecisionSource:
    """Where the items being decided came from."""

    extractor_id: str
    prompt_id: str | None
    message_id: str | None
    session_id: str | None
    at: datetime
    actor: str | None
    # Set when the extraction is the relation check for these known facts (ADR 0019).
    compared: KnownFactsCompared | None = None
    # Set when the extractor's ``conflicts_with`` names a replacement it read in the message (``NamesReplacedFacts``).
    names_replaced: bool = False


def answer(fact: ExtractedFact) -> str:
    """What the extraction said of ``fact``, recorded as the raw answer of the verdict it stands for
    (``conflicts_with`` a list only when it names more than one fact)."""
    names = fact.conflicting
    said: str | list[str] | None = list(names) if len(names) > 1 else fact.conflicts_with
    return json.dumps({"fact": fact.text, "conflicts_with": said}, ensure_ascii=False)


def named(names: str | Sequence[str] | None, active: Sequence[_S]) -> list[_S]:
    """The active facts the extractor said the new one contradicts, matched by text: one a name."""
    if not names:
        return []
    wanted = {plain(n) for n in ([names] if isinstance(names, str) else names) if n}
    found: dict[str, _S] = {}
    for fact in active:
        key = plain(fact.text)
        if key in wanted and key not in found:
            found[key] = fact
    return list(found.values())


@functools.lru_cache(maxsize=16_384)  # every active fact's text, for every new fact that names one
def plain(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())
