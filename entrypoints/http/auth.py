"""Who is calling: the API key (bearer), its tenant's service, its scope, and its rate.

A dependency per scope (``reader``, ``writer``, ``admin``) authenticates the
key, charges its rate limit, checks the scope, and hands the route a
``Caller`` holding the tenant's own ``LedgerService``: a route never sees a
tenant name it could mix up, only the service of the key's tenant.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated

import attrs
from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from factledger.application.access import AccessDenied, ApiKey, KeyStore, NotAuthenticated, Scope
from factledger.application.service import LedgerService
from factledger.entrypoints.http.problems import Problem
from factledger.entrypoints.ratelimit import FailedAuthentications
from factledger.infrastructure.tenants import Tenants

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="api_key",
    description="An API key: `factledger keys create --tenant T --scope read|write|admin`.",
)
header_key = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="api_key_header")


@attrs.frozen
class Caller:
    """An authenticated request: the key and the service of its tenant."""

    key: ApiKey
    service: LedgerService

    @property
    def tenant(self) -> str:
        return self.key.tenant

    @property
    def actor(self) -> str:
        return f"api:{self.key.key_id}" + (f" ({self.key.label})" if self.key.label else "")

    def actor_claiming(self, claimed: str | None) -> str:
        """Who a correction is recorded as: always the key; who the body says decided is kept
        only as a claim beside it (``api:<key id> (label), claimed: ops``), so a caller cannot
        record a correction in another's name."""
        return self.actor if not claimed else f"{self.actor}, claimed: {claimed}"


def _presented_key(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
    header: Annotated[str | None, Security(header_key)],
) -> ApiKey:
    token = credentials.credentials if credentials is not None else header
    if not token:
        raise NotAuthenticated("no API key: send `Authorization: Bearer <key>`")
    return key_for_token(request, token)


def key_for_token(request: Request, token: str) -> ApiKey:
    """The active key of ``token``, charged against its rate limit; wrong keys count against
    the client's address (the API and the console's sign-in share one budget)."""
    keys: KeyStore = request.app.state.keys
    failures: FailedAuthentications = request.app.state.auth_failures
    address = client_address(request)
    held_back = failures.held_back_for(address)
    if held_back > 0:  # before the lookup: a guesser's attempts cost no query
        raise Problem(
            429,
            "too-many-failures",
            f"more than {failures.limit} wrong API keys a minute from {address} (FACTLEDGER_AUTH_FAILURE_LIMIT); "
            "retry later",
            headers={"Retry-After": str(max(1, math.ceil(held_back)))},
        )
    try:
        key = keys.authenticate(token)
    except NotAuthenticated:
        failures.failed(address)
        raise
    charge(request, key.key_id)
    request.state.key_id = key.key_id
    return key


def key_of_session(request: Request, key_id: str) -> ApiKey:
    """The key a console session was signed in with, if still active, charged against its rate limit."""
    keys: KeyStore = request.app.state.keys
    key = keys.active(key_id)
    charge(request, key.key_id)
    request.state.key_id = key.key_id
    return key


def client_address(request: Request) -> str:
    """The address the request came from (the proxy's, behind one: its clients share a budget)."""
    return request.client.host if request.client is not None else "unknown"


def charge(request: Request, key_id: str, cost: int = 1, what: str = "") -> None:
    """Take ``cost`` requests from the key's budget, or refuse with 429 and when to retry."""
    wait = request.app.state.limiter.charge(key_id, cost)
    if wait > 0:
        raise Problem(
            429,
            "rate-limited",
            f"this key's limit is {request.app.state.settings.rate_limit} requests a minute{what}; retry later",
            headers={"Retry-After": str(max(1, math.ceil(wait)))},
        )


def needs(scope: Scope) -> Callable[..., Caller]:
    """A dependency: the caller, if its key has at least ``scope``."""

    def dependency(request: Request, key: Annotated[ApiKey, Depends(_presented_key)]) -> Caller:
        if not key.allows(scope):
            raise AccessDenied(f"this needs a key with scope {scope.label}; this key's scope is {key.scope.label}")
        tenants: Tenants = request.app.state.tenants
        return Caller(key, tenants.service(key.tenant))

    dependency.__name__ = f"needs_{scope.label}"
    return dependency


Reader = Annotated[Caller, Depends(needs(Scope.READ))]
Writer = Annotated[Caller, Depends(needs(Scope.WRITE))]
Admin = Annotated[Caller, Depends(needs(Scope.ADMIN))]
