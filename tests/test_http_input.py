"""What the HTTP API answers to a body it cannot use: not JSON (400), not declared as JSON (415),
a value the service would only refuse later (422 at once, nothing stored, nothing started)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.entrypoints.http.problems import PROBLEM_JSON
from factledger.infrastructure.config import Settings


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    settings = Settings(home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0)
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as c:
        yield c, {"Authorization": f"Bearer {app.state.keys.create('acme', Scope.ADMIN, 'test').token}"}


def problem_of(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["detail"]
    return body


def test_malformed_json_is_a_400_that_says_what_was_wrong(client: tuple[TestClient, dict[str, str]]) -> None:
    c, key = client
    headers = {**key, "Content-Type": "application/json"}
    for broken in ('{"message": "hi"', '{"message": hi}', "{'message': 'hi'}", "[1,"):
        response = c.post("/v1/users/u1/messages", content=broken, headers=headers)
        body = problem_of(response, 400)
        assert body["type"].endswith(":malformed-json") and body["field"] == "body", body
        assert "JSON" in body["detail"] and "line 1" in body["detail"], body
    assert c.get("/v1/users/u1/profile", headers=key).json()["known"] is False  # nothing was stored


def test_a_body_not_declared_as_json_is_a_415(client: tuple[TestClient, dict[str, str]]) -> None:
    c, key = client
    for media_type in ("text/plain", "application/x-www-form-urlencoded", "application/xml"):
        response = c.post(
            "/v1/users/u1/messages", content='{"message": "hi"}', headers={**key, "Content-Type": media_type}
        )
        body = problem_of(response, 415)
        assert media_type in body["detail"] and "application/json" in body["detail"], body
    declared = c.post(
        "/v1/users/u1/messages",
        content='{"message": "我在杭州工作"}',
        headers={**key, "Content-Type": "application/json; charset=utf-8"},
    )
    assert declared.status_code == 201, declared.text


def test_a_replay_into_a_name_no_ledger_may_have_is_refused_before_it_starts(
    client: tuple[TestClient, dict[str, str]],
) -> None:
    c, key = client
    assert c.post("/v1/users/u1/messages", json={"message": "我在杭州工作"}, headers=key).status_code == 201
    for bad in ("Bad-Name", "live", "9lives", "x" * 31, "名字"):
        response = c.post(f"/v1/ledgers/{bad}/replay", json={"extractor": "offline"}, headers=key)
        body = problem_of(response, 422)
        assert body["field"] == "name" and "lower-case" in body["detail"], body
        status = c.get(f"/v1/ledgers/{bad}/replay", headers=key)
        assert status.status_code == 404 or status.json()["state"] == "not running here", status.text  # no job
    assert [entry["name"] for entry in c.get("/v1/ledgers", headers=key).json()["ledgers"]] == ["live"]


def test_restating_a_fact_in_an_unknown_category_is_refused(client: tuple[TestClient, dict[str, str]]) -> None:
    c, key = client
    response = c.post("/v1/users/u1/facts", json={"text": "用户住在南京", "category": "astrology"}, headers=key)
    body = problem_of(response, 422)
    assert body["field"] == "category" and "astrology" in body["detail"] and "location" in body["detail"], body
    assert c.get("/v1/users/u1/profile", headers=key).json()["known"] is False  # nothing stored
    named = c.post("/v1/users/u1/facts", json={"text": "用户住在南京", "category": "Location"}, headers=key)
    assert named.status_code == 201, named.text
    facts = c.get("/v1/users/u1/profile", headers=key).json()["facts"]
    assert [f["fact"] for f in facts["location"]] == ["用户住在南京"], facts
