"""What the service returns: typed, immutable results, each with ``to_dict()`` for JSON.

``to_dict()`` gives the JSON the CLI prints and the HTTP service sends (for
``profile``, the spec's ``get_user_profile`` shape, with the page it shows).
It holds JSON types only (``json.dumps`` needs no help): times are ISO 8601
text with their offset, tuples lists (``json_values``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import attrs

from factledger.application.decisions import Outcome
from factledger.application.json_values import iso, json_ready
from factledger.application.ports import RecallHit
from factledger.domain.kinds import INGEST_STATUSES, IngestStatus, ItemKind
from factledger.domain.reasons import ReasonCode
from factledger.domain.values import Extraction, Verdict

__all__ = [
    "Confirmation",
    "Contest",
    "Diff",
    "Explanation",
    "HistoryEntry",
    "HistoryPage",
    "IngestResult",
    "Invalidation",
    "ItemRef",
    "MemoryContext",
    "MessageRef",
    "Observation",
    "Outcome",
    "Profile",
    "ProfileFact",
    "ProfilePreference",
    "RecallHit",
    "Reinforcement",
    "UserDiff",
]

NO_VERDICT: dict[str, Any] = {"judge_id": None, "judge_prompt_id": None, "similarity": None, "raw_answer": None}


def _verdict(verdict: Verdict | None) -> dict[str, Any]:
    return verdict.as_dict() if verdict is not None else dict(NO_VERDICT)


# ---- ingest ---------------------------------------------------------------------------


@attrs.frozen
class IngestResult:
    """The spec's result for one message, plus what happened to each item."""

    user_id: str
    message_id: str
    facts: tuple[str, ...]
    preferences: tuple[str, ...]
    items: tuple[Outcome, ...]
    extractor_id: str
    notification_id: int | None
    # recorded | duplicate (message id seen before: nothing written) | extraction_failed (pending)
    status: IngestStatus = attrs.field(default="recorded", validator=attrs.validators.in_(INGEST_STATUSES))
    # secrets replaced by placeholders before recording, by kind (FACTLEDGER_SENSITIVE)
    redacted: dict[str, int] = attrs.field(factory=dict)

    @property
    def facts_extracted(self) -> int:
        return len(self.facts)

    @property
    def preferences_extracted(self) -> int:
        return len(self.preferences)

    def to_dict(self) -> dict[str, Any]:
        """The spec's four keys first, then ids and outcomes."""
        return {
            "facts_extracted": self.facts_extracted,
            "preferences_extracted": self.preferences_extracted,
            "facts": list(self.facts),
            "preferences": list(self.preferences),
            "user_id": self.user_id,
            "message_id": self.message_id,
            "extractor_id": self.extractor_id,
            "status": self.status,
            "redacted": dict(self.redacted),
            "items": [item.to_dict() for item in self.items],
        }


# ---- profile ----------------------------------------------------------------------------


@attrs.frozen
class ProfileFact:
    id: str
    text: str
    category: str
    confidence: float
    times_mentioned: int


@attrs.frozen
class ProfilePreference:
    id: str
    text: str
    category: str
    strength: float


_PROMPT_HEADINGS = {
    "zh": (
        "已知的用户信息：",
        "用户的偏好：",
        "与当前话题相关的记忆：",
        "强度",
        "用户说过的相关的话（日期为说的时间）：",
    ),
    "en": (
        "What is known about the user:",
        "The user's preferences:",
        "Memories relevant to this topic:",
        "strength",
        "What the user said that bears on it (dated when said):",
    ),
}


#: The default page of a profile (the spec's ``get_user_profile``): facts and preferences shown.
PROFILE_FACTS = 50
PROFILE_PREFERENCES = 20


def _count_facts(profile: Profile) -> int:
    return len(profile.facts)


def _count_preferences(profile: Profile) -> int:
    return len(profile.preferences)


@attrs.frozen
class Profile:
    """A page of a user's active facts and preferences (the spec's ``get_user_profile``).

    Order (the read model's and ``as_of``'s alike): facts by importance
    (their confidence, raised by each confirmation), highest first, then by
    when first said, then by id; preferences by strength, likewise. The page
    is ``facts[offset:offset + facts_limit]`` of ``facts_total`` active facts,
    and ``preferences[offset:offset + preferences_limit]`` of
    ``preferences_total``; by default the first 50 facts and 20 preferences.
    In ``to_dict()``, ``facts_count`` and ``preferences_count`` are the
    numbers shown (the spec's meaning), ``facts_total`` and
    ``preferences_total`` how many there are.
    """

    user_id: str
    facts: tuple[ProfileFact, ...] = ()
    preferences: tuple[ProfilePreference, ...] = ()
    known: bool = True  # False: nothing was ever recorded for this user
    facts_total: int = attrs.field(default=attrs.Factory(_count_facts, takes_self=True))
    preferences_total: int = attrs.field(default=attrs.Factory(_count_preferences, takes_self=True))
    offset: int = 0
    facts_limit: int = PROFILE_FACTS
    preferences_limit: int = PROFILE_PREFERENCES

    @property
    def has_more(self) -> bool:
        """Whether active items exist past this page (of either kind)."""
        return (
            self.offset + len(self.facts) < self.facts_total
            or self.offset + len(self.preferences) < self.preferences_total
        )

    def to_dict(self) -> dict[str, Any]:
        facts: dict[str, list[dict[str, Any]]] = {}
        for f in self.facts:
            facts.setdefault(f.category, []).append(
                {"fact": f.text, "confidence": f.confidence, "times_mentioned": f.times_mentioned, "id": f.id}
            )
        prefs: dict[str, list[dict[str, Any]]] = {}
        for p in self.preferences:
            prefs.setdefault(p.category, []).append({"preference": p.text, "strength": p.strength, "id": p.id})
        return {
            "user_id": self.user_id,
            "known": self.known,
            "facts": facts,
            "preferences": prefs,
            "facts_count": len(self.facts),
            "preferences_count": len(self.preferences),
            "facts_total": self.facts_total,
            "preferences_total": self.preferences_total,
            "offset": self.offset,
            "facts_limit": self.facts_limit,
            "preferences_limit": self.preferences_limit,
        }

    def as_prompt(self, language: str = "zh") -> str:
        """The profile as a compact block for a system prompt ("" when there is nothing to say)."""
        facts, prefs, _, strength, _ = _PROMPT_HEADINGS.get(language, _PROMPT_HEADINGS["zh"])
        lines: list[str] = []
        if self.facts:
            lines += [facts, *(f"- {f.text}" for f in self.facts)]
        if self.preferences:
            lines += [
                prefs,
                *(
                    f"- {p.text}（{strength} {p.strength:.1f}）"
                    if language == "zh"
                    else f"- {p.text} ({strength} {p.strength:.1f})"
                    for p in self.preferences
                ),
            ]
        return "\n".join(lines)


@attrs.frozen
class MemoryContext:
    """What to tell an LLM about a user before it answers ``query``: profile and recalled items."""

    user_id: str
    query: str
    profile: Profile
    recalled: tuple[RecallHit, ...]
    language: str = "zh"

    @property
    def text(self) -> str:
        """A compact system-prompt block: the profile, then the recalled memories it does not already
        list, then the recalled messages: dated snippets of what the user said, oldest first."""
        headings = _PROMPT_HEADINGS.get(self.language, _PROMPT_HEADINGS["zh"])
        block = self.profile.as_prompt(self.language)
        shown = {f.id for f in self.profile.facts} | {p.id for p in self.profile.preferences}
        memories = [h for h in self.recalled if h.record.type != "message" and h.record.id not in shown]
        said = sorted((h for h in self.recalled if h.record.type == "message"), key=lambda h: h.record.created_at)
        lines = [block]
        if memories:
            lines += [headings[2], *(f"- {hit.record.content}{self._when(hit)}" for hit in memories)]
        if said:
            lines += [
                headings[4],
                *(
                    f"- [{h.record.created_at.date().isoformat()}] {snippet(h.record.content)}{self._when(h)}"
                    for h in said
                ),
            ]
        return "\n".join(filter(None, lines))

    def _when(self, hit: RecallHit) -> str:
        """The days a memory's relative time refers to (ADR 0030): 上周 → （上周: 2023-05-01/2023-05-07）."""
        refs = hit.record.metadata.get("refers_to") or []
        if not refs:
            return ""
        shown = ", ".join(f"{r['phrase']}: {_span(r)}" for r in refs)
        return f"（{shown}）" if self.language == "zh" else f" ({shown})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "query": self.query,
            "known": self.profile.known,
            "text": self.text,
            "profile": self.profile.to_dict(),
            "recalled": [hit.to_dict() for hit in self.recalled],
        }


def _span(ref: dict[str, str]) -> str:
    return ref["start"] if ref["start"] == ref["end"] else f"{ref['start']}/{ref['end']}"


#: A message in a prompt: its first characters, enough to answer from without flooding the prompt.
SNIPPET_CHARS = 300


def snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# ---- why --------------------------------------------------------------------------------


@attrs.frozen
class MessageRef:
    message_id: str
    text: str
    session_id: str | None
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"message_id": self.message_id, "text": self.text, "session_id": self.session_id, "at": iso(self.at)}


def _message(ref: MessageRef | None) -> dict[str, Any] | None:
    return ref.to_dict() if ref is not None else None


@attrs.frozen
class ItemRef:
    id: str
    text: str | None
    relation: str | None = None
    rules: tuple[str, ...] = ()  # for what it supersedes: the ids of the rules that decided so

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "relation": self.relation, "rules": list(self.rules)}


@attrs.frozen
class Observation:
    """When and from what an item was first recorded."""

    at: datetime
    recorded_at: datetime
    extractor_id: str
    prompt_id: str | None
    session_id: str | None
    message: MessageRef | None
    confidence: float | None = None  # facts
    actor: str | None = None  # facts set by an operator
    strength: float | None = None  # preferences
    evidence: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()  # the ids of the extractor's rules that produced it (none: a model's answer)

    def to_dict(self, kind: ItemKind) -> dict[str, Any]:
        common = {
            "at": iso(self.at),
            "recorded_at": iso(self.recorded_at),
            "extractor_id": self.extractor_id,
            "prompt_id": self.prompt_id,
            "rules": list(self.rules),
            "session_id": self.session_id,
            "message": _message(self.message),
        }
        if kind == "fact":
            return {**common, "confidence": self.confidence, "actor": self.actor}
        return {**common, "strength": self.strength, "evidence": list(self.evidence)}


@attrs.frozen
class Confirmation:
    at: datetime
    times_mentioned: int
    importance: float
    verdict: Verdict
    message: MessageRef | None
    rules: tuple[str, ...] = ()  # the ids of the rules that found it said again

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": iso(self.at),
            "times_mentioned": self.times_mentioned,
            "importance": self.importance,
            **_verdict(self.verdict),
            "rules": list(self.rules),
            "message": _message(self.message),
        }


@attrs.frozen
class Contest:
    at: datetime
    challenger: str
    relation: str
    verdict: Verdict
    message: MessageRef | None
    rules: tuple[str, ...] = ()  # the ids of the rules that decided the challenge

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": iso(self.at),
            "challenger": self.challenger,
            "relation": self.relation,
            **_verdict(self.verdict),
            "rules": list(self.rules),
            "message": _message(self.message),
        }


@attrs.frozen
class Invalidation:
    at: datetime
    relation: str
    reason: str  # as the user reads it, in their memories' language
    reason_code: ReasonCode  # as recorded: a stable code (domain/reasons.py)
    actor: str | None
    superseded_by: ItemRef | None
    verdict: Verdict | None
    message: MessageRef | None
    rules: tuple[str, ...] = ()  # the ids of the rules that decided it (none: a model's or an operator's word)

    def to_dict(self) -> dict[str, Any]:
        by = {"id": self.superseded_by.id, "text": self.superseded_by.text} if self.superseded_by else None
        return {
            "at": iso(self.at),
            "relation": self.relation,
            "reason": self.reason,
            "reason_code": self.reason_code,
            "actor": self.actor,
            "superseded_by": by,
            **_verdict(self.verdict),
            "rules": list(self.rules),
            "message": _message(self.message),
        }


@attrs.frozen
class Reinforcement:
    at: datetime
    observed_strength: float
    old_strength: float
    new_strength: float
    evidence: tuple[str, ...]
    times_observed: int
    similarity: float
    message: MessageRef | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": iso(self.at),
            "observed_strength": self.observed_strength,
            "old_strength": self.old_strength,
            "new_strength": self.new_strength,
            "evidence": list(self.evidence),
            "times_observed": self.times_observed,
            "similarity": self.similarity,
            "message": _message(self.message),
        }


@attrs.frozen
class Explanation:
    """The whole life of one fact or preference, from its events."""

    id: str
    kind: ItemKind
    text: str
    category: str
    observed: Observation
    authority: str | None = None  # facts
    supersedes: ItemRef | None = None
    confirmations: tuple[Confirmation, ...] = ()
    contested: tuple[Contest, ...] = ()
    invalidated: Invalidation | None = None
    reinforcements: tuple[Reinforcement, ...] = ()

    @property
    def is_active(self) -> bool:
        return self.invalidated is None

    @property
    def rules(self) -> tuple[str, ...]:
        """The ids of every rule that fired in its life, in order, once each: those that produced
        it, decided what it replaced, found it said again or challenged, and decided its end
        (issue 27). Empty where a language model or an operator decided everything: their prompt
        ids and actors say so."""
        said = (
            self.observed.rules,
            self.supersedes.rules if self.supersedes is not None else (),
            *(c.rules for c in self.confirmations),
            *(c.rules for c in self.contested),
            self.invalidated.rules if self.invalidated is not None else (),
        )
        return tuple(dict.fromkeys(rule for rules in said for rule in rules))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "category": self.category,
            "observed": self.observed.to_dict(self.kind),
            "rules": list(self.rules),
        }
        if self.kind == "preference":
            data.update(reinforcements=[r.to_dict() for r in self.reinforcements], is_active=self.is_active)
            if self.supersedes is not None:
                data["supersedes"] = self.supersedes.to_dict()
            if self.invalidated is not None:
                data["invalidated"] = self.invalidated.to_dict()
            return data
        data.update(
            authority=self.authority,
            confirmations=[c.to_dict() for c in self.confirmations],
            contested=[c.to_dict() for c in self.contested],
            is_active=self.is_active,
        )
        if self.supersedes is not None:
            data["supersedes"] = self.supersedes.to_dict()
        if self.invalidated is not None:
            data["invalidated"] = self.invalidated.to_dict()
        return data


# ---- history ------------------------------------------------------------------------------


@attrs.frozen
class HistoryEntry:
    """One recorded event, its fields as plain values."""

    version: int
    event: str  # the event's class name: MessageIngested, FactObserved, ...
    recorded_at: datetime  # when the ledger learnt it
    fields: Mapping[str, Any]
    said_at: datetime | None = None  # when it was said (the message's time; ADR 0014)

    @classmethod
    def of(cls, event: Any, said_at: datetime | None = None) -> HistoryEntry:
        """An event as an entry. Typed values are spelled out as they always were in
        the JSON: a verdict as judge_id, judge_prompt_id, similarity and raw_answer;
        an extraction as a dict."""
        fields: dict[str, Any] = {}
        for key, value in vars(event).items():
            if key in {"originator_id", "originator_version", "timestamp", "originator_topic"}:
                continue
            if key == "verdict":
                fields.update(_verdict(value))
            elif isinstance(value, Extraction):
                fields[key] = value.as_dict()
            else:
                fields[key] = value
        return cls(event.originator_version, type(event).__name__, event.timestamp, fields, said_at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "event": self.event,
            "recorded_at": iso(self.recorded_at),
            "said_at": iso(self.said_at) if self.said_at is not None else None,
            **json_ready(self.fields),
        }


@attrs.frozen
class HistoryPage:
    """Part of a user's history, oldest first: ``entries[offset:offset + limit]`` of ``total``."""

    user_id: str
    entries: tuple[HistoryEntry, ...]
    offset: int
    total: int
    known: bool = True  # False: nothing was ever recorded for this user (an empty page, not an error)

    def __iter__(self) -> Any:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def has_more(self) -> bool:
        return self.offset + len(self.entries) < self.total

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "known": self.known,
            "offset": self.offset,
            "total": self.total,
            "entries": [e.to_dict() for e in self.entries],
        }


# ---- diff ---------------------------------------------------------------------------------


@attrs.frozen
class UserDiff:
    user_id: str
    only_in_a: tuple[dict[str, Any], ...]
    only_in_b: tuple[dict[str, Any], ...]
    changed: tuple[dict[str, Any], ...]
    same: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "only_in_a": json_ready(self.only_in_a),
            "only_in_b": json_ready(self.only_in_b),
            "changed": json_ready(self.changed),
            "same": self.same,
        }


@attrs.frozen
class Diff:
    """Ledger A against ledger B, per user."""

    a: str
    b: str
    users: tuple[UserDiff, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "summary": [
                {
                    "user_id": d.user_id,
                    "only_in_a": len(d.only_in_a),
                    "only_in_b": len(d.only_in_b),
                    "changed": len(d.changed),
                    "same": d.same,
                }
                for d in self.users
            ],
            "users": [d.to_dict() for d in self.users],
        }
