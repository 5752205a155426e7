"""Schemathesis against the OpenAPI schema: generated requests to every operation, with a
valid admin key and without one; no answer is a server error and every error is a problem."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.entrypoints.http.problems import PROBLEM_JSON
from factledger.infrastructure.config import Settings


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[FastAPI, str]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    settings = Settings(
        home=home, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0, auth_failure_limit=0
    )
    app = create_app(settings, mount_mcp=False)
    key = app.state.keys.create("fuzz", Scope.ADMIN, "schemathesis").token
    with TestClient(app) as client:  # a user with memories, so generated ids sometimes hit real data
        for text in ("我在杭州工作，喜欢喝咖啡", "I live in Oslo and I love skiing"):
            response = client.post("/v1/users/u1/messages", json={"message": text}, headers={"X-API-Key": key})
            assert response.status_code == 201
    return app, key


def assert_well_formed(response: Any) -> None:
    assert response.status_code < 500, f"{response.status_code}: {response.text}"
    if response.status_code >= 400:
        assert response.headers["content-type"][0].startswith(PROBLEM_JSON), response.headers
        body = response.json()
        assert body["status"] == response.status_code and body["type"] and body["title"] and body["detail"]


def operations(app: FastAPI) -> list[Any]:
    # Imported here: each xdist worker imports every test module, only one runs this (~0.4 s an import).
    import schemathesis

    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize(
    "examples", [pytest.param(3, id="3-per-operation"), pytest.param(15, id="15-per-operation", marks=pytest.mark.slow)]
)
def test_no_server_error_and_every_error_is_a_problem(served: tuple[FastAPI, str], examples: int) -> None:
    """Each operation in turn (schemathesis's strategies driven by hypothesis directly: its pytest
    plugin does not follow every pytest release). The unit tier draws 3 requests per operation,
    the integration tier 15 (about 10 s)."""
    app, key = served
    checked = []
    for operation in operations(app):

        @given(case=operation.as_strategy())
        @hypothesis_settings(
            max_examples=examples,
            deadline=None,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
        )
        def check(case: Any) -> None:
            response = case.call(headers={"Authorization": f"Bearer {key}"})
            assert_well_formed(response)
            anonymous = case.call(headers={"Authorization": "Bearer flk_000000000000_" + "x" * 43})
            assert_well_formed(anonymous)
            if case.path.startswith("/v1"):  # a body that is not JSON may be refused before the key is read
                assert anonymous.status_code in (400, 401, 404, 405, 415, 422), anonymous.text

        check()
        checked.append(f"{operation.method.upper()} {operation.path}")
    assert len(checked) >= 18 and "POST /v1/users/{user_id}/messages" in checked
