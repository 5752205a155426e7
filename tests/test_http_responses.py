"""Every route's real answers match the OpenAPI schema: each success answer validates against
the route's documented model, and each error it gives (400, 403, 404, 409, 413, 415, 422, 429)
is documented for that route as a problem. A route added without a check here fails the test."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from jsonschema import Draft202012Validator

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.entrypoints.http.problems import PROBLEM_JSON
from factledger.infrastructure.config import Settings


@attrs.define
class Checked:
    """Calls a route by its template and checks the answer against the schema."""

    client: TestClient
    schema: dict[str, Any]
    seen: set[tuple[str, str, int]] = attrs.field(factory=set)

    def call(self, method: str, template: str, status: int, *, path: dict[str, str] | None = None, **kw: Any) -> Any:
        url = template.format(**(path or {}))
        response = self.client.request(method, url, **kw)
        assert response.status_code == status, f"{method} {url}: {response.status_code} {response.text}"
        self.validate(method, template, response)
        return response.json() if "json" in response.headers.get("content-type", "") else response.text

    def validate(self, method: str, template: str, response: Any) -> None:
        operation = self.schema["paths"][template][method.lower()]
        documented = operation["responses"].get(str(response.status_code))
        assert documented is not None, f"{method} {template} does not document {response.status_code}"
        media_type = response.headers["content-type"].split(";")[0]
        content = documented.get("content", {})
        assert media_type in content, f"{method} {template} {response.status_code}: {media_type} not in {content}"
        model = content[media_type].get("schema")
        if media_type.endswith("json"):
            assert model, f"{method} {template} {response.status_code} has no schema"
            validator = Draft202012Validator({"allOf": [model], "components": self.schema["components"]})
            errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(response.json())]
            assert not errors, f"{method} {template} {response.status_code}: {errors[:5]}"
        self.seen.add((method.upper(), template, response.status_code))


@pytest.fixture
def checked(tmp_path: Path) -> Iterator[tuple[Checked, FastAPI]]:
    settings = Settings(
        home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0, max_body_bytes=4096
    )
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        yield Checked(client, app.openapi()), app


def key(app: FastAPI, scope: Scope, tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {app.state.keys.create(tenant, scope, 'test').token}"}


USER = "/v1/users/{user_id}"
#: Reads of a memory: an unknown user is an empty answer with ``known`` false, never a 404 (ADR 0036).
NO_404 = {USER + "/profile", USER + "/context", USER + "/recall", USER + "/history"}


def user_routes(c: Checked, admin: dict[str, str]) -> str:
    """Every route on one user, each to a success; returns an item id."""
    u = {"user_id": "u1"}
    c.call(
        "POST",
        USER + "/messages",
        201,
        path=u,
        json={"message": "我在杭州工作，喜欢喝咖啡", "message_id": "m"},
        headers=admin,
    )
    c.call(
        "POST",
        USER + "/messages",
        200,
        path=u,
        json={"message": "我在杭州工作，喜欢喝咖啡", "message_id": "m"},
        headers=admin,
    )
    batch = {"messages": [{"message": "我叫李雷，请简洁回答"}, {"message": ""}]}
    c.call("POST", USER + "/messages/batch", 200, path=u, json=batch, headers=admin)
    profile = c.call("GET", USER + "/profile", 200, path=u, headers=admin)
    c.call("GET", USER + "/context", 200, path=u, params={"query": "咖啡"}, headers=admin)
    c.call("GET", USER + "/recall", 200, path=u, params={"query": "在杭州工作"}, headers=admin)
    c.call("GET", USER + "/history", 200, path=u, params={"limit": 3}, headers=admin)
    item = next(f["id"] for group in profile["facts"].values() for f in group)
    c.call("GET", USER + "/items/{item_id}", 200, path={**u, "item_id": item}, headers=admin)
    restated = c.call(
        "POST", USER + "/facts", 201, path=u, json={"text": "用户在南京工作", "category": "work"}, headers=admin
    )
    wrong = {**u, "item_id": restated["id"]}
    c.call("POST", USER + "/items/{item_id}/invalidate", 200, path=wrong, json={"reason": "不对"}, headers=admin)
    c.call("GET", USER + "/items/{item_id}", 200, path=wrong, headers=admin)
    c.call("GET", USER + "/export", 200, path=u, headers=admin)
    c.call("GET", "/v1/usage", 200, headers=admin)
    c.call("GET", "/v1/usage", 200, params={"user_id": "u1"}, headers=admin)
    return str(item)


def ledger_routes(c: Checked, admin: dict[str, str]) -> None:
    c.call("GET", "/v1/ledgers", 200, headers=admin)
    trial = {"name": "trial"}
    c.call("POST", "/v1/ledgers/{name}/replay", 202, path=trial, json={"extractor": "offline"}, headers=admin)
    for _ in range(400):
        if c.call("GET", "/v1/ledgers/{name}/replay", 200, path=trial, headers=admin)["state"] != "running":
            break
        time.sleep(0.05)
    c.call("GET", "/v1/ledgers/{name}/replay", 200, path={"name": "live"}, headers=admin)  # not started here
    c.call("GET", "/v1/ledgers/{name}/diff", 200, path=trial, headers=admin)
    c.call("GET", "/v1/ledgers/{name}/diff", 200, path=trial, params={"user_id": "u1"}, headers=admin)
    c.call("POST", "/v1/ledgers/{name}/promote", 200, path=trial, json={}, headers=admin)
    c.call("GET", "/healthz", 200)
    c.call("GET", "/readyz", 200)
    c.call("GET", "/metrics", 200)
    c.call("DELETE", USER, 200, path={"user_id": "u1"}, headers=admin)


def error_answers(c: Checked, app: FastAPI, admin: dict[str, str]) -> None:
    """The errors a caller meets most, each where the schema says a route may give it."""
    u, reader = {"user_id": "u2"}, key(app, Scope.READ)
    c.call("POST", USER + "/messages", 201, path=u, json={"message": "我住在杭州", "message_id": "x"}, headers=admin)
    json_type = {"Content-Type": "application/json"}
    c.call("POST", USER + "/messages", 400, path=u, content='{"message": ', headers={**admin, **json_type})
    c.call("POST", USER + "/messages", 415, path=u, content="hi", headers={**admin, "Content-Type": "text/plain"})
    c.call("POST", USER + "/messages", 413, path=u, json={"message": "长" * 5000}, headers=admin)
    c.call("POST", USER + "/messages", 422, path=u, json={"message": ""}, headers=admin)
    c.call("POST", USER + "/messages", 409, path=u, json={"message": "我住在南京", "message_id": "x"}, headers=admin)
    c.call("POST", USER + "/messages", 403, path=u, json={"message": "我住在南京"}, headers=reader)
    c.call("POST", USER + "/messages", 401, path=u, json={"message": "我住在南京"})
    assert c.call("GET", USER + "/profile", 200, path={"user_id": "nobody"}, headers=admin)["known"] is False
    c.call("GET", USER + "/items/{item_id}", 404, path={"user_id": "nobody", "item_id": "abc"}, headers=admin)
    c.call("POST", USER + "/facts", 422, path=u, json={"text": "用户住在南京", "category": "astrology"}, headers=admin)
    c.call("POST", "/v1/ledgers/{name}/replay", 422, path={"name": "Bad"}, json={}, headers=admin)
    c.call("GET", "/v1/ledgers", 403, headers=reader)


def test_every_route_answers_as_its_schema_says(checked: tuple[Checked, FastAPI]) -> None:
    c, app = checked
    admin = key(app, Scope.ADMIN)
    user_routes(c, admin)
    ledger_routes(c, admin)
    error_answers(c, app, admin)
    routes = {(m, r.path) for r in app.routes if isinstance(r, APIRoute) for m in r.methods}
    succeeded = {(m, t) for m, t, status in c.seen if status < 300}
    assert routes - succeeded == set(), "routes never checked"


def test_every_keyed_route_documents_the_errors_it_can_give(checked: tuple[Checked, FastAPI]) -> None:
    c, _ = checked
    for template, operations in c.schema["paths"].items():
        for method, operation in operations.items():
            documented = set(operation["responses"])
            for status, answer in operation["responses"].items():
                assert answer.get("description"), (method, template, status)
                if int(status) >= 400:
                    assert PROBLEM_JSON in answer["content"], (method, template, status)
            if template.startswith("/v1"):
                assert {"401", "403", "422", "429", "503"} <= documented, (method, template, documented)
            if "requestBody" in operation:
                assert {"400", "413", "415"} <= documented, (method, template, documented)
            if template in NO_404:
                assert "404" not in documented, (method, template, documented)
            elif (template.startswith(USER) and method != "post") or "{name}" in template:
                assert "404" in documented, (method, template, documented)
            success = [s for s in documented if s.startswith("2")]
            assert success and all(operation["responses"][s].get("content") for s in success), (method, template)


def test_the_documentation_page_loads_nothing_from_another_host(checked: tuple[Checked, FastAPI]) -> None:
    """``/docs`` works without internet: its script and style come from this server, its policy
    forbids any other source, and it renders the schema this server serves."""
    client = checked[0].client
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy and "http" not in policy
    linked = re.findall(r"""(?:src|href|data-openapi)=["']([^"']+)""", page.text)
    assert sorted(linked) == ["/docs/docs.css", "/docs/docs.js", "/openapi.json"], linked
    for asset, media_type in (("/docs/docs.js", "text/javascript"), ("/docs/docs.css", "text/css")):
        answer = client.get(asset)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(media_type)
        assert not re.search(r"https?://|//[a-z]|@import", answer.text), asset
    script = client.get("/docs/docs.js").text
    assert "dataset.openapi" in script and "textContent" in script and "innerHTML" not in script
    assert client.get("/openapi.json").json()["paths"]
    assert client.get("/redoc").status_code == 404  # ReDoc from a CDN is not served
