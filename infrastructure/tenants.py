"""Tenants of a shared server: each one a ledger of its own, in the schema ``t_<tenant>``.

Isolation is by construction, not by filtering: a tenant's service opens only
its own schema (events, read model, named ledgers, caches, usage log), so no
id a tenant sends can name another tenant's user, item or ledger. Replays,
diffs, promotions and forgets run inside that schema's catalog as they do for
a single-tenant installation. Behind that, each tenant's ledger runs under a PostgreSQL role
that owns its schemas and reaches nothing else (``tenant_roles``, ADR 0037).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from factledger.application.access import KeyStore, check_tenant
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import database_uri, open_ledger, prepare_database, startup_lock
from factledger.infrastructure.config import Settings
from factledger.infrastructure.event_store import connection_options
from factledger.infrastructure.keys import InMemoryKeyStore, PostgresKeyStore
from factledger.infrastructure.ledgers import LIVE, LedgerCatalog
from factledger.infrastructure.memory import memory_store
from factledger.infrastructure.tenant_roles import check_role_creation, ensure_tenant_role, schema_role

logger = logging.getLogger(__name__)

# How often a tenant's live ledger is looked up again, so a promote done by
# another process (the CLI, another server) is seen within this many seconds.
LIVE_RECHECK_S = 2.0


def tenant_schema(tenant: str, base: str = "public") -> str:
    """The schema holding a tenant's ledgers: ``t_<tenant>`` for the default base schema, and
    ``t<6 hex of the base>_<tenant>`` for another one, so installations in other base schemas
    of one database keep their tenants apart. At most 24 characters, like any base schema."""
    check_tenant(tenant)
    if base == "public":
        return f"t_{tenant}"
    return f"t{hashlib.sha256(base.encode()).hexdigest()[:6]}_{tenant}"


def open_key_store(settings: Settings) -> KeyStore:
    """The key store of an installation (its base schema), creating the table if needed."""
    if settings.backend == "memory":  # the keys live beside the ledgers: the settings' memory_database
        return settings.memory_database.held("keys", str(settings.home), settings.schema, InMemoryKeyStore)
    options = connection_options(settings.statement_timeout, settings.lock_timeout)
    uri = database_uri(settings)
    with startup_lock(uri) as conn:  # the schema and table, created once whoever starts first
        if settings.tenant_roles:
            check_role_creation(conn)
        prepare_database(conn, settings.schema)
        return PostgresKeyStore(uri, settings.schema, options)


@attrs.define
class _Opened:
    tenant: str
    service: LedgerService
    live: object  # what identifies the live ledger: its schema, or the in-memory ledger object
    checked_at: float


class Tenants:
    """Opens (once) and hands out the ``LedgerService`` of each tenant."""

    def __init__(self, settings: Settings, opener: Callable[..., LedgerService] = open_ledger, **parts: Any) -> None:
        self.settings = settings
        self._opener = opener
        self._parts = parts  # extractor / judge / embedder overrides (tests, custom deployments)
        self._opened: dict[str, _Opened] = {}
        self._lock = threading.Lock()
        self._opening: dict[str, threading.Lock] = {}
        # Replaced services may still serve a request that began before the promote: closed at the end.
        self._retired: list[LedgerService] = []
        self._uri: str | None = None
        self._roles: dict[str, str | None] = {}  # each opened tenant's PostgreSQL role (None: the login role)

    def settings_for(self, tenant: str) -> Settings:
        return attrs.evolve(self.settings, schema=tenant_schema(tenant, self.settings.schema))

    def service(self, tenant: str) -> LedgerService:
        """The tenant's live ledger, opened on first use (and again after a promote)."""
        check_tenant(tenant)
        opened = self._opened.get(tenant)
        if opened is not None and not self._stale(opened):
            return opened.service
        with self._lock:
            gate = self._opening.setdefault(tenant, threading.Lock())
        with gate:  # one opener per tenant; others wait for it instead of opening twice
            opened = self._opened.get(tenant)
            if opened is not None and not self._stale(opened):
                return opened.service
            self._prepare_role(tenant)
            fresh = self._opener(self.settings_for(tenant), warn_if_offline=False, **self._parts)
            previous = self._opened.get(tenant)
            self._opened[tenant] = _Opened(tenant, fresh, self._live(tenant), time.monotonic())
        if previous is not None:
            logger.info("tenant %s: the live ledger changed; reopened", tenant)
            self._retired.append(previous.service)
        return fresh

    def _prepare_role(self, tenant: str) -> None:
        """The tenant's PostgreSQL role, made (or what the tenant had before roles handed to it)
        before its ledger opens, so that the ledger runs as it (ADR 0037)."""
        if self.settings.backend == "memory" or tenant in self._roles:
            return
        schema = self.settings_for(tenant).schema
        self._uri = self._uri or database_uri(self.settings)
        with startup_lock(self._uri) as conn:
            prepare_database(conn, schema)
            if self.settings.tenant_roles:
                self._roles[tenant] = ensure_tenant_role(conn, schema)
                return
            self._roles[tenant] = schema_role(conn, schema)
        logger.warning(
            "tenant %s runs as the database user (FACTLEDGER_TENANT_ROLES=false): its isolation is by "
            "schema name alone",
            tenant,
        )

    def reopen(self, tenant: str) -> None:
        """Forget the cached service (after this process promoted a ledger)."""
        with self._lock:
            opened = self._opened.pop(tenant, None)
        if opened is not None:
            self._retired.append(opened.service)

    def opened(self) -> dict[str, LedgerService]:
        """The tenants opened so far (for metrics and readiness)."""
        return {name: o.service for name, o in list(self._opened.items())}

    def _live(self, tenant: str) -> object:
        if self.settings.backend == "memory":
            return memory_store(self.settings_for(tenant)).get(LIVE)
        options = connection_options(
            self.settings.statement_timeout, self.settings.lock_timeout, self._roles.get(tenant)
        )
        self._uri = self._uri or database_uri(self.settings)
        catalog = LedgerCatalog(self._uri, self.settings_for(tenant).schema, options)
        return catalog.entry(LIVE).schema

    def _stale(self, opened: _Opened) -> bool:
        """Whether the tenant's live ledger is another one than the service's (a promote)."""
        now = time.monotonic()
        if self.settings.backend != "memory" and now - opened.checked_at < LIVE_RECHECK_S:
            return False
        opened.checked_at = now
        try:
            live = self._live(opened.tenant)
        except Exception:  # the database is away: keep serving what is open, readiness reports it
            logger.warning("tenant %s: could not look up the live ledger", opened.tenant, exc_info=True)
            return False
        return live != opened.live if isinstance(live, str) else live is not opened.live

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, {}
            retired, self._retired = self._retired, []
        for service in [*retired, *(entry.service for entry in opened.values())]:
            service.close()
