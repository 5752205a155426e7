"""What each route answers, as OpenAPI schemas (a generated client gets types, not bare dicts).

The routes build their answers from the service's ``to_dict()``; these models
describe those answers for the schema only (``responses=``), so a field the
service adds later is never a 500. ``tests/test_http_responses.py`` checks real
answers of every route against the schema. Objects allow more fields than
listed (``additionalProperties``): a client must not break on a new one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from factledger.domain.kinds import IngestStatus, ItemKind, OutcomeAction
from factledger.entrypoints.http.problems import PROBLEM_JSON, TITLES


class _Answer(BaseModel):
    model_config = ConfigDict(extra="allow")


class ProblemAnswer(_Answer):
    """An error (RFC 9457), with the field at fault when there is one."""

    type: str = Field(description="urn:factledger:problem:<kind>")
    title: str
    status: int
    detail: str
    instance: str | None = None
    field: str | None = Field(default=None, description="the parameter at fault")
    errors: list[dict[str, Any]] | None = Field(default=None, description="every field at fault (422)")


class ItemOutcome(_Answer):
    """What became of one fact or preference of a message or a restatement."""

    kind: ItemKind
    id: str
    text: str
    category: str
    action: OutcomeAction = Field(description="what deciding did with it (see domain/kinds.py)")
    confidence: float | None = None
    strength: float | None = None
    superseded_id: str | None = None
    superseded_text: str | None = None
    relation: str | None = None
    similarity: float | None = None


class IngestAnswer(_Answer):
    user_id: str
    message_id: str
    status: IngestStatus = Field(
        description="recorded, duplicate (a retry: nothing new) or extraction_failed (pending)"
    )
    extractor_id: str
    facts: list[str]
    preferences: list[str]
    facts_extracted: int
    preferences_extracted: int
    items: list[ItemOutcome]
    redacted: dict[str, int] = Field(description="secrets replaced before recording, by kind")


class BatchError(_Answer):
    error: ProblemAnswer


class BatchAnswer(_Answer):
    user_id: str
    recorded: int
    duplicates: int
    failed: int
    results: list[IngestAnswer | BatchError] = Field(description="one per message, in order")


class ProfileFact(_Answer):
    id: str
    fact: str
    confidence: float
    times_mentioned: int


class ProfilePreference(_Answer):
    id: str
    preference: str
    strength: float


class ProfileAnswer(_Answer):
    user_id: str
    known: bool = Field(description="false: nothing was ever recorded for this user (an empty answer, not an error)")
    facts: dict[str, list[ProfileFact]] = Field(description="by category, most important first")
    preferences: dict[str, list[ProfilePreference]] = Field(description="by category, strongest first")
    facts_count: int
    preferences_count: int
    facts_total: int
    preferences_total: int
    offset: int
    facts_limit: int | None = None
    preferences_limit: int | None = None


class RecallHitAnswer(_Answer):
    id: str
    type: Literal["fact", "preference", "message"]
    content: str
    category: str
    similarity: float | None = Field(description="closeness in meaning; null for a message (no vector)")
    score: float | None = Field(default=None, description="the fused rank score recall ordered by")
    importance: float | None = None
    said_at: str | None = Field(default=None, description="a message's said time (ISO 8601)")
    metadata: dict[str, Any] = Field(default_factory=dict)


class RecallAnswer(_Answer):
    user_id: str
    query: str
    known: bool = Field(description="false: nothing was ever recorded for this user (an empty answer, not an error)")
    hits: list[RecallHitAnswer]


class ContextAnswer(_Answer):
    user_id: str
    query: str
    known: bool = Field(description="false: nothing was ever recorded for this user (an empty answer, not an error)")
    text: str = Field(description="the memory block, ready for a system prompt")
    profile: ProfileAnswer
    recalled: list[RecallHitAnswer]


class HistoryAnswer(_Answer):
    user_id: str
    known: bool = Field(description="false: nothing was ever recorded for this user (an empty answer, not an error)")
    offset: int
    total: int
    entries: list[dict[str, Any]] = Field(description="events, each with version, event, recorded_at, said_at")
    next_offset: int | None = Field(description="null on the last page")


class Explanation(_Answer):
    """The whole life of a fact or preference."""

    id: str
    kind: ItemKind
    text: str
    category: str
    authority: str | None = None
    is_active: bool
    observed: dict[str, Any] = Field(description="when, from which message, by which extractor or actor")
    rules: list[str] = Field(
        default_factory=list,
        description="ids of the offline rules that produced it, decided what it replaced and decided its end, "
        "'<module>.<rule>'; empty where a language model (see the prompt ids) or an operator decided",
    )
    confirmations: list[dict[str, Any]] = Field(default_factory=list)
    contested: list[dict[str, Any]] = Field(default_factory=list)
    supersedes: dict[str, Any] | None = None
    invalidated: dict[str, Any] | None = None


class InvalidateAnswer(_Answer):
    user_id: str
    fact_id: str
    invalidated: Literal[True]
    reason: str


class ExportAnswer(_Answer):
    format: str = Field(description="factledger-export/1")
    user_id: str
    ledger: str
    exported_at: str
    events: int
    messages: list[dict[str, Any]]
    facts: list[Explanation]
    preferences: list[Explanation]


class TombstoneAnswer(_Answer):
    user_key: str = Field(description="a keyed hash of the user id: no personal data")
    forgotten_at: str
    actor: str
    counts: dict[str, int]


class UsageAnswer(_Answer):
    totals: dict[str, Any]


class LedgerEntry(_Answer):
    name: str
    extractor_id: str | None = None
    source: str | None = None
    created_at: str | None = None
    replay_position: int | None = None
    events: int | None = None


class LedgersAnswer(_Answer):
    ledgers: list[LedgerEntry]


class ReplayJobAnswer(_Answer):
    ledger: str
    state: str = Field(
        description="running, finished, stopped (a limit), failed, interrupted (its server process died: "
        "start it again to resume), or not running here (never replayed through the server)"
    )
    processed: int | None = None
    total: int | None = None
    started_at: float | None = None
    report: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    ledger_info: LedgerEntry | None = Field(default=None, description="a replay this process did not start")


class DiffAnswer(_Answer):
    a: str
    b: str
    summary: list[dict[str, Any]]
    users: list[dict[str, Any]]


class PromoteAnswer(_Answer):
    live: str
    previous: str = Field(description="the name the old live ledger keeps")


class HealthAnswer(_Answer):
    status: Literal["ok"]
    version: str
    worker: int = Field(description="the id of the server process that answered (`serve --workers N` runs N)")


class ReadyAnswer(_Answer):
    status: Literal["ready"]
    checks: dict[str, Any]


WHY = {
    400: "the body is not JSON (`malformed-json`)",
    403: "the key's scope is too low",
    404: "no such item or ledger in the key's tenant (or, where a memory must exist, no memory for this user)",
    409: "a conflict: see the problem's type",
    413: "the body is larger than FACTLEDGER_MAX_BODY_BYTES",
    415: "the body is not declared as application/json",
    422: "invalid input: `field` names it",
    429: "too many requests for this key, or too many wrong keys from this address; see Retry-After",
    502: "the LLM endpoint refused the request",
    503: "the database is busy or the LLM unavailable: nothing recorded, retry after Retry-After",
}


def problems(*statuses: int, **why: str) -> dict[int | str, dict[str, Any]]:
    """The error answers of a route, as problem+json (``why`` overrides a status's wording: s409=…)."""
    return {
        status: {
            "description": why.get(f"s{status}", WHY.get(status, TITLES.get(status, "error"))),
            "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/ProblemAnswer"}}},
        }
        for status in statuses
    }


def answers(model: type[BaseModel], status: int = 200, description: str = "") -> dict[int | str, dict[str, Any]]:
    """The success answer of a route."""
    return {status: {"model": model, "description": description or "success"}}


# What every key-holding route can answer; a body adds what a body can get wrong.
KEYED = (401, 403, 422, 429, 503)
WITH_BODY = (400, 413, 415)
