"""``factledger mcp``, driven by the MCP SDK's own client.

In-process (the unit tier): the tools over the SDK's in-memory transport, and
the streamable-HTTP app served by uvicorn on a real socket with in-memory
keys. As real processes (integration tier): ``factledger mcp --tenant`` on
stdio, and ``factledger mcp --http`` on PostgreSQL with keys in the key store
``factledger keys`` manages, beside a stdio server acting as one of those keys.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import psycopg
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult
from processes import CLI, spawn_cli
from psycopg.sql import SQL, Identifier

from factledger.application.access import Scope
from factledger.entrypoints.cli import main as cli
from factledger.entrypoints.mcp_server import mcp_http_app
from factledger.entrypoints.mcp_tools import Caller, build_server
from factledger.infrastructure.config import Settings
from factledger.infrastructure.keys import InMemoryKeyStore
from factledger.infrastructure.tenants import Tenants, open_key_store

EXAMPLE = "我在杭州工作，老板姓张，平时喜欢简短的回复"
TOOLS = {"remember", "recall", "get_profile", "memory_context", "explain", "forget_item"}
CJK = re.compile(r"[\u4e00-\u9fff]")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


# ---- helpers ------------------------------------------------------------------------------


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    return await client.call_tool(tool, arguments)


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await call(client, tool, **arguments)
    assert not result.is_error, f"{tool}: {result.content}"
    assert result.structured_content is not None
    return result.structured_content


async def refused(client: Client, tool: str, **arguments: Any) -> str:
    """The text of the tool error ``tool`` answers with (it must be one)."""
    result = await call(client, tool, **arguments)
    assert result.is_error, f"{tool} should have failed: {result.structured_content}"
    text = result.content[0].text  # type: ignore[union-attr]
    assert isinstance(text, str)
    return text


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_client(url: str, token: str) -> Client:
    headers = {"Authorization": f"Bearer {token}"}
    return Client(streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers)))


def assert_unauthorized(url: str, token: str | None) -> str:
    """A request with no key (``None``) or this one is answered 401 before MCP sees it."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    response = httpx.post(url, json=INITIALIZE, headers=headers, timeout=30)
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"].startswith("Bearer")
    return str(response.json()["error_description"])


# ---- what every deployment must do ------------------------------------------------------------


async def every_tool(client: Client, user: str) -> str:
    """remember, then every other tool on what was remembered, in one session; returns the actor."""
    remembered = await ok(client, "remember", user_id=user, message=EXAMPLE, session_id="s1", message_id="m1")
    assert remembered["facts"] == ["用户在杭州工作", "用户的老板姓张"]
    assert remembered["preferences"] == ["偏好简短的回复风格"]
    assert (await ok(client, "remember", user_id=user, message=EXAMPLE, message_id="m1"))["status"] == "duplicate"
    fact_id = next(item["id"] for item in remembered["items"] if item["text"] == "用户在杭州工作")

    hits = (await ok(client, "recall", user_id=user, query="在哪里工作", top_k=3))["hits"]
    assert hits[0]["id"] == fact_id and hits[0]["content"] == "用户在杭州工作"
    profile = await ok(client, "get_profile", user_id=user)
    assert (profile["facts_count"], profile["preferences_count"]) == (2, 1)

    context = await call(client, "memory_context", user_id=user, query="周末去哪玩")
    assert not context.is_error and context.structured_content is not None
    text = context.content[0].text  # type: ignore[union-attr]
    assert text == context.structured_content["text"]
    assert "已知的用户信息" in text and "- 用户在杭州工作" in text and "偏好简短的回复风格" in text
    english = await ok(client, "memory_context", user_id=user, query="weekend", language="en", top_k=2)
    assert english["text"].startswith("What is known about the user:")

    why = await ok(client, "explain", user_id=user, item_id=fact_id[:8])
    assert why["id"] == fact_id and why["is_active"] and why["observed"]["message"]["text"] == EXAMPLE

    forgotten = await ok(client, "forget_item", user_id=user, item_id=fact_id, reason="用户说不对")
    assert forgotten["id"] == fact_id
    why = await ok(client, "explain", user_id=user, item_id=fact_id)
    assert not why["is_active"]
    assert (why["invalidated"]["reason"], why["invalidated"]["actor"]) == ("用户说不对", forgotten["actor"])
    assert (await ok(client, "get_profile", user_id=user))["facts_count"] == 1
    assert fact_id not in [h["id"] for h in (await ok(client, "recall", user_id=user, query="在哪里工作"))["hits"]]
    return str(forgotten["actor"])


async def keys_decide_tenant_and_scope(url: str, a_write: str, a_read: str, b_write: str) -> None:
    """Tenant A's keys never see tenant B's users; a read key may not write."""
    async with http_client(url, b_write) as b:
        bob = await ok(b, "remember", user_id="bob", message="我住在北京")
        bob_fact = bob["items"][0]["id"]
    async with http_client(url, a_read) as a:
        for tool, args in [
            ("recall", {"query": "住在哪里"}),
            ("get_profile", {}),
            ("memory_context", {"query": "住在哪里"}),
        ]:
            seen_elsewhere = await ok(a, tool, user_id="bob", **args)
            never_seen = await ok(a, tool, user_id="nobody", **args)
            assert seen_elsewhere["known"] is False  # an empty answer, as for anybody unknown (ADR 0036)
            assert repr(seen_elsewhere).replace("'bob'", "'nobody'") == repr(never_seen)  # no hint that B has a bob
        seen_elsewhere = await refused(a, "explain", user_id="bob", item_id=bob_fact)
        never_seen = await refused(a, "explain", user_id="nobody", item_id=bob_fact)
        assert "not found: nothing is recorded for user 'bob'" in seen_elsewhere
        assert seen_elsewhere.replace("'bob'", "'nobody'") == never_seen
        for tool, args in [
            ("remember", {"message": "我住在上海"}),
            ("forget_item", {"item_id": bob_fact, "reason": "x"}),
        ]:
            denied = await refused(a, tool, user_id="bob", **args)
            assert f"access denied: {tool} needs a key with scope 'write'" in denied and "'read'" in denied
    async with http_client(url, a_write) as a:
        actor = await every_tool(a, "ann")
        assert actor.startswith("mcp:")
        assert (await ok(a, "get_profile", user_id="bob"))["known"] is False
        wrong = await refused(a, "forget_item", user_id="bob", item_id=bob_fact, reason="x")
        assert "not found: nothing is recorded for user 'bob'" in wrong
    async with http_client(url, b_write) as b:
        assert (await ok(b, "get_profile", user_id="bob"))["facts_count"] == 1
        assert (await ok(b, "get_profile", user_id="ann"))["known"] is False


# ---- in-process: the unit tier ----------------------------------------------------------------


@pytest.fixture
def tenants(tmp_path: Path) -> Iterator[Tenants]:
    opened = Tenants(Settings(home=tmp_path / "home", backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}"))
    yield opened
    opened.close()


def test_every_tool_is_listed_with_a_description_in_english_and_chinese(tenants: Tenants) -> None:
    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator("demo"))) as client:
            listed = (await client.list_tools()).tools
        assert {tool.name for tool in listed} == TOOLS
        for tool in listed:
            assert tool.description and CJK.search(tool.description), tool.name
            assert re.search(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}", tool.description), tool.name
            assert "user_id" in tool.input_schema["required"]
        hints = {tool.name: tool.annotations for tool in listed}
        assert hints["recall"] and hints["recall"].read_only_hint
        assert hints["forget_item"] and hints["forget_item"].destructive_hint

    anyio.run(main)


def test_every_tool_works_and_errors_are_tool_errors(tenants: Tenants) -> None:
    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator("demo"))) as client:
            assert await every_tool(client, "u1") == "mcp:demo"
            preference = (await ok(client, "get_profile", user_id="u1"))["preferences"]["communication_style"][0]
            assert "not found: no fact id starts with" in await refused(
                client, "forget_item", user_id="u1", item_id=preference["id"], reason="x"
            )
            assert "not found" in await refused(client, "explain", user_id="u1", item_id="zzzz")
            assert "invalid input: top_k" in await refused(client, "recall", user_id="u1", query="q", top_k=0)
            assert "language" in await refused(client, "memory_context", user_id="u1", query="q", language="fr")
            assert "invalid input: user_id" in await refused(client, "remember", user_id=" u1", message="我住在杭州")
            assert "query" in await refused(client, "recall", user_id="u1")  # missing argument
            assert (await ok(client, "get_profile", user_id="ghost"))["known"] is False  # no error (ADR 0036)
            assert (await ok(client, "get_profile", user_id="u1"))["facts_count"] == 1  # still serving

    anyio.run(main)


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` on uvicorn on a free port of 127.0.0.1 (in a thread); yields the MCP URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)


def test_http_app_keys_decide_who_may_do_what(tenants: Tenants) -> None:
    keys = InMemoryKeyStore()
    a_write = keys.create("alpha", Scope.WRITE, "agent").token
    a_read = keys.create("alpha", Scope.READ).token
    b_write = keys.create("beta", Scope.ADMIN).token
    revoked = keys.create("alpha", Scope.ADMIN)
    keys.revoke(revoked.key.key_id)
    with serving(mcp_http_app(tenants, keys, host="127.0.0.1")) as url:
        assert "Authorization: Bearer" in assert_unauthorized(url, None)
        assert assert_unauthorized(url, "flk_000000000000_" + "x" * 43) == "the API key is not valid"
        assert assert_unauthorized(url, "not-a-key") == "the API key is not a factledger key (flk_<id>_<secret>)"
        assert assert_unauthorized(url, revoked.token) == "the API key was revoked"
        anyio.run(keys_decide_tenant_and_scope, url, a_write, a_read, b_write)


def test_the_command_says_what_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FACTLEDGER_BACKEND", "memory")
    monkeypatch.setenv("FACTLEDGER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FACTLEDGER_API_KEY", raising=False)
    for args, message in [
        (["mcp"], "error: name the tenant (--tenant T) or give an API key (--key flk_..., FACTLEDGER_API_KEY)"),
        (["mcp", "--tenant", "Demo"], "error: tenant 'Demo' must be lower-case letters"),
        (["mcp", "--tenant", "demo", "--key", "flk_x"], "error: give --tenant or an API key"),
        (["mcp", "--http", "--tenant", "demo"], "error: over HTTP every request's API key names its tenant"),
        (["mcp", "--http"], "the memory backend keeps them in one process only"),  # no key could be made
    ]:
        assert cli(args) == 2, args
        assert message in " ".join(capsys.readouterr().err.split()), args


# ---- real processes: the integration tier -----------------------------------------------------


@asynccontextmanager
async def stdio_client(env: dict[str, str], *args: str) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", *args], env=env)
    async with Client(params) as client:
        yield client


@pytest.mark.postgres
@pytest.mark.slow
def test_stdio_server_process_serves_the_operators_tenant(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    env.update(FACTLEDGER_BACKEND="memory", FACTLEDGER_HOME=str(tmp_path / "home"), PYTHONIOENCODING="utf-8")

    async def main() -> None:
        async with stdio_client(env, "--tenant", "demo") as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
            assert await every_tool(client, "user_123") == "mcp:demo"

    anyio.run(main)


@pytest.fixture
def two_tenants(pg_uri: str) -> Iterator[tuple[str, str]]:
    """Two fresh tenant names; their schemas are dropped afterwards."""
    names = (f"a{uuid.uuid4().hex[:10]}", f"b{uuid.uuid4().hex[:10]}")
    yield names
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        schemas = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s OR nspname LIKE %s",
            (f"t_{names[0]}%", f"t_{names[1]}%"),
        ).fetchall()
        for (schema,) in schemas:
            conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))


@pytest.mark.postgres
@pytest.mark.slow
def test_http_server_process_behind_api_keys(cli_env: dict[str, str], two_tenants: tuple[str, str]) -> None:
    alpha, beta = two_tenants
    keys = open_key_store(Settings.load(environ=cli_env))  # where `factledger keys create` puts them
    a_write, a_read, b_write = (
        keys.create(alpha, Scope.WRITE, "agent"),
        keys.create(alpha, Scope.READ),
        keys.create(beta, Scope.WRITE),
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = spawn_cli(cli_env, "mcp", "--http", "--host", "127.0.0.1", "--port", str(port))

    def listening() -> None:
        deadline = time.monotonic() + 90
        while True:
            assert server.poll() is None, server.communicate()[1]
            try:
                assert_unauthorized(url, None)
                return
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.2)

    async def scenario() -> None:
        # A local stdio server acting as alpha's read key starts alongside: the key's tenant and scope apply.
        async with stdio_client(cli_env, "--key", a_read.token) as local:
            await anyio.to_thread.run_sync(listening)
            assert assert_unauthorized(url, "flk_000000000000_" + "x" * 43) == "the API key is not valid"
            await keys_decide_tenant_and_scope(url, a_write.token, a_read.token, b_write.token)

            assert (await ok(local, "get_profile", user_id="ann"))["facts_count"] == 1  # written over HTTP
            assert "scope 'write'" in await refused(local, "remember", user_id="ann", message="我住在上海")
            assert (await ok(local, "get_profile", user_id="bob"))["known"] is False  # beta's bob: not alpha's
            keys.revoke(a_read.key.key_id)  # checked at every call
            assert "not authenticated: the API key was revoked" in await refused(local, "get_profile", user_id="ann")

    try:
        anyio.run(scenario)
        keys.revoke(a_write.key.key_id)
        assert assert_unauthorized(url, a_write.token) == "the API key was revoked"
    finally:
        keys.close()
        server.send_signal(signal.SIGINT)
        try:
            _, stderr = server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            raise
    assert f"listening on http://127.0.0.1:{port}/mcp" in stderr
    assert "Traceback" not in stderr, stderr


def test_the_http_endpoint_shares_the_keys_rate_limit(tmp_path: Path) -> None:
    """A key over its requests a minute is refused with 429 and Retry-After before any MCP message is read."""
    from starlette.testclient import TestClient

    from factledger.application.access import Scope
    from factledger.entrypoints.mcp_server import mcp_http_app
    from factledger.entrypoints.ratelimit import RateLimiter
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.keys import InMemoryKeyStore
    from factledger.infrastructure.tenants import Tenants

    keys = InMemoryKeyStore()
    token = keys.create("demo", Scope.READ).token
    app = mcp_http_app(Tenants(Settings(home=tmp_path, backend="memory")), keys, limiter=RateLimiter(2))
    with TestClient(app) as client:
        statuses = [
            client.post("/", json={}, headers={"Authorization": f"Bearer {token}"}).status_code for _ in range(3)
        ]
        assert statuses[:2] != [429, 429] and statuses[2] == 429
        limited = client.post("/", json={}, headers={"Authorization": f"Bearer {token}"})
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
