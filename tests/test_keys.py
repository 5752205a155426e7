"""API keys: one contract for both stores, and the ``factledger keys`` commands."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from processes import run_cli, run_cli_json
from psycopg.sql import SQL, Identifier

from factledger.application.access import KeyStore, NotAuthenticated, Scope, check_tenant
from factledger.application.errors import InvalidInput, NotFound
from factledger.infrastructure.config import Settings
from factledger.infrastructure.tenants import open_key_store, tenant_schema


@pytest.fixture
def keys(settings: Settings) -> Iterator[KeyStore]:
    store = open_key_store(settings)
    yield store
    store.close()


def test_a_key_is_shown_once_stored_hashed_and_maps_to_its_tenant(keys: KeyStore, settings: Settings) -> None:
    issued = keys.create("acme", Scope.READ, "mobile app")
    assert issued.token.startswith(f"flk_{issued.key.key_id}_")
    key = keys.authenticate(issued.token)
    assert (key.tenant, key.scope, key.label) == ("acme", Scope.READ, "mobile app")
    assert key.allows(Scope.READ) and not key.allows(Scope.WRITE)
    listed = keys.list("acme")
    assert [k.key_id for k in listed] == [issued.key.key_id] and "token" not in listed[0].to_dict()
    assert keys.list("globex") == []
    if settings.backend == "postgres":  # the secret is nowhere in the table
        secret = issued.token.split("_", 2)[2]  # the secret itself may hold "_"
        with psycopg.connect(settings.database_url or "") as conn:
            dump = str(
                conn.execute(
                    SQL("SELECT * FROM {}").format(Identifier(settings.schema, "factledger_api_keys"))
                ).fetchall()
            )
        assert issued.key.key_id in dump and secret not in dump


@pytest.mark.parametrize(
    "token",
    ["", "flk_", "Bearer flk_x", "flk_000000000000_" + "a" * 43, "sk-1234567890abcdef", "flk_zzzzzzzzzzzz_" + "a" * 43],
)
def test_anything_but_an_issued_key_is_refused(keys: KeyStore, token: str) -> None:
    keys.create("acme", Scope.ADMIN)
    with pytest.raises(NotAuthenticated):
        keys.authenticate(token)


def test_a_revoked_or_altered_key_is_refused(keys: KeyStore) -> None:
    issued = keys.create("acme", Scope.WRITE)
    altered = issued.token[:-1] + ("a" if issued.token[-1] != "a" else "b")
    with pytest.raises(NotAuthenticated, match="not valid"):
        keys.authenticate(altered)
    revoked = keys.revoke(issued.key.key_id)
    assert revoked.revoked_at is not None and keys.revoke(issued.key.key_id).revoked_at == revoked.revoked_at
    with pytest.raises(NotAuthenticated, match="revoked"):
        keys.authenticate(issued.token)
    with pytest.raises(NotFound):
        keys.revoke("000000000000")


@pytest.mark.parametrize("tenant", ["", "Acme", "a-b", "a__b", "_a", "1a", "a" * 17, "a b", "ä"])
def test_tenant_names_are_plain(keys: KeyStore, tenant: str) -> None:
    with pytest.raises(InvalidInput, match="tenant"):
        keys.create(tenant, Scope.READ)


def test_tenant_schemas_stay_apart_and_short() -> None:
    assert tenant_schema("acme") == "t_acme"
    other = tenant_schema("acme", "prod")
    assert other != "t_acme" and other != tenant_schema("acme", "staging") and len(other) <= 24
    assert len(tenant_schema("a" * 16, "x" * 24)) <= 24
    assert check_tenant("a1_b2") == "a1_b2"
    with pytest.raises(InvalidInput):
        Scope.parse("root")


@pytest.mark.pg_only
def test_keys_commands(cli_env: dict[str, str]) -> None:
    tenant = f"t{uuid.uuid4().hex[:8]}"
    created = run_cli_json(cli_env, "keys", "create", "--tenant", tenant, "--scope", "admin", "--label", "ops")
    assert created["token"].startswith("flk_") and created["scope"] == "admin"
    plain = run_cli(cli_env, "keys", "create", "--tenant", tenant, "-q").stdout.strip()
    assert plain.startswith("flk_") and "\n" not in plain
    listed = run_cli_json(cli_env, "keys", "list", "--tenant", tenant)
    assert {k["key_id"] for k in listed} == {created["key_id"], plain.split("_")[1]}
    assert all("token" not in k for k in listed)
    assert "active" in run_cli(cli_env, "keys", "list").stdout
    revoked = run_cli_json(cli_env, "keys", "revoke", created["key_id"])
    assert revoked["revoked_at"]
    assert run_cli(cli_env, "keys", "revoke", "nope", expect=3).stderr
    assert "tenant" in run_cli(cli_env, "keys", "create", "--tenant", "Bad Name", expect=2).stderr
    assert run_cli(cli_env, "keys", "create", "--tenant", tenant, "--scope", "root", expect=2).stderr
