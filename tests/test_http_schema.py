"""Schemathesis against the OpenAPI schema: generated requests to every operation, with a
valid admin key and without one; no answer is a server error and every error is a problem."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.entrypoints.http.problems import PROBLEM_JSON
from factledger.infrastructure.config import Settings


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[FastAPI, str]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    settings = Settings(home=home, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0)
    app = create_app(settings, mount_mcp=False)
    key = app.state.keys.create("fuzz", Scope.ADMIN, "schemathesis").token
    with TestClient(app) as client:  # a user with memories, so generated ids sometimes hit real data
        for text in ("我在杭州工作，喜欢喝咖啡", "I live in Oslo and I love skiing"):
            response = client.post("/v1/users/u1/messages", json={"message": text}, headers={"X-API-Key": key})
            assert response.status_code == 201
    return app, key


@pytest.fixture
def api_schema(served: tuple[FastAPI, str]) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", served[0])


schema = schemathesis.pytest.from_fixture("api_schema")


def assert_well_formed(response: Any) -> None:
    assert response.status_code < 500, f"{response.status_code}: {response.text}"
    if response.status_code >= 400:
        assert response.headers["content-type"][0].startswith(PROBLEM_JSON), response.headers
        body = response.json()
        assert body["status"] == response.status_code and body["type"] and body["title"] and body["detail"]


@schema.parametrize()
@hypothesis_settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_server_error_and_every_error_is_a_problem(case: Any, served: tuple[FastAPI, str]) -> None:
    response = case.call(headers={"Authorization": f"Bearer {served[1]}"})
    assert_well_formed(response)
    anonymous = case.call(headers={"Authorization": "Bearer flk_000000000000_" + "x" * 43})
    assert_well_formed(anonymous)
    if case.path.startswith("/v1"):  # a body that is not JSON may be refused before the key is read
        assert anonymous.status_code in (400, 401, 404, 405, 422), anonymous.text
