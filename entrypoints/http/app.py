"""The HTTP API: ``create_app(settings)`` builds it; ``factledger serve`` runs it on uvicorn.

Routes are sync functions: FastAPI runs them in its threadpool, so the
synchronous core never blocks the event loop (async backends embedding the
library use ``factledger.AsyncLedger`` for the same reason).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from factledger import __version__
from factledger.application.access import KeyStore
from factledger.entrypoints.http import console, docs, ledgers, operations, users
from factledger.entrypoints.http.console_session import MAX_SESSIONS, SESSION_SECONDS, Sessions
from factledger.entrypoints.http.metrics import ERRORS, LATENCY, REQUESTS, registry_for
from factledger.entrypoints.http.problems import install, problem
from factledger.entrypoints.ratelimit import FailedAuthentications, Limiter, RateLimiter
from factledger.infrastructure.config import Settings
from factledger.infrastructure.server_state import (
    ServerState,
    SharedRateLimiter,
    SharedReplayJobs,
    SharedSessions,
    open_server_state,
)
from factledger.infrastructure.tenants import Tenants, open_key_store

logger = logging.getLogger(__name__)

DESCRIPTION = """\
An event-sourced memory of what users tell an assistant: facts about the user and preferences
with a strength, each with the whole history of how it was observed, confirmed, reinforced or
invalidated — ask `GET /v1/users/{user_id}/items/{item_id}` *why*.

Every request carries an API key (`Authorization: Bearer flk_…`, made with
`factledger keys create --tenant T --scope read|write|admin`). A key acts for one tenant; a
tenant's users live in their own storage and no id reaches another tenant's memories.
Errors are `application/problem+json` (RFC 9457) with the `field` at fault.
"""


METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})


class BodyLimit:
    """413 for a body over ``limit`` bytes, declared (Content-Length) or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(scope, send)
            return
        seen = 0
        exceeded = False

        async def limited_receive() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    exceeded = True
                    raise _TooLarge
            return message

        started = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded and not started:
                # Whatever the app made of the broken body (a 400, a 500), the caller gets a 413.
                started = True
                await self._refuse(scope, send)
                return
            if exceeded:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except _TooLarge:
            if not started:
                await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        response = problem(
            413, "too-large", f"the request body is larger than {self.limit} bytes (FACTLEDGER_MAX_BODY_BYTES)"
        )
        ERRORS.labels(status="413").inc()
        await response(scope, _drain, send)


class _TooLarge(Exception):
    pass


async def _drain() -> Message:
    return {"type": "http.disconnect"}


def _route_of(scope: Scope) -> str:
    """The matched route's template (``/v1/users/{user_id}/profile``), never the raw path."""
    route = scope.get("route")
    return str(getattr(route, "path", None) or ("/mcp" if scope.get("path", "").startswith("/mcp") else "unmatched"))


def create_app(
    settings: Settings | None = None,
    *,
    tenants: Tenants | None = None,
    keys: KeyStore | None = None,
    mount_mcp: bool = True,
    state: ServerState | None = None,
) -> FastAPI:
    """The HTTP API over the tenants of ``settings`` (default: environment and config file).

    ``tenants``, ``keys`` and the shared ``state`` may be given (tests, embedding the API in a
    larger app); those created here are closed when the app shuts down.
    """
    settings = settings or Settings.load()
    owned_tenants = tenants is None
    owned_keys = keys is None
    tenants = tenants or Tenants(settings)
    keys = keys or open_key_store(settings)
    shared = open_server_state(settings) if state is None else state
    limiter, failures = _limits(settings, shared)
    mcp_app = _mcp_app(tenants, keys, limiter, failures, settings) if mount_mcp else None

    app = FastAPI(
        title="factledger",
        version=__version__,
        description=DESCRIPTION,
        lifespan=_lifespan(mcp_app, close_tenants=owned_tenants, close_keys=owned_keys, close_state=state is None),
        # FastAPI's pages load Swagger UI and ReDoc from a CDN; ours is served from the package.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.tenants = tenants
    app.state.keys = keys
    app.state.limiter = limiter  # one budget per key, REST and MCP together
    app.state.auth_failures = failures  # one per client address, REST and MCP together
    # Replays' progress and the console's sessions: in the database, seen by every server process (ADR 0039)
    app.state.server_state = shared
    app.state.replays = ledgers.ReplayJobs(SharedReplayJobs(shared) if shared else None)
    app.state.console_sessions = Sessions(
        shared=SharedSessions(shared, SESSION_SECONDS, MAX_SESSIONS) if shared else None
    )
    app.state.metrics_registry = registry_for(tenants)
    install(app)
    app.include_router(operations.router)
    app.include_router(users.router)
    app.include_router(ledgers.router)
    app.include_router(docs.router)
    app.include_router(console.router)
    if mcp_app is not None:
        app.mount("/mcp", mcp_app)

    app.middleware("http")(_measure)
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)

    return app


#: the settings ``serve --workers N`` passes to its worker processes (JSON: Settings.load's overrides)
SERVED_SETTINGS = "FACTLEDGER_SERVED_SETTINGS"


def served_app() -> FastAPI:
    """The app of one worker process of ``factledger serve --workers N`` (uvicorn calls this in
    each): the command's settings, with the database it started, come in the environment."""
    overrides = json.loads(os.environ.get(SERVED_SETTINGS) or "{}")
    return create_app(Settings.load(**overrides))


def _limits(settings: Settings, shared: ServerState | None) -> tuple[Limiter, FailedAuthentications]:
    """The rate limits: per key and per client address, in the database when there is one (every
    server process spends from one budget), else in this process."""
    if shared is None:
        return RateLimiter(settings.rate_limit), FailedAuthentications(settings.auth_failure_limit)
    per_address = SharedRateLimiter(shared, settings.auth_failure_limit, "address")
    return SharedRateLimiter(shared, settings.rate_limit, "key"), FailedAuthentications(
        settings.auth_failure_limit, per_address
    )


def _lifespan(mcp_app: Any, *, close_tenants: bool, close_keys: bool, close_state: bool) -> Any:
    """The MCP app's lifespan inside the API's; what this app opened is closed when it stops."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if mcp_app is not None and hasattr(mcp_app, "router"):
            async with mcp_app.router.lifespan_context(mcp_app):
                yield
        else:
            yield
        if close_tenants:
            app.state.tenants.close()
        if close_keys:
            app.state.keys.close()
        if close_state and app.state.server_state is not None:
            app.state.server_state.close()

    return lifespan


async def _measure(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    """Every request counted and timed by method, route template and status (never by user)."""
    started = time.perf_counter()
    response = await call_next(request)
    route = _route_of(request.scope)
    method = request.method if request.method in METHODS else "other"  # a client cannot add series
    LATENCY.labels(method=method, route=route).observe(time.perf_counter() - started)
    REQUESTS.labels(method=method, route=route, status=str(response.status_code)).inc()
    if response.status_code >= 400:
        ERRORS.labels(status=str(response.status_code)).inc()
    return response


def _mcp_app(
    tenants: Tenants, keys: KeyStore, limiter: Limiter, failures: FailedAuthentications, settings: Settings
) -> Any:
    """The MCP server's streamable-HTTP app, when the MCP module is there to build it."""
    try:
        from factledger.entrypoints.mcp_server import mcp_http_app
    except ImportError:
        return None
    try:
        # The Host checks (DNS rebinding) of the address served on, as ``mcp --http`` has.
        return mcp_http_app(
            tenants,
            keys,
            host=settings.host,
            limiter=limiter,
            failures=failures,
            allowed_hosts=settings.allowed_host_names,
        )
    except Exception:  # the REST API must come up even if the MCP part cannot
        logger.exception("the MCP endpoint could not be built; /mcp is not served")
        return None
