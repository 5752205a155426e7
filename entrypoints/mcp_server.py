"""``factledger mcp``: the memory tools (``mcp_tools``) served over stdio or streamable HTTP.

stdio (``serve_stdio``) is local and trusted: the operator names the tenant,
or gives an API key whose tenant and scope then apply (checked at every
call, so a revoked key stops working). Streamable HTTP (``mcp_http_app``)
sits behind the same API keys as the HTTP API: every request must carry
``Authorization: Bearer flk_...``; no key, a wrong or a revoked one is
answered 401 before the MCP layer sees the request. The key's tenant and
scope reach the tools through ``mcp_tools.CALLER``; a session is bound to
the key that opened it (the SDK answers 404 to another key).

Mounting the HTTP app in another ASGI application (``factledger serve``)::

    from contextlib import asynccontextmanager
    from factledger.entrypoints.mcp_server import mcp_http_app

    mcp = mcp_http_app(tenants, keys)  # the server's Tenants and KeyStore (not closed by it)

    @asynccontextmanager
    async def lifespan(app):
        async with mcp.lifespan():  # the SDK's session manager: runs the MCP sessions' tasks
            yield

    app = FastAPI(lifespan=lifespan)
    app.mount("/mcp", mcp)  # clients use http://HOST:PORT/mcp/ (/mcp is redirected there)

Against DNS rebinding it answers only a ``Host`` that is localhost, the
address given as ``host`` or one of ``allowed_hosts`` (default
``FACTLEDGER_ALLOWED_HOSTS``; ``["*"]``: any), else 421. Past
``FACTLEDGER_AUTH_FAILURE_LIMIT`` wrong keys a minute from one client
address, that address gets 429 before any key lookup.

A mounted app answers on any path below its mount point; run standalone
(``serve_http``) it answers on ``/mcp`` only. Its own ASGI ``lifespan``
events start the session manager too, so ``uvicorn.run(mcp)`` works alone.
"""

from __future__ import annotations

import json
import logging
import math
import socket
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from factledger.application.access import KeyStore, NotAuthenticated
from factledger.application.errors import ConfigError
from factledger.entrypoints.mcp_tools import CALLER, Caller, build_server
from factledger.entrypoints.ratelimit import FailedAuthentications, Limiter, RateLimiter
from factledger.infrastructure.tenants import Tenants

__all__ = ["McpHttpApp", "mcp_http_app", "serve_http", "serve_stdio"]

logger = logging.getLogger(__name__)

STANDALONE_PATH = "/mcp"


def serve_stdio(tenants: Tenants, caller: Callable[[], Caller]) -> None:
    """Serve MCP on stdin/stdout until the client closes them; ``caller`` says in whose name."""
    build_server(tenants, caller).run("stdio")


LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")
ANY_ADDRESS = ("", "0.0.0.0", "::")


def transport_security(host: str | None, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """DNS-rebinding protection: the SDK answers 421 to a ``Host`` (and 403 to an ``Origin``)
    that is not localhost, the address listened on (``host``, unless it is every address) or one
    of ``allowed_hosts`` (``name`` for any port, ``name:port`` for that one); ``*`` turns it off."""
    if "*" in allowed_hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    bound = () if host is None or host in ANY_ADDRESS else (f"[{host}]" if ":" in host else host,)
    hosts: list[str] = []
    origins: list[str] = []
    for name in (*LOCAL_NAMES, *bound, *allowed_hosts):
        with_port = name.rpartition("]")[2].count(":") == 1 if name.startswith("[") else ":" in name
        hosts += [name] if with_port else [name, f"{name}:*"]
        for scheme in ("http", "https"):
            origins += [f"{scheme}://{name}"] if with_port else [f"{scheme}://{name}", f"{scheme}://{name}:*"]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def _bearer(scope: Scope) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == b"authorization":
            kind, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if kind.lower() == "bearer" and token.strip() else None
    return None


async def _refuse(send: Send, status: int, error: str, message: str, retry_after: int | None = None) -> None:
    body = json.dumps({"error": error, "error_description": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", f'Bearer error="{error}"'.encode()))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class McpHttpApp:
    """ASGI app: API-key authentication in front of the SDK's streamable-HTTP transport."""

    def __init__(
        self,
        tenants: Tenants,
        keys: KeyStore,
        *,
        host: str | None = None,
        path: str | None = None,
        limiter: Limiter | None = None,
        allowed_hosts: Sequence[str] = (),
        failures: FailedAuthentications | None = None,
    ) -> None:
        self.keys = keys
        self.limiter = limiter if limiter is not None else RateLimiter(tenants.settings.rate_limit)
        self.failures = failures if failures is not None else FailedAuthentications(tenants.settings.auth_failure_limit)
        self.path = path
        self.server = build_server(tenants)  # no fallback caller: a call without a key is refused
        # Built for its session manager and its lifespan (which runs that manager); requests
        # go to the manager directly, so the app answers wherever it is mounted.
        self._sdk_app = self.server.streamable_http_app(transport_security=transport_security(host, allowed_hosts))
        self.session_manager = self.server.session_manager
        # Starlette-style too: ``app.router.lifespan_context(app)`` runs the session manager.
        self.router = self._sdk_app.router

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        """Run the MCP session manager (enter it in the lifespan of the app this one is mounted in)."""
        return self.session_manager.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._sdk_app(scope, receive, send)
            return
        if scope["type"] != "http":
            return  # no websockets here
        if self.path is not None and scope["path"].rstrip("/") != self.path:
            await _refuse(send, 404, "not_found", f"the MCP endpoint is {self.path}")
            return
        token = _bearer(scope)
        if token is None:
            await _refuse(send, 401, "invalid_token", "send the API key as Authorization: Bearer flk_...")
            return
        address = scope["client"][0] if scope.get("client") else "unknown"
        held_back = self.failures.held_back_for(address)
        if held_back > 0:  # before the lookup: a guesser's attempts cost no query
            message = f"too many wrong API keys from {address}; retry later"
            await _refuse(send, 429, "too_many_failures", message, retry_after=max(1, math.ceil(held_back)))
            return
        try:
            key = await anyio.to_thread.run_sync(self.keys.authenticate, token)
        except NotAuthenticated as exc:
            self.failures.failed(address)
            await _refuse(send, 401, "invalid_token", str(exc))
            return
        except Exception:
            logger.exception("the key store did not answer")
            await _refuse(send, 503, "unavailable", "the key store did not answer; try again")
            return
        wait = self.limiter.charge(key.key_id)
        if wait > 0:
            await _refuse(
                send,
                429,
                "rate_limited",
                "this key's requests a minute are used up; retry later",
                retry_after=max(1, math.ceil(wait)),
            )
            return
        # The SDK binds each session to the principal that opened it (client id, subject).
        token_info = AccessToken(token=key.key_id, client_id=key.key_id, scopes=[key.scope.label], subject=key.tenant)
        scope = {**scope, "user": AuthenticatedUser(token_info)}
        reset = CALLER.set(Caller.of_key(key))
        try:
            await self.session_manager.handle_request(scope, receive, send)
        finally:
            CALLER.reset(reset)


def mcp_http_app(
    tenants: Tenants,
    keys: KeyStore,
    *,
    host: str | None = None,
    path: str | None = None,
    limiter: Limiter | None = None,
    allowed_hosts: Sequence[str] | None = None,
    failures: FailedAuthentications | None = None,
) -> McpHttpApp:
    """The MCP streamable-HTTP endpoint behind API keys (see the module docstring to mount it).

    ``host``: the address the server listens on; ``allowed_hosts``: the other ``Host`` names
    it answers (default ``FACTLEDGER_ALLOWED_HOSTS``; see ``transport_security``); ``path``:
    answer on this path only (404 elsewhere); ``limiter``: requests a minute per key (default:
    ``FACTLEDGER_RATE_LIMIT``; 429 with ``Retry-After``); ``failures``: wrong keys a minute per
    client address (default ``FACTLEDGER_AUTH_FAILURE_LIMIT``; past it, 429 before any lookup).
    """
    if allowed_hosts is None:
        allowed_hosts = tenants.settings.allowed_host_names
    return McpHttpApp(
        tenants, keys, host=host, path=path, limiter=limiter, allowed_hosts=allowed_hosts, failures=failures
    )


def serve_http(tenants: Tenants, keys: KeyStore, host: str, port: int, ready: Callable[[], Any] | None = None) -> None:
    """Serve ``/mcp`` on ``host:port`` until interrupted; ``ready`` is called once the port listens."""
    import uvicorn

    try:  # bound here, so a port in use is a plain error rather than uvicorn's exit from inside its loop
        sock = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port} (FACTLEDGER_HOST/FACTLEDGER_PORT): {exc.strerror}") from None
    app = mcp_http_app(tenants, keys, host=host, path=STANDALONE_PATH)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    if ready is not None:
        ready()
    with sock:
        server.run(sockets=[sock])
