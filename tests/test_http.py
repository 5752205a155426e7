"""The HTTP API in process (FastAPI's TestClient), on both backends: every route, keys and
scopes, problems, limits, health and metrics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from fastapi.testclient import TestClient

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.entrypoints.http.problems import PROBLEM_JSON
from factledger.infrastructure.config import Settings


@attrs.define
class Api:
    client: TestClient
    keys: Any
    _issued: dict[tuple[str, str], str] = attrs.field(factory=dict)

    def headers(self, tenant: str = "acme", scope: str = "write") -> dict[str, str]:
        if (tenant, scope) not in self._issued:
            self._issued[(tenant, scope)] = self.keys.create(tenant, Scope.parse(scope), "test").token
        return {"Authorization": f"Bearer {self._issued[(tenant, scope)]}"}

    def say(self, user: str, message: str, tenant: str = "acme", **extra: Any) -> dict[str, Any]:
        response = self.client.post(
            f"/v1/users/{user}/messages", json={"message": message, **extra}, headers=self.headers(tenant)
        )
        assert response.status_code in (200, 201), response.text
        data: dict[str, Any] = response.json()
        return data


def make_api(settings: Settings) -> Iterator[Api]:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        yield Api(client, app.state.keys)


@pytest.fixture
def api(settings: Settings) -> Iterator[Api]:
    yield from make_api(settings)


def assert_problem(response: Any, status: int, field: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["type"].startswith("urn:factledger:problem:") and body["detail"]
    if field is not None:
        assert body.get("field") == field, body
    return body


def fact_id(api: Api, user: str, text_part: str, tenant: str = "acme") -> str:
    profile = api.client.get(f"/v1/users/{user}/profile", headers=api.headers(tenant, "read")).json()
    for facts in profile["facts"].values():
        for fact in facts:
            if text_part in fact["fact"]:
                return str(fact["id"])
    raise AssertionError(f"no fact with {text_part!r} in {profile}")


def test_ingest_read_explain_correct_and_forget_one_user(api: Api) -> None:
    c, read, write = api.client, api.headers("acme", "read"), api.headers("acme", "write")
    first = api.say("u1", "我在杭州工作，平时喜欢喝美式咖啡", message_id="m-1")
    assert first["status"] == "recorded" and "用户在杭州工作" in first["facts"]
    again = c.post(
        "/v1/users/u1/messages",
        json={"message": "我在杭州工作，平时喜欢喝美式咖啡", "message_id": "m-1"},
        headers=write,
    )
    assert again.status_code == 200 and again.json()["status"] == "duplicate"

    profile = c.get("/v1/users/u1/profile", headers=read).json()
    assert profile["user_id"] == "u1" and profile["facts_count"] >= 1
    context = c.get("/v1/users/u1/context", params={"query": "工作", "language": "en"}, headers=read).json()
    assert "杭州" in context["text"]
    hits = c.get("/v1/users/u1/recall", params={"query": "在哪里工作", "types": "fact"}, headers=read).json()["hits"]
    assert hits and all(hit["type"] == "fact" for hit in hits)

    hangzhou = fact_id(api, "u1", "杭州")
    why = c.get(f"/v1/users/u1/items/{hangzhou[:12]}", headers=read).json()
    assert why["id"] == hangzhou and why["observed"]
    done = c.post(f"/v1/users/u1/items/{hangzhou}/invalidate", json={"reason": "用户说搬家了"}, headers=write)
    assert done.status_code == 200 and done.json()["fact_id"] == hangzhou
    twice = c.post(f"/v1/users/u1/items/{hangzhou}/invalidate", json={"reason": "again"}, headers=write)
    assert_problem(twice, 409)
    restated = c.post("/v1/users/u1/facts", json={"text": "用户在南京工作", "category": "location"}, headers=write)
    assert restated.status_code == 201 and restated.json()["text"] == "用户在南京工作"
    why = c.get(f"/v1/users/u1/items/{hangzhou}", headers=read).json()
    assert "用户说搬家了" in str(why)

    api.say("u1", "I like hiking in the mountains on weekends")
    page = c.get("/v1/users/u1/history", params={"limit": 2}, headers=read).json()
    assert len(page["entries"]) == 2 and page["total"] > 2 and page["next_offset"] == 2
    last = c.get("/v1/users/u1/history", params={"offset": page["total"] - 1}, headers=read).json()
    assert len(last["entries"]) == 1 and last["next_offset"] is None

    exported = c.get("/v1/users/u1/export", headers=read).json()
    assert "南京" in str(exported)
    usage = c.get("/v1/usage", params={"user_id": "u1"}, headers=read)
    assert usage.status_code == 200 and "totals" in usage.json()
    assert c.get("/v1/usage", headers=read).status_code == 200

    forgotten = c.delete("/v1/users/u1", headers=write)
    assert forgotten.status_code == 200 and forgotten.json()["counts"]
    gone = c.get("/v1/users/u1/profile", headers=read)  # reads as unknown (ADR 0036); a second forget is a 404
    assert gone.status_code == 200 and gone.json()["known"] is False and gone.json()["facts"] == {}
    assert_problem(c.delete("/v1/users/u1", headers=write), 404, "user_id")
    assert api.say("u1", "我叫小周")["status"] == "recorded"  # the id starts an empty memory


def test_replay_diff_and_promote_through_the_api(api: Api) -> None:
    c, admin = api.client, api.headers("acme", "admin")
    api.say("u1", "我在成都读研究生，喜欢吃火锅")
    api.say("u2", "I work as a nurse in Leeds")
    started = c.post("/v1/ledgers/trial/replay", json={"extractor": "offline"}, headers=admin)
    assert started.status_code == 202 and started.json()["state"] in ("running", "finished")
    status: dict[str, Any] = {}
    for _ in range(300):
        status = c.get("/v1/ledgers/trial/replay", headers=admin).json()
        if status["state"] != "running":
            break
        time.sleep(0.05)
    assert status["state"] == "finished", status
    assert status["report"]["replayed"] == 2
    names = [entry["name"] for entry in c.get("/v1/ledgers", headers=admin).json()["ledgers"]]
    assert "trial" in names and "live" in names
    one = c.get("/v1/ledgers/trial/diff", params={"user_id": "u1"}, headers=api.headers("acme", "read"))
    assert one.status_code == 200
    assert_problem(c.get("/v1/ledgers/trial/diff", headers=api.headers("acme", "read")), 403)
    assert c.get("/v1/ledgers/trial/diff", headers=admin).status_code == 200
    promoted = c.post("/v1/ledgers/trial/promote", json={}, headers=admin).json()
    assert promoted["live"] == "trial" and promoted["previous"].startswith("previous_")
    # the promoted ledger serves at once, with the same memories
    assert "成都" in str(c.get("/v1/users/u1/profile", headers=admin).json())
    assert_problem(c.get("/v1/ledgers/nope/diff", headers=admin), 404)


def test_keys_and_scopes(api: Api) -> None:
    c = api.client
    assert_problem(c.get("/v1/users/u1/profile"), 401)
    assert c.get("/v1/users/u1/profile").headers["www-authenticate"] == "Bearer"
    assert_problem(c.get("/v1/users/u1/profile", headers={"Authorization": "Bearer nonsense"}), 401)
    real = api.headers("acme", "write")["Authorization"]
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    assert_problem(c.get("/v1/users/u1/profile", headers={"Authorization": forged}), 401)
    key_id = real.split("_")[1]
    api.keys.revoke(key_id)
    assert_problem(c.get("/v1/users/u1/profile", headers={"Authorization": real}), 401)
    # the tenant's other keys go on working
    assert c.get("/v1/users/u1/profile", headers=api.headers("acme", "read")).status_code == 200


def test_scope_too_low_is_403(api: Api) -> None:
    c, read, write = api.client, api.headers("acme", "read"), api.headers("acme", "write")
    api.say("u1", "我在上海工作")
    assert_problem(c.post("/v1/users/u1/messages", json={"message": "hi"}, headers=read), 403)
    assert_problem(c.delete("/v1/users/u1", headers=read), 403)
    assert_problem(c.post("/v1/users/u1/facts", json={"text": "用户在北京工作"}, headers=read), 403)
    assert_problem(c.get("/v1/ledgers", headers=write), 403)
    assert_problem(c.post("/v1/ledgers/x/replay", json={}, headers=write), 403)
    assert_problem(c.post("/v1/ledgers/x/promote", json={}, headers=write), 403)
    assert c.get("/v1/users/u1/profile", headers=c.headers | read).status_code == 200
    assert c.get("/v1/users/u1/profile", headers={"X-API-Key": read["Authorization"][7:]}).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "message"),
        ({"message": "hi", "surprise": 1}, "surprise"),
        ({"message": ""}, "message"),
        ({"message": "hi", "context": [{"role": "user"}]}, "context.0.content"),
        ({"message": "hi", "timestamp": "yesterday"}, "timestamp"),
        ({"message": "hi", "timestamp": "2999-01-01T00:00:00Z"}, "timestamp"),
        ({"message": "x" * 20_000}, "message"),
        ({"message": "hi", "message_id": " padded"}, "message_id"),
    ],
)
def test_bad_input_is_a_422_problem_naming_the_field(api: Api, body: dict[str, Any], field: str) -> None:
    response = api.client.post("/v1/users/u1/messages", json=body, headers=api.headers())
    assert_problem(response, 422, field)
    assert api.client.get("/v1/users/u1/profile", headers=api.headers()).json()["known"] is False  # nothing recorded


def test_query_parameters_are_checked(api: Api) -> None:
    c, read = api.client, api.headers("acme", "read")
    api.say("u1", "我在上海工作")
    assert_problem(c.get("/v1/users/u1/recall", params={"query": "x", "top_k": 0}, headers=read), 422, "top_k")
    assert_problem(c.get("/v1/users/u1/recall", params={"query": "x", "top_k": "many"}, headers=read), 422, "top_k")
    assert_problem(c.get("/v1/users/u1/recall", headers=read), 422, "query")
    assert_problem(c.get("/v1/users/u1/history", params={"limit": 10_000}, headers=read), 422, "limit")
    assert_problem(c.get("/v1/users/u1/profile", params={"clock": "wall"}, headers=read), 422, "clock")
    assert_problem(c.get("/v1/users/u1/items/zzzz", headers=read), 404)
    assert_problem(c.get("/v1/users/u1/nothing-here", headers=read), 404)
    assert_problem(c.put("/v1/users/u1/profile", headers=read), 405)


def test_oversize_bodies_are_413(api: Api, settings: Settings) -> None:
    small = attrs.evolve(settings, max_body_bytes=2_000)
    for small_api in make_api(small):
        big = {"message": "长" * 3_000}
        assert_problem(small_api.client.post("/v1/users/u1/messages", json=big, headers=small_api.headers()), 413)

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what arrives
            yield b'{"message": "'
            for _ in range(10):
                yield b"x" * 500
            yield b'"}'

        streamed = small_api.client.post(
            "/v1/users/u1/messages",
            content=chunks(),
            headers={**small_api.headers(), "Content-Type": "application/json"},
        )
        assert_problem(streamed, 413)
        assert small_api.say("u1", "我在上海工作")["status"] == "recorded"


def test_rate_limit_answers_429_with_retry_after(settings: Settings) -> None:
    for api in make_api(attrs.evolve(settings, rate_limit=3)):
        read = api.headers("acme", "read")
        statuses = [api.client.get("/v1/users/u1/profile", headers=read).status_code for _ in range(5)]
        assert statuses[:3] == [200, 200, 200] and statuses[3] == 429
        limited = api.client.get("/v1/users/u1/profile", headers=read)
        body = assert_problem(limited, 429)
        assert int(limited.headers["Retry-After"]) >= 1 and "3 requests a minute" in body["detail"]
        # another key has its own budget
        assert api.client.get("/v1/users/u1/profile", headers=api.headers("acme", "write")).status_code == 200


def test_a_batch_is_ingested_in_order_with_a_result_or_a_problem_per_message(api: Api) -> None:
    api.say("u1", "我住在杭州", message_id="m0")
    batch = [
        {"message": "我搬到上海了", "message_id": "m1"},
        {"message": "x" * 20_000},
        {"message": "我住在杭州", "message_id": "m0"},
        {"message": "我养了一只猫", "timestamp": "2025-06-01T08:00:00Z"},
    ]
    response = api.client.post("/v1/users/u1/messages/batch", json={"messages": batch}, headers=api.headers())
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["recorded"], body["duplicates"], body["failed"]) == (2, 1, 1)
    first, bad, again, cat = body["results"]
    assert first["status"] == "recorded" and [i["action"] for i in first["items"]] == ["superseded"]
    assert (
        bad["error"]["status"] == 422
        and bad["error"]["field"] == "message"
        and "max_message_chars" in (bad["error"]["detail"])
    )
    assert again["status"] == "duplicate" and cat["facts"] == ["用户养了一只猫"]
    facts = api.client.get("/v1/users/u1/profile", headers=api.headers()).json()["facts"]
    assert sorted(f["fact"] for group in facts.values() for f in group) == ["用户住在上海", "用户养了一只猫"]
    assert_problem(
        api.client.post("/v1/users/u1/messages/batch", json={"messages": []}, headers=api.headers()), 422, "messages"
    )
    read = api.headers("acme", "read")
    assert_problem(api.client.post("/v1/users/u1/messages/batch", json={"messages": batch}, headers=read), 403)


def test_a_batch_costs_one_request_per_message(settings: Settings) -> None:
    for api in make_api(attrs.evolve(settings, rate_limit=4)):
        url, key = "/v1/users/u1/messages/batch", api.headers()
        too_big = api.client.post(url, json={"messages": [{"message": "我是老师"}] * 5}, headers=key)
        assert_problem(too_big, 422, "messages")
        fits = api.client.post(
            url, json={"messages": [{"message": "我是老师"}, {"message": "我住在成都"}]}, headers=key
        )
        assert fits.status_code == 200 and fits.json()["recorded"] == 2
        # 1 for the refused batch, 2 for this one: 1 left, and a batch of 2 costs 2.
        refused = api.client.post(url, json={"messages": [{"message": "我养了一只狗"}] * 2}, headers=key)
        assert_problem(refused, 429)
        assert int(refused.headers["Retry-After"]) >= 1
        profile = api.client.get("/v1/users/u1/profile", headers=api.headers("acme", "read"))  # its own budget
        assert profile.status_code == 200 and "用户养了一只狗" not in profile.text and "用户是老师" in profile.text


def test_health_readiness_metrics_and_openapi(api: Api) -> None:
    c = api.client
    assert c.get("/healthz").json()["status"] == "ok"
    ready = c.get("/readyz")
    assert ready.status_code == 200 and ready.json()["checks"]["database"] == "ok"
    api.say("u1", "我在上海工作")
    api.client.get("/v1/users/u1/profile", headers=api.headers("acme", "read"))
    text = c.get("/metrics").text
    assert 'factledger_messages_ingested_total{status="recorded"}' in text
    assert 'route="/v1/users/{user_id}/profile"' in text and "u1" not in text
    assert "factledger_projection_lag_events" in text and "factledger_llm_calls" in text
    schema = c.get("/openapi.json").json()
    assert "/v1/users/{user_id}/messages" in schema["paths"] and c.get("/docs").status_code == 200


def test_readiness_fails_when_a_read_model_lags(settings: Settings) -> None:
    lagging = attrs.evolve(settings, inline_projection=False, ready_max_lag=1)
    for api in make_api(lagging):
        api.say("u1", "我在上海工作，我喜欢猫")
        api.say("u1", "我在北京读书")
        not_ready = api.client.get("/readyz")
        body = assert_problem(not_ready, 503)
        assert body["checks"]["projection_lag"] > 1
