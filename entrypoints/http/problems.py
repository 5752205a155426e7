"""Every error as ``application/problem+json`` (RFC 9457), naming the field at fault when there is one.

The service's errors map to statuses by kind (``HTTP_STATUSES``, by ``application.error_kinds``); FastAPI's
own validation errors become 422 problems listing each field; anything
unexpected is a 500 problem that says nothing about the internals (the
traceback goes to the log).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from factledger.application.error_kinds import ErrorKind, kind_of
from factledger.application.errors import FactledgerError

logger = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "urn:factledger:problem:"


class Problem(Exception):
    """An error the HTTP layer itself raises (413, 429, an unknown user …)."""

    def __init__(
        self,
        status: int,
        slug: str,
        detail: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug
        self.detail = detail
        self.field = field
        self.headers = headers or {}


# The status of each kind of service error (application/error_kinds.py decides the kind).
HTTP_STATUSES: dict[ErrorKind, int] = {
    ErrorKind.NOT_AUTHENTICATED: 401,
    ErrorKind.SCOPE_TOO_LOW: 403,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.MESSAGE_ID_REUSED: 409,
    ErrorKind.CONFLICT: 409,
    ErrorKind.BUSY: 503,
    ErrorKind.READ_MODEL_MISMATCH: 503,
    ErrorKind.LLM_UNAVAILABLE: 503,
    ErrorKind.LLM_REFUSED: 502,
    ErrorKind.INVALID_INPUT: 422,
    ErrorKind.ERROR: 400,
}
TITLES = {
    400: "Bad request",
    401: "Not authenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Content too large",
    415: "Unsupported media type",
    422: "Invalid input",
    429: "Too many requests",
    500: "Internal error",
    502: "Bad gateway",
    503: "Service unavailable",
}
RETRY_LATER = {"busy": "1", "llm-unavailable": "5", "read-model-mismatch": "30"}

# The service's messages start with the name of what was wrong ("top_k must …", "context[2]: …").
_LEADING_FIELD = re.compile(r"^([a-z][a-z_]*)(?:\[\d+\])?(?=[\s:\[])")
FIELDS = frozenset(
    [
        "user_id",
        "message",
        "session_id",
        "context",
        "message_id",
        "timestamp",
        "query",
        "top_k",
        "min_similarity",
        "types",
        "reason",
        "actor",
        "text",
        "category",
        "confidence",
        "as_of",
        "clock",
        "since",
        "until",
        "kind",
        "offset",
        "limit",
        "language",
        "item_id",
        "into",
        "extractor",
        "prompts",
        "users",
        "other",
        "force",
        "tenant",
    ]
)


def field_of(message: str) -> str | None:
    """The parameter a service error names first, if it is one an HTTP caller sends."""
    match = _LEADING_FIELD.match(message)
    if match and match.group(1) in FIELDS:
        return match.group(0)
    return None


def problem(
    status: int,
    slug: str,
    detail: str,
    request: Request | None = None,
    *,
    field: str | None = None,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """A problem+json response."""
    body = problem_body(status, slug, detail, request.url.path if request is not None else None, field=field)
    body.update(extra)
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_JSON)


def problem_body(
    status: int, slug: str, detail: str, instance: str | None = None, *, field: str | None = None
) -> dict[str, Any]:
    """A problem's fields (RFC 9457), and the field at fault when there is one."""
    body: dict[str, Any] = {
        "type": TYPE_BASE + slug,
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
    }
    if instance is not None:
        body["instance"] = instance
    if field is not None:
        body["field"] = field
    return body


def error_body(exc: FactledgerError) -> dict[str, Any]:
    """The problem a service error is (for an answer that reports several, as a batch does)."""
    status, slug = status_of(exc)
    return problem_body(status, slug, str(exc), field=field_of(str(exc)))


def status_of(exc: Exception) -> tuple[int, str]:
    """The status and problem type of a service error."""
    kind = kind_of(exc)
    return HTTP_STATUSES[kind], kind.value


def _location(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in ("body", "query", "path", "header", "cookie"):
        parts = parts[1:]  # where it came from; the name is what a caller recognises
    return ".".join(parts) or "body"


async def _malformed_json(request: Request, error: dict[str, Any]) -> JSONResponse:
    """400 for a body that is not JSON at all, saying where (line and column, not the byte
    offset FastAPI reports as the error's location) and what the parser expected there."""
    loc = error.get("loc", ())
    offset = loc[-1] if loc and isinstance(loc[-1], int) else None
    reason = str((error.get("ctx") or {}).get("error") or "not JSON")
    where = ""
    if offset is not None:
        text = (await request.body()).decode("utf-8", errors="replace")[:offset]
        where = f" at line {text.count(chr(10)) + 1} column {offset - (text.rfind(chr(10)) + 1) + 1}"
    return problem(400, "malformed-json", f"the body is not valid JSON: {reason}{where}", request, field="body")


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into a problem."""

    @app.exception_handler(Problem)
    async def _problem(request: Request, exc: Problem) -> JSONResponse:
        return problem(exc.status, exc.slug, exc.detail, request, field=exc.field, headers=exc.headers)

    @app.exception_handler(FactledgerError)
    async def _service_error(request: Request, exc: FactledgerError) -> JSONResponse:
        status, slug = status_of(exc)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
        if slug in RETRY_LATER:
            headers["Retry-After"] = RETRY_LATER[slug]
        if status >= 500:
            logger.warning("%s %s: %s", request.method, request.url.path, exc)
        return problem(status, slug, str(exc), request, field=field_of(str(exc)), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        malformed = next((e for e in exc.errors() if e.get("type") == "json_invalid"), None)
        if malformed is not None:
            return await _malformed_json(request, malformed)
        errors = [{"field": _location(e.get("loc", ())), "message": str(e.get("msg", "invalid"))} for e in exc.errors()]
        first = errors[0] if errors else {"field": "body", "message": "invalid"}
        detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors[:5])
        return problem(422, "invalid-input", detail, request, field=first["field"], errors=errors)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else TITLES.get(exc.status_code, "Error")
        slug = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
        return problem(exc.status_code, slug, detail, request, headers=dict(exc.headers or {}))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        logger.exception("%s %s failed", request.method, request.url.path)
        return problem(500, "internal", "the server failed; the error is in its log", request)
