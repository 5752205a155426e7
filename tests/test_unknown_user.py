"""A user nothing was ever recorded for reads the same on every surface (ADR 0036, issue 28).

Not an error: the library, HTTP, the CLI and MCP all answer the empty result with ``known``
false (the library's ``Profile(known=False)`` was alone; HTTP answered 404, the CLI exited 3,
MCP a tool error). An item id the user does not have stays an error everywhere, and a
forgotten user stays told apart by its tombstone.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from processes import run_cli, run_cli_json

from factledger.application.access import Scope
from factledger.application.errors import NotFound
from factledger.application.service import LedgerService
from factledger.entrypoints.http import create_app
from factledger.entrypoints.mcp_tools import Caller, build_server
from factledger.infrastructure.config import Settings
from factledger.infrastructure.tenants import Tenants

NOBODY = "nobody_here"
SAID = "我在杭州工作，平时喜欢简短的回复"


def assert_empty_profile(profile: dict[str, Any]) -> None:
    assert profile["known"] is False and profile["user_id"] == NOBODY
    assert profile["facts"] == {} and profile["preferences"] == {}
    assert profile["facts_total"] == 0 and profile["preferences_total"] == 0


def test_the_library_answers_an_unknown_user_with_empty_results_marked_unknown(service: LedgerService) -> None:
    service.ingest("someone", SAID)
    assert_empty_profile(service.profile(NOBODY).to_dict())
    assert service.profile(NOBODY, as_of=None, clock="recorded").known is False
    history = service.history(NOBODY)
    assert history.known is False and history.to_dict()["known"] is False and len(history) == 0
    context = service.memory_context(NOBODY, "杭州")
    assert context.to_dict()["known"] is False and context.text == "" and context.recalled == ()
    assert service.recall(NOBODY, "杭州") == []
    # A known user is marked known on the same answers.
    assert service.profile("someone").to_dict()["known"] is True
    assert service.history("someone").to_dict()["known"] is True
    assert service.memory_context("someone", "杭州").to_dict()["known"] is True
    with pytest.raises(NotFound):  # an item nobody has is still an error
        service.why(NOBODY, "abc")


def test_a_forgotten_user_reads_as_unknown_but_keeps_its_tombstone(service: LedgerService) -> None:
    service.ingest("gone", SAID)
    service.forget("gone")
    assert service.profile("gone").known is False and service.history("gone").known is False
    assert len(service.tombstones("gone")) == 1 and service.tombstones(NOBODY) == []


@pytest.fixture
def http(settings: Settings) -> Iterator[tuple[TestClient, dict[str, str]]]:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        key = app.state.keys.create("acme", Scope.WRITE, "test").token
        headers = {"Authorization": f"Bearer {key}"}
        assert client.post("/v1/users/someone/messages", json={"message": SAID}, headers=headers).status_code == 201
        yield client, headers


def test_http_answers_200_with_known_false_on_every_read(http: tuple[TestClient, dict[str, str]]) -> None:
    client, headers = http

    def read(tail: str, **params: Any) -> dict[str, Any]:
        response = client.get(f"/v1/users/{NOBODY}/{tail}", params=params, headers=headers)
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert body["known"] is False, (tail, body)
        return body

    assert_empty_profile(read("profile"))
    assert_empty_profile(read("profile", as_of="2024-01-01T00:00:00Z"))
    assert read("history")["entries"] == [] and read("history")["next_offset"] is None
    assert read("recall", query="杭州")["hits"] == []
    context = read("context", query="杭州")
    assert context["text"] == "" and context["recalled"] == []
    assert_empty_profile(context["profile"])
    assert client.get("/v1/users/someone/recall", params={"query": "杭州"}, headers=headers).json()["known"] is True
    assert client.get(f"/v1/users/{NOBODY}/items/abc", headers=headers).status_code == 404
    invalidated = client.post(f"/v1/users/{NOBODY}/items/abc/invalidate", json={"reason": "x"}, headers=headers)
    assert invalidated.status_code == 404


def test_the_cli_exits_0_with_the_empty_answer_and_known_false(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "ingest", "--user", "someone", SAID, "-q")
    assert_empty_profile(run_cli_json(cli_env, "profile", NOBODY))
    assert_empty_profile(run_cli_json(cli_env, "profile", NOBODY, "--as-of", "2024-01-01T00:00:00Z"))
    context = run_cli_json(cli_env, "context", NOBODY, "杭州")
    assert context["known"] is False and context["text"] == ""
    assert run_cli_json(cli_env, "history", NOBODY) == []
    assert run_cli_json(cli_env, "recall", NOBODY, "杭州") == []
    for args in (("profile", NOBODY), ("history", NOBODY), ("recall", NOBODY, "杭州"), ("context", NOBODY, "杭州")):
        proc = run_cli(cli_env, *args)  # exit 0
        assert f"nothing is recorded for user '{NOBODY}'" in proc.stderr, args
        assert "error" not in proc.stderr and "Traceback" not in proc.stderr, args
    why = run_cli(cli_env, "why", NOBODY, "abc", expect=3)  # an item nobody has is still an error
    assert "error:" in why.stderr


def test_mcp_answers_the_empty_structured_result_with_known_false(tmp_path: Path) -> None:
    tenants = Tenants(Settings(home=tmp_path / "home", backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}"))

    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator("demo"))) as client:
            await client.call_tool("remember", {"user_id": "someone", "message": SAID})
            answers = {
                tool: await client.call_tool(tool, {"user_id": NOBODY, **args})
                for tool, args in (
                    ("get_profile", {}),
                    ("recall", {"query": "杭州"}),
                    ("memory_context", {"query": "杭州"}),
                )
            }
            for tool, result in answers.items():
                assert not result.is_error, (tool, result.content)
                assert result.structured_content is not None and result.structured_content["known"] is False, tool
            assert_empty_profile(answers["get_profile"].structured_content or {})
            assert (answers["recall"].structured_content or {})["hits"] == []
            explained = await client.call_tool("explain", {"user_id": NOBODY, "item_id": "abc"})
            assert explained.is_error and "not found" in explained.content[0].text  # type: ignore[union-attr]

    try:
        anyio.run(main)
    finally:
        tenants.close()
