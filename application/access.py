"""Who may do what through a server: tenants, API keys and their scopes.

A tenant is a name; every user id a tenant sends lives in the tenant's own
ledgers (its own schema), so one tenant's ids never reach another's memories.
An API key belongs to one tenant and carries one scope; scopes are ordered
(``read`` < ``write`` < ``admin``) and a key may do what its scope and every
lower one allow. The secret part of a key is shown once, at creation, and
stored only as a hash.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import re
import secrets
from datetime import datetime
from typing import Any, Protocol

import attrs

from factledger.application.errors import FactledgerError, InvalidInput, NotFound

__all__ = [
    "KEY_PREFIX",
    "TENANT_PATTERN",
    "AccessDenied",
    "ApiKey",
    "IssuedKey",
    "KeyStore",
    "NotAuthenticated",
    "Scope",
    "check_tenant",
    "parse_key",
    "secret_hash",
]

# Short and plain: a tenant's schema (``t_<tenant>``, ≤ 24 characters) gets ``__<ledger>_xxxxxx``
# for its replays within PostgreSQL's 63. No ``__`` inside, so a tenant's schema can never be
# another tenant's replay schema.
TENANT_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
TENANT_MAX = 16
KEY_PREFIX = "flk"
_KEY_FORMAT = re.compile(r"^flk_([0-9a-f]{12})_([A-Za-z0-9_-]{32,64})$")


class NotAuthenticated(FactledgerError):
    """No API key, a key that is not one of ours, or a revoked key (HTTP 401)."""


class AccessDenied(FactledgerError):
    """The key is valid but its scope is too low for the operation (HTTP 403)."""


class Scope(enum.IntEnum):
    """What a key may do; each scope includes the ones below it."""

    READ = 1  # profile, recall, context, history, why, export, usage, diff of one user
    WRITE = 2  # ingest, invalidate, restate, forget one user
    ADMIN = 3  # tenant-wide: replay, diff of all users, promote, ledgers

    @classmethod
    def parse(cls, value: str) -> Scope:
        try:
            return cls[value.strip().upper()]
        except KeyError:
            raise InvalidInput(f"scope must be one of read, write, admin; got {value!r}") from None

    @property
    def label(self) -> str:
        return self.name.lower()


def check_tenant(name: Any) -> str:
    """The tenant name, or ``InvalidInput`` saying what a tenant name may be."""
    if not isinstance(name, str) or len(name) > TENANT_MAX or not TENANT_PATTERN.match(name):
        raise InvalidInput(
            f"tenant {name!r} must be lower-case letters and digits, words joined by single _, "
            f"starting with a letter, at most {TENANT_MAX} characters"
        )
    return name


def secret_hash(secret: str) -> str:
    """SHA-256 of a key's secret part: the secret is 32+ random characters, so no salt or stretching is needed."""
    return hashlib.sha256(secret.encode()).hexdigest()


def parse_key(token: str) -> tuple[str, str]:
    """``(key_id, secret)`` of a presented key, or ``NotAuthenticated``."""
    match = _KEY_FORMAT.match(token.strip())
    if not match:
        raise NotAuthenticated("the API key is not a factledger key (flk_<id>_<secret>)")
    return match.group(1), match.group(2)


def new_key_parts() -> tuple[str, str]:
    """A fresh ``(key_id, secret)``: 48 random bits of id, 256 of secret."""
    return secrets.token_hex(6), secrets.token_urlsafe(32)


def secrets_match(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(secret_hash(secret), stored_hash)


@attrs.frozen
class ApiKey:
    """A stored key: everything but its secret."""

    key_id: str
    tenant: str
    scope: Scope
    label: str
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def allows(self, needed: Scope) -> bool:
        return self.active and self.scope >= needed

    def to_dict(self) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "tenant": self.tenant,
            "scope": self.scope.label,
            "label": self.label,
            "created_at": self.created_at.isoformat(),
            "revoked_at": self.revoked_at.isoformat() if self.revoked_at else None,
            "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
        }


@attrs.frozen
class IssuedKey:
    """A key just created: ``token`` is shown once and never stored."""

    key: ApiKey
    token: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.key.to_dict(), "token": self.token}


class KeyStore(Protocol):
    """Where keys are kept (hashed)."""

    def create(self, tenant: str, scope: Scope, label: str = "") -> IssuedKey:
        """A new key for ``tenant``; the returned token is the only copy of its secret."""

    def list(self, tenant: str | None = None) -> list[ApiKey]:
        """Every key (or one tenant's), newest first, revoked ones included."""

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key for good (``NotFound`` for an unknown id); revoking twice is harmless."""

    def authenticate(self, token: str) -> ApiKey:
        """The active key a presented token belongs to, or ``NotAuthenticated``."""

    def active(self, key_id: str) -> ApiKey:
        """The key ``key_id`` if it is still active (a console session's key), or ``NotAuthenticated``."""

    def ping(self) -> None:
        """Raise unless the store answers (readiness)."""

    def close(self) -> None:
        """Release connections."""


def unknown_key(key_id: str) -> NotFound:
    return NotFound(f"no API key {key_id!r}")
