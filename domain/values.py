"""Immutable value objects exchanged between the domain and its ports."""

from __future__ import annotations

import enum
import math
from typing import Any

import attrs

from factledger.domain.categories import fact_category, preference_category

MAX_TEXT_LENGTH = 500


def unit_interval(value: object) -> float:
    """Coerce ``value`` to a float clamped into [0, 1].

    Extractors (LLMs above all) return numbers as strings or out of range;
    clamping here keeps the domain's [0, 1] invariant whatever they say.
    """
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.5
    if math.isnan(number):
        return 0.5
    return min(1.0, max(0.0, number))


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"text must be a string, got {type(value).__name__}")
    text = " ".join(value.split())
    if not text:
        raise ValueError("text must not be empty")
    return text[:MAX_TEXT_LENGTH]


class Relation(str, enum.Enum):
    """How a newly extracted fact relates to a similar active one (spec's CONFLICT_CHECK)."""

    DUPLICATE = "duplicate"
    UPDATE = "update"
    CONFLICT = "conflict"
    DIFFERENT = "different"


class Authority(str, enum.Enum):
    """How a fact was established; decides what may invalidate it."""

    STATED = "stated"  # the user said it
    INFERRED = "inferred"  # read from behaviour, not said
    MANUAL = "manual"  # set by an operator; nothing automatic overrides it

    def outranks(self, other: Authority) -> bool:
        """Whether a fact of this authority may be invalidated by one of ``other``."""
        order = {Authority.INFERRED: 0, Authority.STATED: 1, Authority.MANUAL: 2}
        return order[self] > order[other]


class InvalidationRelation(str, enum.Enum):
    """Why a fact stopped being valid."""

    UPDATE = "update"
    CONFLICT = "conflict"
    RETRACTED = "retracted"
    MANUAL = "manual"


@attrs.frozen
class Turn:
    """One earlier turn of the conversation, given as context."""

    role: str = attrs.field(converter=lambda r: str(r).strip() or "user")
    content: str = attrs.field(converter=str)

    @classmethod
    def from_dict(cls, data: Any) -> Turn:
        """Build a turn from ``{"role", "content"}``; raises ValueError naming what is missing."""
        if not isinstance(data, dict):
            raise ValueError(f"a context turn must be an object with role and content, got {data!r}")
        if "content" not in data:
            raise ValueError(f"a context turn has no 'content': {data!r}")
        return cls(role=data.get("role", "user"), content=data["content"])

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@attrs.frozen
class ExtractedFact:
    """A fact as an extractor stated it, already normalised (third person, category, [0, 1])."""

    text: str = attrs.field(converter=_text)
    category: str = attrs.field(default="other", converter=fact_category)
    confidence: float = attrs.field(default=0.5, converter=unit_interval)
    conflicts_with: str | None = None
    # True when the extractor inferred it from behaviour rather than reading it
    # stated; an inferred fact never invalidates a stated one.
    inferred: bool = attrs.field(default=False, converter=bool)

    def as_dict(self) -> dict[str, Any]:
        return {
            "fact": self.text,
            "category": self.category,
            "confidence": self.confidence,
            "conflicts_with": self.conflicts_with,
            "inferred": self.inferred,
        }


@attrs.frozen
class ExtractedPreference:
    """A preference as an extractor stated it."""

    text: str = attrs.field(converter=_text)
    category: str = attrs.field(default="other", converter=preference_category)
    strength: float = attrs.field(default=0.5, converter=unit_interval)
    evidence: str = attrs.field(default="", converter=lambda e: "" if e is None else str(e)[:MAX_TEXT_LENGTH])

    def as_dict(self) -> dict[str, Any]:
        return {
            "preference": self.text,
            "category": self.category,
            "strength": self.strength,
            "evidence": self.evidence,
        }


@attrs.frozen
class Extraction:
    """Everything an extractor said about one message: recorded so no rebuild calls it again."""

    extractor_id: str
    facts: tuple[ExtractedFact, ...] = attrs.field(default=(), converter=tuple)
    preferences: tuple[ExtractedPreference, ...] = attrs.field(default=(), converter=tuple)
    prompt_id: str | None = None
    raw_output: str = ""
    signals: dict[str, Any] = attrs.field(factory=dict)
    # calls, tokens, latency and cache hits of the LLM calls behind it (empty offline)
    usage: dict[str, Any] = attrs.field(factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor_id": self.extractor_id,
            "prompt_id": self.prompt_id,
            "usage": dict(self.usage),
            "facts": [f.as_dict() for f in self.facts],
            "preferences": [p.as_dict() for p in self.preferences],
            "raw_output": self.raw_output,
            "signals": dict(self.signals),
        }


@attrs.frozen
class RelationVerdict:
    """A judge's decision on two facts, with its provenance."""

    relation: Relation = attrs.field(converter=Relation)
    judge_id: str
    raw_answer: str = ""
    prompt_id: str | None = None
    usage: dict[str, Any] = attrs.field(factory=dict)
