"""Immutable value objects exchanged between the domain and its ports."""

from __future__ import annotations

import enum
import math
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

import attrs

from factledger.domain.categories import fact_category, preference_category

MAX_TEXT_LENGTH = 500

# Terminal escape sequences, removed whole (not only their ESC, which left "[31m" in
# the text): CSI (ESC [ or U+009B, parameters, intermediates, a final byte); string
# commands (OSC, DCS, SOS, PM, APC: ESC ] P X ^ _ or U+009D U+0090 U+0098 U+009E U+009F,
# a body, then BEL, ESC \ or U+009C); any other ESC with its intermediates and final
# byte. Linear time: no body class holds a character that starts a sequence, so two
# attempts never scan the same characters, and no quantifier is nested.
_ESCAPE_SEQUENCE = re.compile(
    "(?:\x1b\\[|\x9b)[0-?]*[ -/]*[@-~]"
    "|(?:\x1b[P\\]X^_]|[\x90\x98\x9d\x9e\x9f])[^\x00-\x1f\x7f-\x9f]*(?:\x07|\x1b\\\\|\x9c)"
    "|\x1b[ -/]*[0-~]"
)

# Line and paragraph separators (and NEL) end a line as "\n" does: a clause splitter
# reading text must see the break, not one run-on clause.
_LINE_BREAKS = str.maketrans({"\u2028": "\n", "\u2029": "\n", "\x85": "\n"})

# C0 and C1 control characters other than tab, newline and carriage return, and
# unpaired surrogates: PostgreSQL's text and jsonb cannot hold NUL or surrogates,
# and the others are terminal escapes, not words anyone said.
_UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

# What cannot be seen or typed back: control (Cc) and format (Cf: zero-width spaces
# and joiners, bidi controls, the BOM) characters, unpaired surrogates, line and
# paragraph separators. An id holding one is refused; printed text shows it escaped.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def storable_text(text: str) -> str:
    """``text`` as it may be stored: terminal escape sequences removed whole, U+2028 and
    U+2029 turned into line breaks, then every character ``_UNSTORABLE`` names removed."""
    if not text.isprintable():  # the common case (no control character at all) needs no pass
        text = _UNSTORABLE.sub("", _ESCAPE_SEQUENCE.sub("", text).translate(_LINE_BREAKS))
    return text


def has_unstorable(text: str) -> bool:
    """Whether ``text`` holds a character ``storable_text`` would remove."""
    return _UNSTORABLE.search(text) is not None


def is_invisible(char: str) -> bool:
    """Whether ``char`` prints as nothing or moves the cursor: see ``_INVISIBLE_CATEGORIES``."""
    return unicodedata.category(char) in _INVISIBLE_CATEGORIES


def invisible_characters(text: str) -> list[str]:
    """The characters of ``text`` that ``is_invisible``, in order (linear; none for printable text)."""
    return [] if text.isprintable() else [char for char in text if is_invisible(char)]


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
    text = " ".join(storable_text(value).split())
    if not text:
        raise ValueError("text must not be empty")
    return text[:MAX_TEXT_LENGTH]


def _role(value: object) -> str:
    return storable_text(str(value)).strip() or "user"


def _content(value: object) -> str:
    return storable_text(str(value))


def _evidence(value: object) -> str:
    return _optional_text(value) or ""


def _facts(items: Iterable[ExtractedFact]) -> tuple[ExtractedFact, ...]:
    return tuple(items)


def _preferences(items: Iterable[ExtractedPreference]) -> tuple[ExtractedPreference, ...]:
    return tuple(items)


def _rule_ids(value: object) -> tuple[str, ...]:
    """Rule ids as recorded: strings, none empty, none twice, in the order they fired."""
    if value is None:
        return ()
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    return tuple(dict.fromkeys(str(item).strip() for item in items if str(item).strip()))


def _optional_text(value: object) -> str | None:
    if value is None:
        return None
    text = " ".join(storable_text(str(value)).split())[:MAX_TEXT_LENGTH]
    return text or None


def _more_texts(value: object) -> tuple[str, ...]:
    """Texts as ``_optional_text`` keeps them, none empty, none twice, in order."""
    if value is None:
        return ()
    items: Iterable[object] = [value] if isinstance(value, str) else value  # type: ignore[assignment]
    return tuple(dict.fromkeys(t for t in map(_optional_text, items) if t))


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
    # a statement recorded after an earlier one that said the same: the earlier carries it on (ADR 0025)
    DUPLICATE = "duplicate"


@attrs.frozen
class Turn:
    """One earlier turn of the conversation, given as context."""

    role: str = attrs.field(converter=_role)
    content: str = attrs.field(converter=_content)

    @classmethod
    def from_dict(cls, data: Any) -> Turn:
        """Build a turn from ``{"role": str, "content": str}``; raises ValueError naming what is wrong."""
        if not isinstance(data, dict):
            raise ValueError(f"a context turn must be an object with role and content, got {type(data).__name__}")
        for key in ("role", "content"):
            if key not in data:
                raise ValueError(f"a context turn has no {key!r}")
            if not isinstance(data[key], str):
                raise ValueError(f"a context turn's {key!r} must be a string, got {type(data[key]).__name__}")
        if not data["role"].strip():
            raise ValueError("a context turn's 'role' must not be empty")
        return cls(role=data["role"], content=data["content"])

    def as_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@attrs.frozen
class ExtractedFact:
    """A fact as an extractor stated it, already normalised (third person, category, [0, 1])."""

    text: str = attrs.field(converter=_text)
    category: str = attrs.field(default="other", converter=fact_category)
    confidence: float = attrs.field(default=0.5, converter=unit_interval)
    conflicts_with: str | None = attrs.field(default=None, converter=_optional_text)
    # True when the extractor inferred it from behaviour rather than reading it
    # stated; an inferred fact never invalidates a stated one.
    inferred: bool = attrs.field(default=False, converter=bool)
    # Further known facts it replaces, after ``conflicts_with`` (a break-up ends both
    # "女朋友叫小美" and "和小美异地"); empty when it names one, as every extraction
    # recorded before lists were asked for does.
    also_conflicts_with: tuple[str, ...] = attrs.field(default=(), converter=_more_texts)
    # The ids of the extractor's rules that produced it and named what it replaces
    # ("zh_facts.moved", "judge.slot-exclusive"); empty for a language model's answer,
    # whose prompt id says what produced it, and in every extraction recorded before.
    rules: tuple[str, ...] = attrs.field(default=(), converter=_rule_ids)

    @property
    def conflicting(self) -> tuple[str, ...]:
        """Every known fact it names as replaced: ``conflicts_with`` then ``also_conflicts_with``."""
        return tuple(dict.fromkeys(t for t in (self.conflicts_with, *self.also_conflicts_with) if t))

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "fact": self.text,
            "category": self.category,
            "confidence": self.confidence,
            "conflicts_with": self.conflicts_with,
            "inferred": self.inferred,
        }
        if self.also_conflicts_with:  # only then: an extraction naming one fact is stored as it always was
            data["also_conflicts_with"] = list(self.also_conflicts_with)
        if self.rules:  # only then: an extraction no rule traced is stored as it always was
            data["rules"] = list(self.rules)
        return data


@attrs.frozen
class ExtractedPreference:
    """A preference as an extractor stated it."""

    text: str = attrs.field(converter=_text)
    category: str = attrs.field(default="other", converter=preference_category)
    strength: float = attrs.field(default=0.5, converter=unit_interval)
    evidence: str = attrs.field(default="", converter=_evidence)
    # Known preferences it replaces, as the extractor was shown them (a taste that changed);
    # empty for an extractor shown none, and in every extraction recorded before it was asked.
    replaces: tuple[str, ...] = attrs.field(default=(), converter=_more_texts)
    # as ``ExtractedFact.rules``
    rules: tuple[str, ...] = attrs.field(default=(), converter=_rule_ids)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "preference": self.text,
            "category": self.category,
            "strength": self.strength,
            "evidence": self.evidence,
        }
        if self.replaces:  # only then: a preference naming none is stored as it always was
            data["replaces"] = list(self.replaces)
        if self.rules:
            data["rules"] = list(self.rules)
        return data


@attrs.frozen
class Extraction:
    """Everything an extractor said about one message: recorded so no rebuild calls it again."""

    extractor_id: str
    facts: tuple[ExtractedFact, ...] = attrs.field(default=(), converter=_facts)
    preferences: tuple[ExtractedPreference, ...] = attrs.field(default=(), converter=_preferences)
    prompt_id: str | None = None
    raw_output: str = ""
    # what the signal detector saw (categories), the reason a call was made or not
    signals: dict[str, Any] = attrs.field(factory=dict)
    # Known facts, as shown, that the message says are no longer true or never were, with
    # nothing new in their place (a plan cancelled, a statement taken back)
    retracted: tuple[str, ...] = attrs.field(default=(), converter=_more_texts)

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "extractor_id": self.extractor_id,
            "prompt_id": self.prompt_id,
            "facts": [f.as_dict() for f in self.facts],
            "preferences": [p.as_dict() for p in self.preferences],
            "raw_output": self.raw_output,
            "signals": dict(self.signals),
        }
        if self.retracted:  # only then: every extraction that retracts nothing is stored as it always was
            data["retracted"] = list(self.retracted)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Extraction:
        """The inverse of ``as_dict`` (keys it does not know, such as old ``usage``, are ignored)."""
        return cls(
            extractor_id=data["extractor_id"],
            facts=[
                ExtractedFact(
                    f["fact"],
                    f.get("category", "other"),
                    f.get("confidence", 0.5),
                    f.get("conflicts_with"),
                    f.get("inferred", False),
                    f.get("also_conflicts_with") or (),
                    f.get("rules") or (),
                )
                for f in data.get("facts") or ()
            ],
            preferences=[
                ExtractedPreference(
                    p["preference"],
                    p.get("category", "other"),
                    p.get("strength", 0.5),
                    p.get("evidence") or "",
                    p.get("replaces") or (),
                    p.get("rules") or (),
                )
                for p in data.get("preferences") or ()
            ],
            prompt_id=data.get("prompt_id"),
            raw_output=data.get("raw_output") or "",
            signals=dict(data.get("signals") or {}),
            retracted=data.get("retracted") or (),
        )


@attrs.frozen
class RelationVerdict:
    """A judge's decision on two facts, with its provenance (the judge's port answers this)."""

    relation: Relation = attrs.field(converter=Relation)
    judge_id: str
    raw_answer: str = ""
    prompt_id: str | None = None
    # False when the judge could not read the pair at all and answered ``different`` for want of a
    # reason (the offline rules with no slot or rule in common): a default, not a comparison
    compared: bool = True
    # the ids of the rules that decided (the offline judge's, or the extractor's where it speaks);
    # empty for a language model, whose prompt id says what decided
    rules: tuple[str, ...] = attrs.field(default=(), converter=_rule_ids)


@attrs.frozen
class Verdict:
    """Why an automatic decision was taken: which judge, with which prompt, on what similarity, saying what.

    Recorded on every confirmation, automatic invalidation and contest.
    """

    judge_id: str
    similarity: float = attrs.field(converter=float)
    raw_answer: str = ""
    prompt_id: str | None = None

    @classmethod
    def of(cls, verdict: RelationVerdict, similarity: float) -> Verdict:
        return cls(verdict.judge_id, similarity, verdict.raw_answer, verdict.prompt_id)

    def as_dict(self) -> dict[str, Any]:
        return {
            "judge_id": self.judge_id,
            "judge_prompt_id": self.prompt_id,
            "similarity": self.similarity,
            "raw_answer": self.raw_answer,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        return cls(data["judge_id"], data["similarity"], data.get("raw_answer") or "", data.get("judge_prompt_id"))
