"""Routes on one user's memory: ingest, read, explain, correct, export, forget.

Each acts on the caller's tenant only (``Caller.service``). A user the tenant
never wrote to is no error on a read of their memory (profile, context, recall,
history): 200 with the empty answer and ``"known": false`` (ADR 0036). An item
of theirs (``why``, invalidate), their export or their forget is 404. Either
way the answer is the same whatever another tenant holds under the same id.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse

from factledger.application.errors import FactledgerError
from factledger.application.ingestion import Incoming
from factledger.domain.kinds import Clock, HistoryKind
from factledger.entrypoints.http.auth import Caller, Reader, Writer, charge
from factledger.entrypoints.http.bodies import InvalidateIn, MessageBatchIn, MessageIn, RestateIn, json_content
from factledger.entrypoints.http.metrics import MESSAGES
from factledger.entrypoints.http.problems import Problem, error_body
from factledger.entrypoints.http.responses import (
    KEYED,
    WITH_BODY,
    BatchAnswer,
    ContextAnswer,
    Explanation,
    ExportAnswer,
    HistoryAnswer,
    IngestAnswer,
    InvalidateAnswer,
    ItemOutcome,
    ProfileAnswer,
    RecallAnswer,
    TombstoneAnswer,
    answers,
    problems,
)

router = APIRouter(prefix="/v1/users/{user_id}", tags=["memory"], dependencies=[Depends(json_content)])

HISTORY_PAGE = 50
HISTORY_PAGE_MAX = 500


def require_user(caller: Caller, user_id: str) -> None:
    """404 unless the caller's tenant has a memory for ``user_id`` (for calls on a memory that must exist)."""
    if not caller.service.knows(user_id):
        raise Problem(404, "unknown-user", f"no memory for user {user_id!r}", field="user_id")


@router.post(
    "/messages",
    status_code=201,
    summary="Ingest one user message",
    response_model=None,
    responses={
        **answers(IngestAnswer, 201, "recorded"),
        **answers(IngestAnswer, 200, "a message with this message_id and text was recorded before: nothing new"),
        **problems(*KEYED, *WITH_BODY, 409, 502, s409="this message_id was recorded with another text"),
    },
)
def ingest(user_id: str, body: MessageIn, caller: Writer) -> JSONResponse:
    """Extract facts and preferences from the message and record them (all or nothing).
    Send a ``message_id`` to make retries safe."""
    context = [turn.model_dump() for turn in body.context] if body.context is not None else None
    result = caller.service.ingest(
        user_id, body.message, body.session_id, context, message_id=body.message_id, timestamp=body.timestamp
    )
    MESSAGES.labels(status=result.status).inc()
    return JSONResponse(result.to_dict(), status_code=200 if result.status == "duplicate" else 201)


@router.post(
    "/messages/batch",
    summary="Ingest many messages of the user, in order",
    response_model=None,
    responses={
        **answers(BatchAnswer),
        **problems(*KEYED, *WITH_BODY, 502, s429="the batch costs one request per message against the rate limit"),
    },
)
def ingest_batch(user_id: str, body: MessageBatchIn, caller: Writer, request: Request) -> dict[str, Any]:
    """Each message as ``POST /messages`` would record it, one after another, saved in groups
    (a group all or nothing). 200 with one result per message, in order: what ``POST
    /messages`` answers, or ``{"error": problem}`` for a message that was not recorded; the
    others are recorded all the same. Costs one request per message against the rate limit."""
    _charge_the_rest(request, caller, len(body.messages))
    outcomes = caller.service.ingest_many(
        [
            Incoming(
                user_id,
                m.message,
                m.session_id,
                [turn.model_dump() for turn in m.context] if m.context is not None else None,
                m.message_id,
                m.timestamp,
            )
            for m in body.messages
        ]
    )
    results: list[dict[str, Any]] = []
    for outcome in outcomes:
        if isinstance(outcome, FactledgerError):
            results.append({"error": error_body(outcome)})
        else:
            MESSAGES.labels(status=outcome.status).inc()
            results.append(outcome.to_dict())
    statuses = [r.get("status", "failed") for r in results]
    return {
        "user_id": user_id,
        "recorded": sum(s not in ("duplicate", "failed") for s in statuses),
        "duplicates": statuses.count("duplicate"),
        "failed": statuses.count("failed"),
        "results": results,
    }


def _charge_the_rest(request: Request, caller: Caller, messages: int) -> None:
    """Charge a batch's messages after the first (the request itself paid for that one)."""
    limiter = request.app.state.limiter
    if messages <= 1 or limiter.capacity <= 0:
        return
    limit = request.app.state.settings.rate_limit
    if messages > limiter.capacity:
        raise Problem(
            422,
            "invalid-input",
            f"messages: {messages} is more than this key may send in a minute ({limit}, "
            "FACTLEDGER_RATE_LIMIT); send smaller batches",
            field="messages",
        )
    charge(request, caller.key.key_id, messages - 1, f" and a batch of {messages} messages costs {messages}")


@router.get(
    "/profile",
    summary="Active facts and preferences, a page of each",
    response_model=None,
    responses={**answers(ProfileAnswer), **problems(*KEYED)},
)
def profile(
    user_id: str,
    caller: Reader,
    as_of: datetime | None = None,
    clock: Clock = "said",
    limit: Annotated[
        int | None,
        Query(ge=1, description="facts and preferences shown, of each (default: 50 facts, 20 preferences)"),
    ] = None,
    offset: Annotated[int, Query(ge=0, description="how many of each to skip, most important first")] = 0,
) -> dict[str, Any]:
    """Most important first (facts by importance, preferences by strength, then by when first
    said, then by id); ``facts_total`` and ``preferences_total`` say how many there are, and
    ``facts_count`` and ``preferences_count`` how many this page shows. With ``as_of``, as they
    were then (by when things were said, or recorded), paged alike. A user nothing was ever
    recorded for has the empty profile with ``known`` false."""
    return caller.service.profile(user_id, as_of, clock, limit=limit, offset=offset).to_dict()


@router.get(
    "/context",
    summary="A prompt-ready memory block for a query",
    response_model=None,
    responses={**answers(ContextAnswer), **problems(*KEYED, 502)},
)
def context(
    user_id: str,
    caller: Reader,
    query: Annotated[str, Query(description="the user's current message or topic")],
    top_k: int = 5,
    language: Literal["auto", "zh", "en"] = "auto",
) -> dict[str, Any]:
    """The profile and the memories relevant to ``query``; ``text`` goes into a system prompt
    (empty, with ``known`` false, for a user nothing was ever recorded for)."""
    return caller.service.memory_context(user_id, query, top_k, language).to_dict()


@router.get(
    "/recall",
    summary="Memories similar to a query",
    response_model=None,
    responses={**answers(RecallAnswer), **problems(*KEYED, 502)},
)
def recall(
    user_id: str,
    caller: Reader,
    query: str,
    types: Annotated[list[Literal["fact", "preference", "message"]] | None, Query()] = None,
    top_k: int = 5,
    min_similarity: float | None = None,
) -> dict[str, Any]:
    """Active facts and preferences and what the user said (``message``: similarity null, ``said_at``
    when), best evidence first: ranked by meaning and by words, fused (ADR 0030). ``known``:
    false (and no hits) for a user nothing was ever recorded for."""
    known = caller.service.knows(user_id)  # first: a stranger's query is never embedded (no work, no cost)
    hits = caller.service.recall(user_id, query, types, top_k, min_similarity) if known else []
    return {"user_id": user_id, "query": query, "known": known, "hits": [hit.to_dict() for hit in hits]}


@router.get(
    "/history",
    summary="The user's events, paged",
    response_model=None,
    responses={**answers(HistoryAnswer), **problems(*KEYED)},
)
def history(
    user_id: str,
    caller: Reader,
    since: datetime | None = None,
    until: datetime | None = None,
    kind: HistoryKind | None = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=HISTORY_PAGE_MAX)] = HISTORY_PAGE,
    clock: Clock = "said",
) -> dict[str, Any]:
    """In recorded order; ``next_offset`` is null on the last page. A user nothing was ever
    recorded for has an empty page with ``known`` false."""
    page = caller.service.history(user_id, since, until, kind, offset=offset, limit=limit, clock=clock)
    return {**page.to_dict(), "next_offset": page.offset + len(page) if page.has_more else None}


@router.get(
    "/items/{item_id}",
    summary="Why: the whole life of a fact or preference",
    response_model=None,
    responses={**answers(Explanation), **problems(*KEYED, 404)},
)
def why(user_id: str, item_id: str, caller: Reader) -> dict[str, Any]:
    """Who said it, what confirmed, reinforced or invalidated it, with each decision's provenance.
    ``item_id`` may be a unique prefix."""
    require_user(caller, user_id)
    return caller.service.why(user_id, item_id).to_dict()


@router.post(
    "/items/{item_id}/invalidate",
    summary="Mark a fact wrong (an operator's correction)",
    response_model=None,
    responses={**answers(InvalidateAnswer), **problems(*KEYED, *WITH_BODY, 404, 409)},
)
def invalidate(user_id: str, item_id: str, body: InvalidateIn, caller: Writer) -> dict[str, Any]:
    """Nothing automatic overrides it afterwards; ``why`` shows the reason."""
    require_user(caller, user_id)
    fact_id = caller.service.invalidate(user_id, item_id, body.reason, caller.actor_claiming(body.actor))
    return {"user_id": user_id, "fact_id": fact_id, "invalidated": True, "reason": body.reason}


@router.post(
    "/facts",
    status_code=201,
    summary="Record a fact (an operator's restatement)",
    response_model=None,
    responses={**answers(ItemOutcome, 201, "recorded"), **problems(*KEYED, *WITH_BODY, 409, 502)},
)
def restate(user_id: str, body: RestateIn, caller: Writer) -> dict[str, Any]:
    """The fact is kept until an operator invalidates it; the fact it replaces is invalidated."""
    outcome = caller.service.restate(
        user_id, body.text, body.category, caller.actor_claiming(body.actor), body.confidence, body.at
    )
    return outcome.to_dict()


@router.get(
    "/export",
    summary="The user's whole memory (an access request)",
    response_model=None,
    responses={**answers(ExportAnswer), **problems(*KEYED, 404)},
)
def export(user_id: str, caller: Reader) -> dict[str, Any]:
    """Every message, fact and preference with its history."""
    require_user(caller, user_id)
    return caller.service.export(user_id)


@router.delete(
    "",
    summary="Forget the user in every ledger of the tenant",
    response_model=None,
    responses={**answers(TombstoneAnswer), **problems(*KEYED, 404)},
)
def forget(user_id: str, caller: Writer) -> dict[str, Any]:
    """Deletes the user's events, snapshots, rows, cached vectors and LLM answers in every ledger
    of this tenant, and keeps a tombstone without personal data. The id may be used again."""
    require_user(caller, user_id)
    return caller.service.forget(user_id, actor=caller.actor).to_dict()
