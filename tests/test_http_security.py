"""Security of the served API: who a correction is recorded as, which hosts ``/mcp`` answers
under ``serve``, failed authentications limited per client address, and the ``mcp`` pin."""

from __future__ import annotations

import importlib.metadata
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from packaging.requirements import Requirement

from factledger.application.access import Scope
from factledger.application.errors import ConfigError
from factledger.entrypoints.http import create_app
from factledger.entrypoints.ratelimit import FailedAuthentications
from factledger.infrastructure.config import Settings

ROOT = Path(__file__).resolve().parent.parent


def test_the_mcp_pin_admits_the_api_the_code_imports_and_no_other_major() -> None:
    """The code imports ``mcp.server.mcpserver`` and ``mcp_types`` (the 2.x layout): the extra
    must not let pip pick a 1.x release, nor a 3.x one nobody has run it on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    pins = [Requirement(r) for group in ("server", "test") for r in extras[group] if Requirement(r).name == "mcp"]
    assert len(pins) == 2, pins
    installed = importlib.metadata.version("mcp")
    for pin in pins:
        assert pin.specifier.contains(installed), (pin, installed)
        for outside in ("1.9.0", "1.26.0", "3.0.0"):
            assert not pin.specifier.contains(outside), (pin, outside)
    import mcp.server.mcpserver  # noqa: F401  the modules the pin promises
    import mcp_types  # noqa: F401


@pytest.fixture
def app_and_keys(tmp_path: Path) -> Iterator[tuple[TestClient, Any]]:
    settings = Settings(home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0)
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        yield client, app.state.keys


def test_a_correction_is_recorded_as_the_keys_and_a_body_actor_only_as_its_claim(
    app_and_keys: tuple[TestClient, Any],
) -> None:
    client, keys = app_and_keys
    issued = keys.create("acme", Scope.WRITE, "ops-console")
    key = {"Authorization": f"Bearer {issued.token}"}
    said = client.post("/v1/users/u1/messages", json={"message": "我在杭州工作，我住在杭州"}, headers=key)
    assert said.status_code == 201, said.text
    facts = client.get("/v1/users/u1/profile", headers=key).json()["facts"]
    first = next(f["id"] for group in facts.values() for f in group)
    forged = f"api:{'0' * 12} (admin)"
    response = client.post(
        f"/v1/users/u1/items/{first}/invalidate", json={"reason": "用户说不对", "actor": forged}, headers=key
    )
    assert response.status_code == 200, response.text
    invalidation = client.get(f"/v1/users/u1/items/{first}", headers=key).json()["invalidated"]
    assert invalidation["actor"] == f"api:{issued.key.key_id} (ops-console), claimed: {forged}", invalidation
    restated = client.post(
        "/v1/users/u1/facts", json={"text": "用户住在南京", "category": "location", "actor": "ops"}, headers=key
    )
    assert restated.status_code == 201, restated.text
    observed = client.get(f"/v1/users/u1/items/{restated.json()['id']}", headers=key).json()["observed"]
    assert observed["actor"] == f"api:{issued.key.key_id} (ops-console), claimed: ops", observed
    plain = client.post("/v1/users/u1/facts", json={"text": "用户在南京工作", "category": "work"}, headers=key)
    observed = client.get(f"/v1/users/u1/items/{plain.json()['id']}", headers=key).json()["observed"]
    assert observed["actor"] == f"api:{issued.key.key_id} (ops-console)", observed  # no claim, nothing beside it


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}


def mcp_answer(client: TestClient, token: str, host: str, origin: str | None = None) -> int:
    headers = {
        "Authorization": f"Bearer {token}",
        "Host": host,
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    } | ({"Origin": origin} if origin else {})
    return client.post("/mcp/", json=INITIALIZE, headers=headers).status_code


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0"])
def test_mcp_under_serve_answers_only_the_hosts_it_is_meant_for(tmp_path: Path, bind: str) -> None:
    """A page on evil.example whose name was rebound to this machine cannot reach ``/mcp``: the
    Host must be localhost, the address listened on, or one of FACTLEDGER_ALLOWED_HOSTS."""
    settings = Settings(
        home=tmp_path,
        backend="memory",
        schema=f"m_{uuid.uuid4().hex[:12]}",
        host=bind,
        allowed_hosts="memory.example.com, 10.1.2.3:8443",
    )
    app = create_app(settings)
    token = app.state.keys.create("acme", Scope.WRITE, "agent").token
    with TestClient(app) as client:
        assert mcp_answer(client, token, "evil.example") == 421
        assert mcp_answer(client, token, "evil.example:8000") == 421
        assert mcp_answer(client, token, "10.1.2.3:9999") == 421  # that host on another port only
        assert mcp_answer(client, token, "localhost:8000", origin="http://evil.example") == 403
        for good in (
            "localhost:8000",
            "127.0.0.1:8000",
            "memory.example.com",
            "memory.example.com:443",
            "10.1.2.3:8443",
        ):
            assert mcp_answer(client, token, good) == 200, good
        assert mcp_answer(client, token, "localhost:8000", origin="http://localhost:3000") == 200
        assert client.get("/healthz", headers={"Host": "evil.example"}).status_code == 200  # REST is not MCP


def test_allowed_hosts_star_turns_the_check_off_and_a_bad_entry_is_refused(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", allowed_hosts="*")
    app = create_app(settings)
    token = app.state.keys.create("acme", Scope.WRITE, "agent").token
    with TestClient(app) as client:
        assert mcp_answer(client, token, "anything.example") == 200
    with pytest.raises(ConfigError, match="FACTLEDGER_ALLOWED_HOSTS"):
        Settings.load({"FACTLEDGER_ALLOWED_HOSTS": "http://memory.example.com/", "FACTLEDGER_HOME": str(tmp_path)})


def test_failed_authentications_are_limited_per_client_address_before_any_lookup(tmp_path: Path) -> None:
    """Past FACTLEDGER_AUTH_FAILURE_LIMIT wrong keys a minute, an address gets 429 with Retry-After
    on REST and MCP alike without its key being looked up; another address is not held back."""
    settings = Settings(
        home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", auth_failure_limit=3, host="127.0.0.1"
    )
    app = create_app(settings)
    keys = app.state.keys
    good = keys.create("acme", Scope.WRITE, "agent").token
    lookups: list[str] = []
    authenticate = keys.authenticate

    def counted(token: str) -> Any:
        lookups.append(token)
        return authenticate(token)

    keys.authenticate = counted
    wrong = {"Authorization": "Bearer flk_000000000000_" + "x" * 43}
    with TestClient(app, client=("203.0.113.7", 4000)) as attacker:
        for _ in range(3):
            assert attacker.get("/v1/users/u1/profile", headers=wrong).status_code == 401
        assert len(lookups) == 3
        for headers in (wrong, {"Authorization": f"Bearer {good}"}):
            refused = attacker.get("/v1/users/u1/profile", headers=headers)
            assert refused.status_code == 429, refused.text
            assert int(refused.headers["Retry-After"]) >= 1 and refused.json()["type"].endswith("too-many-failures")
        assert mcp_answer(attacker, good, "localhost:8000") == 429
        assert len(lookups) == 3  # nothing was looked up once the address was held back
        neighbour = TestClient(app, client=("198.51.100.9", 4000))  # the same app, another address
        assert neighbour.get("/v1/users/u1/profile", headers={"Authorization": f"Bearer {good}"}).status_code == 200
        assert len(lookups) == 4


def test_the_failure_budgets_of_addresses_that_stopped_are_dropped() -> None:
    """Many addresses failing once each do not grow the table without end."""
    failures = FailedAuthentications(per_minute=60)
    failures.PRUNE_AT = 100
    for n in range(250):
        failures.failed(f"198.51.100.{n}")
        assert failures.held_back_for(f"198.51.100.{n}") == 0  # one failure holds nobody back
    assert failures._buckets.tracked() <= 101  # addresses not held back went at each pruning
    for _ in range(60):
        failures.failed("203.0.113.7")
    for n in range(250):
        failures.failed(f"192.0.2.{n}")
    assert failures.held_back_for("203.0.113.7") > 0  # a guesser held back stays held back
