"""Defence in depth for tenants: each tenant's ledger runs under a PostgreSQL role of its own.

The schema per tenant keeps ids apart (tests/test_http_tenants.py); these tests go under it and
try to cross by SQL, on the very connections a tenant's requests use: another tenant's events,
read model and catalog, the shared key table and the installation's own schema all answer
"permission denied", and the role cannot be shed by resetting the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.sql import SQL, Identifier

from factledger.application.access import Scope
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import ConfigError, Settings
from factledger.infrastructure.tenant_roles import tenant_role_name
from factledger.infrastructure.tenants import Tenants, open_key_store, tenant_schema


def _drop_tenants(pg_uri: str, base: str, tenants: list[str]) -> None:
    """Tenant schemas and roles outlive the test's base schema: remove them."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        database = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        for tenant in tenants:
            schema = tenant_schema(tenant, base)
            role = tenant_role_name(database, schema)
            conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))
            if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
                conn.execute(SQL("DROP OWNED BY {} CASCADE").format(Identifier(role)))
                conn.execute(SQL("DROP ROLE {}").format(Identifier(role)))


@pytest.fixture
def pg_settings(pg_uri: str, schema: str, tmp_path: Path) -> Iterator[Settings]:
    yield Settings(home=tmp_path / "home", database_url=pg_uri, schema=schema)
    _drop_tenants(pg_uri, schema, ["alpha", "beta", "legacy", "plain"])


@pytest.fixture
def tenants(pg_settings: Settings) -> Iterator[Tenants]:
    opened = Tenants(pg_settings)
    yield opened
    opened.close()


def _datastore(service: LedgerService) -> Any:
    return service.ledger.recorder.datastore  # type: ignore[attr-defined]


def _attempt(service: LedgerService, statement: SQL | Any) -> None:
    """Run one statement on a connection of the tenant's own pool (rolled back)."""
    with _datastore(service).get_connection() as conn, conn.transaction(force_rollback=True):
        conn.execute(statement)


def _denied(service: LedgerService, statement: Any) -> bool:
    try:
        _attempt(service, statement)
    except Exception as exc:  # eventsourcing wraps psycopg's errors; the cause says which
        cause = exc if isinstance(exc, psycopg.Error) else exc.__cause__
        return isinstance(cause, psycopg.errors.InsufficientPrivilege)
    return False


def test_a_tenants_connections_cannot_read_or_write_another_tenants_tables(
    tenants: Tenants, pg_settings: Settings
) -> None:
    alpha, beta = tenants.service("alpha"), tenants.service("beta")
    beta.ingest("bob", "I live in Bristol and I love jazz")
    alpha.ingest("ann", "I live in Lyon")
    theirs = tenant_schema("beta", pg_settings.schema)
    events, memories = Identifier(theirs, "factledger_events"), Identifier(theirs, "memories")
    # The same statements on alpha's own tables work: the denials below are about whose tables.
    mine = tenant_schema("alpha", pg_settings.schema)
    _attempt(alpha, SQL("SELECT count(*) FROM {}").format(Identifier(mine, "factledger_events")))
    _attempt(alpha, SQL("SELECT count(*) FROM {}").format(Identifier(mine, "memories")))
    crossings = {
        "read events": SQL("SELECT * FROM {}").format(events),
        "read the read model": SQL("SELECT * FROM {}").format(memories),
        "read the catalog": SQL("SELECT * FROM {}").format(Identifier(theirs, "factledger_ledgers")),
        "write events": SQL("DELETE FROM {}").format(events),
        "write the read model": SQL("UPDATE {} SET user_id = 'x'").format(memories),
        "create a table there": SQL("CREATE TABLE {} (x int)").format(Identifier(theirs, "planted")),
        "drop their table": SQL("DROP TABLE {}").format(memories),
    }
    allowed = [what for what, statement in crossings.items() if not _denied(alpha, statement)]
    assert not allowed, f"tenant alpha's connection could {allowed} in tenant beta's schema"
    assert beta.profile("bob").facts, "beta's memories must be intact"


def test_a_tenant_cannot_reach_the_shared_tables_nor_shed_its_role(tenants: Tenants, pg_settings: Settings) -> None:
    open_key_store(pg_settings).create("beta", Scope.READ)
    alpha = tenants.service("alpha")
    base = pg_settings.schema
    for statement in (
        SQL("SELECT * FROM {}").format(Identifier(base, "factledger_api_keys")),
        SQL("SELECT * FROM {}").format(Identifier(base, "factledger_ledgers")),
        SQL("CREATE TABLE {} (x int)").format(Identifier(base, "planted")),
        SQL("CREATE TABLE public.planted (x int)"),
    ):
        assert _denied(alpha, statement), statement.as_string(None)
    with _datastore(alpha).get_connection() as conn:
        database = conn.execute("SELECT current_database() AS d").fetchone()["d"]
        role = tenant_role_name(database, tenant_schema("alpha", base))
        assert conn.execute("SELECT current_user AS u").fetchone()["u"] == role
        for reset in ("RESET ROLE", "RESET ALL", "DISCARD ALL"):
            conn.execute(reset)
            assert conn.execute("SELECT current_user AS u").fetchone()["u"] == role, reset
        row = conn.execute("SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        assert row == {"rolcanlogin": False, "rolsuper": False}


def test_two_tenants_work_as_before_under_their_roles(tenants: Tenants, pg_settings: Settings) -> None:
    for tenant, city in (("alpha", "Lyon"), ("beta", "Bristol")):
        service = tenants.service(tenant)
        service.ingest("sam", f"I live in {city} and I love jazz")
        service.ingest("kim", "I work as a nurse")
        assert any(city in hit.record.content for hit in service.recall("sam", "where does sam live"))
        assert service.profile("kim").facts
        report = service.replay("again", "offline")
        assert report.finished and report.replayed == 2
        service.promote("again")
        tenants.reopen(tenant)
        service = tenants.service(tenant)
        assert any(city in f.text for f in service.profile("sam").facts)
        service.forget("kim")
        assert not service.profile("kim").facts
        service.rebuild_read_model()  # in a schema of its own, made by the tenant's role
        assert any(city in f.text for f in service.profile("sam").facts)
        # Every schema the tenant now has (its base one, the replay, the previous live ledger)
        # is its role's, and so is every table in them.
        schema = tenant_schema(tenant, pg_settings.schema)
        with _datastore(service).get_connection() as conn:
            role = conn.execute("SELECT current_user AS u").fetchone()["u"]
            assert role == tenant_role_name(conn.execute("SELECT current_database() AS d").fetchone()["d"], schema)
            foreign = conn.execute(
                "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE (n.nspname = %s OR n.nspname LIKE %s) AND c.relowner <> (SELECT oid FROM pg_roles "
                "WHERE rolname = current_user)",
                (schema, f"{schema}\\_\\_%"),
            ).fetchall()
            assert not foreign


def test_a_tenant_made_before_roles_gets_one_on_first_use(tenants: Tenants, pg_settings: Settings) -> None:
    # What the code before tenant roles did: the tenant's ledger opened as the login user.
    before = open_ledger(tenants.settings_for("legacy"), warn_if_offline=False)
    before.ingest("lou", "I live in Porto")
    before.replay("older", "offline")  # a named ledger in a schema of its own, also the login user's
    with _datastore(before).get_connection() as conn:
        login = conn.execute("SELECT current_user AS u").fetchone()["u"]
    before.close()
    schema = tenant_schema("legacy", pg_settings.schema)
    with psycopg.connect(str(pg_settings.database_url), autocommit=True) as conn:
        database = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
    role = tenant_role_name(database, schema)
    assert login != role

    service = tenants.service("legacy")
    assert any("Porto" in f.text for f in service.profile("lou").facts)
    service.ingest("lou", "I work as a baker")
    with _datastore(service).get_connection() as conn:
        assert conn.execute("SELECT current_user AS u").fetchone()["u"] == role
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s OR n.nspname LIKE %s "
            "UNION SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s OR nspname LIKE %s",
            (schema, f"{schema}\\_\\_%", schema, f"{schema}\\_\\_%"),
        ).fetchall()
        assert [row["owner"] for row in owners] == [role]
        older = conn.execute(SQL("SELECT count(*) AS n FROM {}").format(Identifier(schema, "factledger_ledgers")))
        assert older.fetchone()["n"] == 2  # live and older, both readable as the role
    # The CLI (or anything opening the tenant's schema) runs as the role too.
    again = open_ledger(tenants.settings_for("legacy"), warn_if_offline=False)
    try:
        with _datastore(again).get_connection() as conn:
            assert conn.execute("SELECT current_user AS u").fetchone()["u"] == role
    finally:
        again.close()


def test_a_tenant_cannot_claim_a_schema_through_its_catalog(pg_settings: Settings) -> None:
    """The catalog is the tenant's own table: a row naming the base schema (the key table's) must
    not get that schema handed to the tenant's role when the tenant is next opened."""
    open_key_store(pg_settings).create("alpha", Scope.READ)
    first = Tenants(pg_settings)
    try:
        first.service("alpha")
    finally:
        first.close()
    # The row a tenant could write into its own catalog (written here as the login user).
    with psycopg.connect(str(pg_settings.database_url), autocommit=True) as conn:
        conn.execute(
            SQL("INSERT INTO {} (name, schema_name) VALUES ('claim', %s)").format(
                Identifier(tenant_schema("alpha", pg_settings.schema), "factledger_ledgers")
            ),
            (pg_settings.schema,),
        )
        login = conn.execute("SELECT current_user").fetchone()[0]  # type: ignore[index]
    second = Tenants(pg_settings)
    try:  # the forged row breaks only the tenant that wrote it: its role may not read that schema
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            second.service("alpha")
    finally:
        second.close()
    with psycopg.connect(str(pg_settings.database_url), autocommit=True) as conn:
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s "
            "UNION SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
            (pg_settings.schema, pg_settings.schema),
        ).fetchall()
    assert owners == [(login,)]


@contextmanager
def _login_user(pg_uri: str, name: str, attributes: str, grant_option: bool = True) -> Iterator[str]:
    """A login user that is no superuser and may create schemas (as on managed databases)."""
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        database = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        conn.execute(SQL("DROP ROLE IF EXISTS {}").format(Identifier(name)))
        conn.execute(SQL("CREATE ROLE {} LOGIN " + attributes).format(Identifier(name)))
        grant = "GRANT CREATE ON DATABASE {} TO {}" + (" WITH GRANT OPTION" if grant_option else "")
        conn.execute(SQL(grant).format(Identifier(database), Identifier(name)))
    yield make_conninfo(**{**conninfo_to_dict(pg_uri), "user": name})
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(SQL("DROP OWNED BY {} CASCADE").format(Identifier(name)))
        conn.execute(SQL("DROP ROLE {}").format(Identifier(name)))


@pytest.fixture
def plain_user_uri(pg_uri: str) -> Iterator[str]:
    """Without CREATEROLE."""
    with _login_user(pg_uri, "fl_test_plain_user", "NOCREATEROLE") as uri:
        yield uri


def test_a_login_user_with_createrole_runs_its_tenants_under_roles(pg_settings: Settings, pg_uri: str) -> None:
    """CREATEROLE without superuser: since PostgreSQL 16 its creator may not SET ROLE to a role
    it made until it grants itself that role."""
    base = f"{pg_settings.schema}c"
    with _login_user(pg_uri, "fl_test_createrole_user", "CREATEROLE") as uri:
        tenants = Tenants(attrs.evolve(pg_settings, database_url=uri, schema=base))
        try:
            open_key_store(tenants.settings).create("plain", Scope.WRITE)
            service = tenants.service("plain")
            service.ingest("pat", "I live in Oslo")
            assert service.replay("again", "offline").finished
            assert any("Oslo" in f.text for f in service.profile("pat").facts)
            with _datastore(service).get_connection() as conn:
                database = conn.execute("SELECT current_database() AS d").fetchone()["d"]
                role = tenant_role_name(database, tenant_schema("plain", base))
                assert conn.execute("SELECT current_user AS u").fetchone()["u"] == role
        finally:
            tenants.close()
            _drop_tenants(uri, base, ["plain"])  # as the user that granted the role its rights


def test_a_login_user_that_cannot_create_roles_is_told_what_to_do(
    pg_settings: Settings, plain_user_uri: str, pg_uri: str
) -> None:
    base = f"{pg_settings.schema}p"
    strict = Tenants(attrs.evolve(pg_settings, database_url=plain_user_uri, schema=base))
    # A server (or `keys create`) opens the key store first: it stops there, before any tenant.
    with pytest.raises(ConfigError, match=r"may not create roles.*FACTLEDGER_TENANT_ROLES=false"):
        open_key_store(strict.settings)
    try:
        with pytest.raises(ConfigError, match=r"CREATEROLE.*FACTLEDGER_TENANT_ROLES=false"):
            strict.service("plain")
    finally:
        strict.close()
    relaxed = Tenants(attrs.evolve(pg_settings, database_url=plain_user_uri, schema=base, tenant_roles=False))
    try:
        open_key_store(relaxed.settings).create("plain", Scope.READ)
        service = relaxed.service("plain")
        service.ingest("pat", "I live in Oslo")
        assert service.profile("pat").facts
    finally:
        relaxed.close()
        _drop_tenants(pg_uri, base, ["plain"])
        with psycopg.connect(pg_uri, autocommit=True) as conn:
            conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(base)))


def test_a_login_user_that_cannot_pass_on_create_is_told_before_any_tenant(pg_settings: Settings, pg_uri: str) -> None:
    with _login_user(pg_uri, "fl_test_no_grant_user", "CREATEROLE", grant_option=False) as uri:
        settings = attrs.evolve(pg_settings, database_url=uri, schema=f"{pg_settings.schema}g")
        with pytest.raises(ConfigError, match=r"CREATE WITH GRANT OPTION.*FACTLEDGER_TENANT_ROLES=false"):
            open_key_store(settings)
