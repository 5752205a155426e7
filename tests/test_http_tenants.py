"""One tenant can never reach another's memories, through any route or any id it sends.

Tenant B records users, items and a replayed ledger; tenant A (with an admin
key, so no scope stops it first) tries every route with B's ids. Every
attempt reads exactly like the answer for an id nobody has (a read of a memory:
200, empty, ``known`` false; anything else: 404), and B's memories are unchanged
afterwards. A test fails if a route is added
without an attempt here.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.infrastructure.config import Settings


@pytest.fixture
def world(settings: Settings) -> Iterator[dict[str, Any]]:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        a = {"Authorization": f"Bearer {app.state.keys.create('tenant_a', Scope.ADMIN).token}"}
        b = {"Authorization": f"Bearer {app.state.keys.create('tenant_b', Scope.ADMIN).token}"}

        def say(headers: dict[str, str], user: str, message: str) -> None:
            response = client.post(f"/v1/users/{user}/messages", json={"message": message}, headers=headers)
            assert response.status_code == 201, response.text

        say(b, "bob", "我在深圳做律师，我喜欢打羽毛球")
        say(b, "shared", "I live in Bristol and I love jazz")
        say(a, "shared", "我在西安读大学")
        started = client.post("/v1/ledgers/bonly/replay", json={"extractor": "offline"}, headers=b)
        assert started.status_code == 202
        for _ in range(400):
            if client.get("/v1/ledgers/bonly/replay", headers=b).json()["state"] != "running":
                break
            time.sleep(0.05)
        items = {
            user: [f["id"] for facts in client.get(f"/v1/users/{user}/profile", headers=b).json()["facts"].values()
                   for f in facts]
            for user in ("bob", "shared")
        }  # fmt: skip
        assert items["bob"] and items["shared"]
        yield {"app": app, "client": client, "a": a, "b": b, "items": items}


def snapshot(world: dict[str, Any]) -> dict[str, Any]:
    """What tenant B can see of its users and ledgers."""
    client, b = world["client"], world["b"]
    return {
        user: {
            "profile": client.get(f"/v1/users/{user}/profile", headers=b).json(),
            "history": client.get(f"/v1/users/{user}/history", params={"limit": 500}, headers=b).json()["total"],
        }
        for user in ("bob", "shared")
    } | {"ledgers": sorted(entry["name"] for entry in client.get("/v1/ledgers", headers=b).json()["ledgers"])}


def not_found_like_nobody(
    world: dict[str, Any], send: Callable[[str, str], Any], real: str, nobody: str, status: int = 404
) -> None:
    """A's answer for B's id is a 404 (``status``), the same as for an id no tenant has."""
    theirs, none = send(real, "theirs"), send(nobody, "none")
    assert theirs.status_code == status, theirs.text
    assert none.status_code == status, none.text
    scrub = lambda response, value: re.sub(re.escape(value), "<id>", response.text)  # noqa: E731
    assert scrub(theirs, real) == scrub(none, nobody)


def unknown_like_nobody(world: dict[str, Any], send: Callable[[str, str], Any], real: str, nobody: str) -> None:
    """A read of B's user's memory is A's empty answer, ``known`` false, as for an id no tenant has (ADR 0036)."""
    not_found_like_nobody(world, send, real, nobody, status=200)
    assert send(real, "theirs").json()["known"] is False


def test_no_route_reaches_another_tenants_users_items_or_ledgers(world: dict[str, Any]) -> None:
    client, a, items = world["client"], world["a"], world["items"]
    before = snapshot(world)
    bob_item, shared_item = items["bob"][0], items["shared"][0]
    tried: set[tuple[str, str]] = set()

    def attempt(method: str, template: str) -> Callable[..., Any]:
        tried.add((method, template))

        def send(path: str, _label: str = "", **kwargs: Any) -> Any:
            return client.request(method, path, headers=a, **kwargs)

        return send

    for tail in ("profile", "history"):
        send = attempt("GET", f"/v1/users/{{user_id}}/{tail}")
        unknown_like_nobody(world, lambda u, _l, s=send, t=tail: s(f"/v1/users/{u}/{t}"), "bob", "nobody_x")
    send = attempt("GET", "/v1/users/{user_id}/export")
    not_found_like_nobody(world, lambda u, _l: send(f"/v1/users/{u}/export"), "bob", "nobody_x")
    send = attempt("GET", "/v1/users/{user_id}/context")
    unknown_like_nobody(world, lambda u, _l: send(f"/v1/users/{u}/context", params={"query": "律师"}), "bob", "nob")
    send = attempt("GET", "/v1/users/{user_id}/recall")
    unknown_like_nobody(world, lambda u, _l: send(f"/v1/users/{u}/recall", params={"query": "律师"}), "bob", "nob")

    why = attempt("GET", "/v1/users/{user_id}/items/{item_id}")
    not_found_like_nobody(world, lambda u, _l: why(f"/v1/users/{u}/items/{bob_item}"), "bob", "nobody_y")
    # the user id exists in both tenants: B's item, whole or as a prefix, is still not A's
    for item in (shared_item, shared_item[:8]):
        assert why(f"/v1/users/shared/items/{item}").status_code == 404
    invalidate = attempt("POST", "/v1/users/{user_id}/items/{item_id}/invalidate")
    for user, item in (("bob", bob_item), ("shared", shared_item), ("shared", shared_item[:8])):
        response = invalidate(f"/v1/users/{user}/items/{item}/invalidate", json={"reason": "hostile"})
        assert response.status_code == 404, response.text

    usage = attempt("GET", "/v1/usage")
    assert usage("/v1/usage", params={"user_id": "bob"}).status_code == 404
    assert usage("/v1/usage").status_code == 200

    forget = attempt("DELETE", "/v1/users/{user_id}")
    not_found_like_nobody(world, lambda u, _l: forget(f"/v1/users/{u}"), "bob", "nobody_z")

    listed = attempt("GET", "/v1/ledgers")("/v1/ledgers").json()["ledgers"]
    assert "bonly" not in {entry["name"] for entry in listed}
    status = attempt("GET", "/v1/ledgers/{name}/replay")
    not_found_like_nobody(world, lambda n, _l: status(f"/v1/ledgers/{n}/replay"), "bonly", "nothing")
    diff = attempt("GET", "/v1/ledgers/{name}/diff")
    not_found_like_nobody(world, lambda n, _l: diff(f"/v1/ledgers/{n}/diff"), "bonly", "nothing")
    assert diff("/v1/ledgers/bonly/diff", params={"user_id": "bob"}).status_code == 404
    promote = attempt("POST", "/v1/ledgers/{name}/promote")
    not_found_like_nobody(world, lambda n, _l: promote(f"/v1/ledgers/{n}/promote", json={}), "bonly", "nothing")

    # Writes under B's ids create A's own, separate memories and ledgers.
    ingest = attempt("POST", "/v1/users/{user_id}/messages")
    assert ingest("/v1/users/bob/messages", json={"message": "我在昆明开花店"}).status_code == 201
    restate = attempt("POST", "/v1/users/{user_id}/facts")
    assert restate("/v1/users/bob/facts", json={"text": "用户养了一只猫"}).status_code == 201
    batch = attempt("POST", "/v1/users/{user_id}/messages/batch")
    written = batch("/v1/users/bob/messages/batch", json={"messages": [{"message": "我养了一只柯基"}]})
    assert written.status_code == 200 and written.json()["recorded"] == 1, written.text
    mine = client.get("/v1/users/bob/profile", headers=a).json()
    assert "柯基" in str(mine)
    assert "昆明" in str(mine) and "深圳" not in str(mine) and "律师" not in str(mine)
    replay = attempt("POST", "/v1/ledgers/{name}/replay")
    assert replay("/v1/ledgers/bonly/replay", json={"users": ["nobody_q"]}).status_code == 404
    assert replay("/v1/ledgers/bonly/replay", json={"extractor": "offline"}).status_code == 202

    # Read from the schema: app.routes lists included routers wrapped (FastAPI 0.165), so a check over
    # it saw no /v1 route at all and could never fail.
    routes = {
        (method.upper(), path)
        for path, operations in world["app"].openapi()["paths"].items()
        if path.startswith("/v1")
        for method in operations
    }
    assert len(routes) >= 15, routes
    assert routes - tried == set(), "a route has no cross-tenant attempt"
    assert snapshot(world) == before


def test_one_user_id_in_two_tenants_at_once_stays_apart(world: dict[str, Any]) -> None:
    """Concurrent writes for the same user id from two tenants never mix (Graphiti #1331)."""
    client = world["client"]
    cities = {"a": ["苏州", "无锡", "常州", "扬州"], "b": ["Leeds", "York", "Bath", "Derby"]}
    errors: list[str] = []

    def write(tenant: str) -> None:
        for n, city in enumerate(cities[tenant]):
            message = f"我在{city}有个朋友叫小{n}" if tenant == "a" else f"My friend {n} lives in {city}"
            response = client.post(
                "/v1/users/twin/messages", json={"message": f"我叫twin。{message}"}, headers=world[tenant]
            )
            if response.status_code != 201:
                errors.append(response.text)

    threads = [threading.Thread(target=write, args=(t,)) for t in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for tenant, other in (("a", "b"), ("b", "a")):
        history = client.get("/v1/users/twin/history", params={"limit": 500}, headers=world[tenant]).json()
        text = str(history)
        assert sum(text.count(city) for city in cities[tenant]) >= len(cities[tenant])
        assert not any(city in text for city in cities[other])
