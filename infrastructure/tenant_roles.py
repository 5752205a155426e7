"""A PostgreSQL role per tenant: defence in depth behind the schema-per-tenant isolation.

Each tenant's ledger runs under a ``NOLOGIN`` role of its own (every connection opens with
``-c role=…``, so a ``RESET ROLE`` or ``DISCARD ALL`` falls back to it, not to the login user).
The role owns the tenant's schemas and everything in them: eventsourcing and the read model
create their tables and indexes with ``IF NOT EXISTS`` at each start and migrate them with
``ALTER TABLE``, which PostgreSQL allows the owner only. It is granted ``CREATE`` on the
database, because a replay and a read-model rebuild create schemas of their own (which it
then owns). It is granted nothing on any other schema: another tenant's tables, the shared
key table and the installation's own ledger answer "permission denied" (ADR 0037).

The role is made, and what the tenant had before roles existed handed to it, whenever a
tenant is opened: once per process, idempotently, under the startup lock.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from factledger.infrastructure.config import ConfigError

logger = logging.getLogger(__name__)

ROLE_PREFIX = "fl_"
CATALOG_TABLE = "factledger_ledgers"


def tenant_role_name(database: str, schema: str) -> str:
    """The role of the ledger in ``schema`` of ``database``: roles are shared by every database of
    a server, so the database's hash keeps two installations' tenants of one name apart."""
    return f"{ROLE_PREFIX}{hashlib.sha256(database.encode()).hexdigest()[:8]}_{schema}"


def schema_role(conn: psycopg.Connection[Any], schema: str) -> str | None:
    """The tenant role the ledger in ``schema`` runs under: its derived role when that role exists
    and owns the schema (a tenant, also when the CLI opens it), else None (the login role)."""
    row = conn.execute(
        "SELECT r.rolname FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner "
        "WHERE n.nspname = %s AND r.rolname = %s",
        (schema, tenant_role_name(_database(conn), schema)),
    ).fetchone()
    return None if row is None else str(row[0])


def run_as_schema_role(conn: psycopg.Connection[Any], schema: str) -> str | None:
    """``schema_role``, and the rest of ``conn``'s session run as it: what a ledger's opening
    creates in a tenant's schemas is then the tenant's."""
    role = schema_role(conn, schema)
    if role is not None:
        conn.execute(SQL("SET ROLE {}").format(Identifier(role)))
    return role


NO_CREATEROLE = (
    "grant it CREATEROLE (each tenant runs under a role that reaches only its own schemas), "
    "or set FACTLEDGER_TENANT_ROLES=false to run every tenant as the database user"
)


def check_role_creation(conn: psycopg.Connection[Any]) -> None:
    """A ``ConfigError`` unless the login role may create tenants' roles: a server (or ``keys
    create``) refuses to start rather than fail each new tenant's first request."""
    row = conn.execute("SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user").fetchone()
    if row is None or not row[0]:
        raise ConfigError(f"the database user may not create roles: {NO_CREATEROLE}")
    _check_database_grant(conn)


def _check_database_grant(conn: psycopg.Connection[Any]) -> None:
    """Replays and rebuilds make schemas, so a tenant's role needs CREATE on the database, which
    only its owner (or one holding it WITH GRANT OPTION) can give: PostgreSQL only warns."""
    row = conn.execute(
        "SELECT has_database_privilege(current_database(), 'CREATE WITH GRANT OPTION'), current_database()"
    ).fetchone()
    if row is None or not row[0]:
        raise ConfigError(
            f"the database user may not grant CREATE on the database {row[1] if row else ''!r} to the tenants' "
            "roles (replays and rebuilds make schemas): make it the database's owner, grant it CREATE WITH "
            "GRANT OPTION, or set FACTLEDGER_TENANT_ROLES=false to run every tenant as the database user"
        )


def ensure_tenant_role(conn: psycopg.Connection[Any], schema: str) -> str:
    """Create the role of the tenant in ``schema`` if missing and hand it that tenant's schemas
    (the base one and every named ledger's) with all they hold. ``conn``: the login role's,
    autocommit, under the startup lock. A login role that may not create roles is a
    ``ConfigError`` naming the setting that turns roles off."""
    role = tenant_role_name(_database(conn), schema)
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
        try:
            conn.execute(SQL("CREATE ROLE {} NOLOGIN").format(Identifier(role)))
        except psycopg.errors.InsufficientPrivilege:
            raise ConfigError(
                f"the database user cannot create the role {role!r} for the tenant schema {schema!r}: {NO_CREATEROLE}"
            ) from None
        logger.info("created the role %s for the tenant schema %s", role, schema)
    _grant_membership(conn, role)
    _check_database_grant(conn)
    conn.execute(SQL("GRANT CREATE ON DATABASE {} TO {}").format(Identifier(_database(conn)), Identifier(role)))
    for owned in _tenant_schemas(conn, schema):
        _hand_over(conn, owned, role)
    _warn_public_create(conn, role)
    return role


def _database(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute("SELECT current_database()").fetchone()
    assert row is not None
    return str(row[0])


def _grant_membership(conn: psycopg.Connection[Any], role: str) -> None:
    """The login role must be allowed to ``SET ROLE`` to it (a superuser always is; a CREATEROLE
    user since PostgreSQL 16 holds only ADMIN on what it created)."""
    # Since 16 a membership may withhold SET (the one CREATE ROLE gives its creator does).
    right = "SET" if conn.info.server_version >= 160000 else "MEMBER"
    row = conn.execute(
        "SELECT rolsuper OR pg_has_role(current_user, %s, %s) FROM pg_roles WHERE rolname = current_user",
        (role, right),
    ).fetchone()
    if row is None or not row[0]:
        conn.execute(SQL("GRANT {} TO CURRENT_USER").format(Identifier(role)))


def _tenant_schemas(conn: psycopg.Connection[Any], schema: str) -> list[str]:
    """The tenant's schema and those of its named ledgers (replays, previous live ledgers).

    The catalog is the tenant's own table, so what it lists is believed only for names a
    ledger of this tenant can have, ``<schema>__…`` (a tenant's name has no ``__``): a row
    naming the base schema or another tenant's never hands that schema over."""
    found = [schema]
    table = conn.execute("SELECT to_regclass(%s)", (f'"{schema}"."{CATALOG_TABLE}"',)).fetchone()
    if table is not None and table[0] is not None:
        rows = conn.execute(
            SQL("SELECT c.schema_name FROM {} AS c JOIN pg_namespace n ON n.nspname = c.schema_name").format(
                Identifier(schema, CATALOG_TABLE)
            )
        ).fetchall()
        found += [str(r[0]) for r in rows if str(r[0]).startswith(f"{schema}__")]
    return found


def _hand_over(conn: psycopg.Connection[Any], schema: str, role: str) -> None:
    """Make ``role`` the owner of ``schema`` and of what it holds, where it is not already. Only a
    schema the login role owns is taken: one some other role made first is refused, not adopted."""
    owner = conn.execute(
        "SELECT r.rolname, r.rolname = current_user FROM pg_namespace n JOIN pg_roles r ON r.oid = n.nspowner "
        "WHERE n.nspname = %s",
        (schema,),
    ).fetchone()
    if owner is None or owner[0] == role:
        _hand_over_contents(conn, schema, role)
        return
    if not owner[1]:
        raise ConfigError(
            f"schema {schema!r} belongs to the role {owner[0]!r}, neither the database user nor the tenant's "
            f"role {role!r}: refusing to hand it to the tenant"
        )
    conn.execute(SQL("ALTER SCHEMA {} OWNER TO {}").format(Identifier(schema), Identifier(role)))
    logger.info("schema %s now belongs to the tenant role %s", schema, role)
    _hand_over_contents(conn, schema, role)


# Relations not yet the role's: tables first (their indexes, owned sequences and row types follow
# them), then what is left (free-standing sequences); each with the ALTER that changes its owner.
_RELATIONS = """
SELECT c.relname, CASE c.relkind WHEN 'S' THEN 'SEQUENCE' WHEN 'v' THEN 'VIEW'
       WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %s AND c.relkind = ANY(%s) AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = %s)
ORDER BY c.relname
"""


def _hand_over_contents(conn: psycopg.Connection[Any], schema: str, role: str) -> None:
    for kinds in (["r", "p", "v", "m", "f"], ["S"]):
        for name, kind in conn.execute(_RELATIONS, (schema, kinds, role)).fetchall():
            conn.execute(SQL("ALTER {} {} OWNER TO {}").format(SQL(kind), Identifier(schema, name), Identifier(role)))
    # Functions and free-standing types: factledger makes none, but a schema handed over keeps no
    # object the role cannot change.
    for (signature,) in conn.execute(
        "SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = %s AND p.proowner <> (SELECT oid FROM pg_roles WHERE rolname = %s)",
        (schema, role),
    ).fetchall():
        conn.execute(SQL("ALTER ROUTINE {} OWNER TO {}").format(SQL(signature), Identifier(role)))
    for (name,) in conn.execute(
        "SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
        "LEFT JOIN pg_class c ON c.oid = t.typrelid "
        "WHERE n.nspname = %s AND t.typowner <> (SELECT oid FROM pg_roles WHERE rolname = %s) "
        "AND (t.typrelid = 0 OR c.relkind = 'c') AND NOT EXISTS (SELECT 1 FROM pg_type a WHERE a.typarray = t.oid)",
        (schema, role),
    ).fetchall():
        conn.execute(SQL("ALTER TYPE {} OWNER TO {}").format(Identifier(schema, name), Identifier(role)))


def _warn_public_create(conn: psycopg.Connection[Any], role: str) -> None:
    """Before PostgreSQL 15 every role may create objects in ``public``: say so once per open, since
    revoking it is the database owner's decision (it changes what every application may do)."""
    row = conn.execute(
        "SELECT has_schema_privilege(%s, oid, 'CREATE') FROM pg_namespace WHERE nspname = 'public'", (role,)
    ).fetchone()
    if row is not None and row[0]:
        logger.warning(
            "every role may create objects in the schema public, tenant roles too: run "
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC (the default since PostgreSQL 15)"
        )
