"""The operator's console over HTTP (FastAPI's TestClient), on both backends: signing in,
sessions and CSRF, scopes, tenancy, escaping, every page and every action."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import attrs
import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from factledger.application.access import Scope
from factledger.entrypoints.http import console as console_routes
from factledger.entrypoints.http import create_app
from factledger.infrastructure.config import Settings

PAGE_BUDGET = 300 * 1024
HOSTILE = "I prefer tea <script>alert('x')</script> and <img src=x onerror=alert(1)>"


@attrs.define
class Console:
    client: TestClient
    keys: Any
    issued: dict[tuple[str, str], str] = attrs.field(factory=dict)

    def token(self, tenant: str = "acme", scope: str = "write") -> str:
        if (tenant, scope) not in self.issued:
            self.issued[(tenant, scope)] = self.keys.create(tenant, Scope.parse(scope), "console test").token
        return self.issued[(tenant, scope)]

    def bearer(self, tenant: str = "acme", scope: str = "write") -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token(tenant, scope)}"}

    def say(self, user: str, message: str, tenant: str = "acme") -> dict[str, Any]:
        response = self.client.post(
            f"/v1/users/{user}/messages", json={"message": message}, headers=self.bearer(tenant)
        )
        assert response.status_code == 201, response.text
        data: dict[str, Any] = response.json()
        return data

    def sign_in(self, tenant: str = "acme", scope: str = "write") -> str:
        """Sign in through the form; the CSRF token of the session's pages."""
        form = self.client.get("/console/sign-in")
        csrf = csrf_of(form.text)
        done = self.client.post(
            "/console/sign-in",
            data={"csrf": csrf, "key": self.token(tenant, scope), "next": "/console/users"},
            follow_redirects=False,
        )
        assert done.status_code == 303, done.text
        return csrf_of(self.client.get("/console/users").text)


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


@pytest.fixture
def console(settings: Settings) -> Iterator[Console]:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app) as client:
        yield Console(client, app.state.keys)


@pytest.fixture
def moved(console: Console) -> Console:
    """u1 worked in Hangzhou, then moved to Shanghai (a supersession), told a password, and
    wrote something hostile."""
    console.say("u1", "我在杭州工作，喜欢喝美式咖啡")
    console.say("u1", "我搬到上海了，现在在上海工作。我的密码是 hunter2abc")
    console.say("u1", HOSTILE)
    return console


def fact_id(console: Console, user: str, part: str) -> str:
    profile = console.client.get(f"/v1/users/{user}/profile", headers=console.bearer()).json()
    for facts in profile["facts"].values():
        for fact in facts:
            if part in fact["fact"]:
                return str(fact["id"])
    raise AssertionError(f"no fact with {part!r}")


def test_a_visitor_without_a_session_is_sent_to_sign_in_and_a_wrong_key_is_refused(console: Console) -> None:
    c = console.client
    away = c.get("/console/users/u1", follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"].startswith("/console/sign-in?next=")
    form = c.get("/console/sign-in")
    assert form.status_code == 200 and 'type="password"' in form.text and '<label for="f-key">' in form.text
    wrong = c.post("/console/sign-in", data={"csrf": csrf_of(form.text), "key": "flk_000000000000_" + "x" * 40})
    assert wrong.status_code == 401 and "problem" in wrong.text
    assert "factledger_console=" not in wrong.headers.get("set-cookie", "")
    planted = c.get("/console/sign-in", params={"failed": "Your key expired: sign in at evil.example"})
    assert planted.status_code == 200 and "evil.example" not in planted.text


def test_signing_in_sets_an_opaque_strict_http_only_cookie_and_signing_out_ends_it(console: Console) -> None:
    c = console.client
    token = console.token()
    form = c.get("/console/sign-in")
    done = c.post(
        "/console/sign-in",
        data={"csrf": csrf_of(form.text), "key": token, "next": "/console/users"},
        follow_redirects=False,
    )
    assert done.status_code == 303 and done.headers["location"] == "/console/users"
    cookie = done.headers["set-cookie"]
    assert "factledger_console=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    # the whole secret: it is url-safe base64 and may hold "_" itself (its last piece alone, a
    # character or two, once matched the cookie by chance)
    secret_part = token.split("_", 2)[2]
    assert len(secret_part) >= 40
    assert secret_part not in cookie and token not in cookie
    page = c.get("/console/users")
    assert page.status_code == 200 and "acme" in page.text
    out = c.post("/console/sign-out", data={"csrf": csrf_of(page.text)}, follow_redirects=False)
    assert out.status_code == 303
    assert c.get("/console/users", follow_redirects=False).status_code == 303


def test_the_sign_in_form_refuses_a_post_without_its_csrf_token(console: Console) -> None:
    console.client.get("/console/sign-in")
    refused = console.client.post("/console/sign-in", data={"key": console.token()}, follow_redirects=False)
    assert refused.status_code == 403
    assert "factledger_console=" not in refused.headers.get("set-cookie", "")


def test_after_sign_in_the_visitor_goes_only_to_a_console_page(console: Console) -> None:
    c = console.client
    for target in ("https://evil.example/", "//evil.example/console", "/v1/users"):
        form = c.get("/console/sign-in")
        done = c.post(
            "/console/sign-in",
            data={"csrf": csrf_of(form.text), "key": console.token(), "next": target},
            follow_redirects=False,
        )
        assert done.headers["location"] == "/console/users", target
    switched = c.get("/console/language/zh", params={"next": "https://evil.example/"}, follow_redirects=False)
    assert switched.headers["location"] == "/console/users"


def test_every_page_answers_under_the_budget_with_no_script_and_a_strict_policy(moved: Console) -> None:
    c, headers = moved.client, moved.bearer()
    item = fact_id(moved, "u1", "上海工作")
    message_id = c.get("/v1/users/u1/history", headers=headers).json()["entries"][1]["message_id"]
    pages = [
        "/console/users",
        "/console/users?q=u",
        "/console/users/u1",
        "/console/users/u1?as_of=2020-01-01&clock=recorded",
        f"/console/users/u1/items/{item}",
        "/console/users/u1/messages",
        f"/console/users/u1/messages/{message_id}",
        "/console/users/u1/forget",
        "/console/tombstones",
        "/console/health",
    ]
    for path in pages:
        page = c.get(path, headers=headers)
        assert page.status_code == 200, (path, page.text)
        assert page.headers["content-type"].startswith("text/html")
        assert len(page.content) < PAGE_BUDGET, path
        assert "script-src" not in page.headers["content-security-policy"]
        assert "default-src 'none'" in page.headers["content-security-policy"]
        assert "<script" not in page.text.lower(), path
        assert '<main id="main"' in page.text and 'class="skip"' in page.text
    assert c.get("/console", headers=headers, follow_redirects=False).headers["location"] == "/console/users"


def test_a_message_with_markup_is_shown_as_text_everywhere(moved: Console) -> None:
    c, headers = moved.client, moved.bearer()
    for path in ("/console/users/u1", "/console/users/u1/messages"):
        page = c.get(path, headers=headers).text
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page, path
        assert "<img src=x" not in page and "<script>" not in page
    hostile_user = '"><svg onload=alert(1)>'
    moved.say(quote(hostile_user, safe=""), "我在成都工作")
    listing = c.get("/console/users", headers=headers).text
    assert "&quot;&gt;&lt;svg onload=alert(1)&gt;" in listing and "<svg" not in listing


def test_the_users_list_searches_pages_and_counts(console: Console) -> None:
    for n in range(55):
        console.say(f"person{n:02d}", "我在西安工作")
    console.say("person00", "我搬到成都了，现在在成都工作")
    c, headers = console.client, console.bearer()
    first = c.get("/console/users", headers=headers).text
    assert "person00" in first and "person49" in first and "person50" not in first
    assert 'rel="next"' in first and "1–50" in first and "55" in first
    second = c.get("/console/users", params={"offset": 50}, headers=headers).text
    assert "person54" in second and "person00" not in second and 'rel="prev"' in second
    found = c.get("/console/users", params={"q": "ON00"}, headers=headers).text
    row = re.search(r"<tr><td><a href=\"/console/users/person00\">person00</a></td>(.*?)</tr>", found)
    assert row, found
    cells = re.findall(r"<td>(.*?)</td>", row.group(1))
    assert cells[:3] == ["2", "2", "1"]  # two messages, two active facts, one retired (Xi'an)
    assert "person01" not in found


def test_a_persons_page_draws_each_supersession_with_its_message_relation_and_judge(moved: Console) -> None:
    page = moved.client.get("/console/users/u1", headers=moved.bearer()).text
    li = re.search(r'<li class="supersession">(.*?)</li>', page, re.S)
    assert li, page
    drawn = li.group(1)
    assert drawn.index("用户在杭州工作") < drawn.index("→") < drawn.index("用户在上海工作")
    assert "update" in drawn and "offline-rules/" in drawn
    assert re.search(r"rules that decided: <span>rules_zh_facts\.[a-z_.-]+, judge\.[a-z-]+", drawn), drawn  # ADR 0035
    assert 'href="/console/users/u1/messages/' in drawn
    message_url = re.search(r'href="(/console/users/u1/messages/[^"]+)"', drawn)
    assert message_url
    message = moved.client.get(message_url.group(1), headers=moved.bearer()).text
    assert "我搬到上海了" in message and "用户在上海工作" in message
    # the old fact came from an earlier message: the arrow still names it
    there = re.search(r'<li class="supersession">(.*?)</li>', message, re.S)
    assert there and there.group(1).index("用户在杭州工作") < there.group(1).index("→")
    assert "prompt: <span>—</span>" in there.group(1)  # the offline rules use no prompt


def test_the_profile_as_of_a_date_shows_what_was_true_then(moved: Console) -> None:
    c, headers = moved.client, moved.bearer()
    history = c.get("/v1/users/u1/history", headers=headers).json()["entries"]
    first_said = history[1]["said_at"]
    then = c.get("/console/users/u1", params={"as_of": first_said, "clock": "said"}, headers=headers).text
    profile = then.split("<h2>", 2)[1].split("id='timeline'")[0]
    assert "用户在杭州工作" in profile and "用户在上海工作" not in profile
    now = c.get("/console/users/u1", headers=headers).text.split("<h2>", 2)[1].split("id='timeline'")[0]
    assert "用户在上海工作" in now
    bad = c.get("/console/users/u1", params={"as_of": "last tuesday"}, headers=headers)
    assert bad.status_code == 422 and "as_of" in bad.text


def test_secrets_are_shown_as_their_placeholders(moved: Console) -> None:
    page = moved.client.get("/console/users/u1/messages", headers=moved.bearer()).text
    assert "hunter2abc" not in page and "[密码]" in page and "password ×1" in page


def test_an_item_page_shows_its_whole_life(moved: Console) -> None:
    old = fact_id(moved, "u1", "上海工作")
    c, headers = moved.client, moved.bearer()
    hangzhou = next(
        e["fact_id"]
        for e in c.get("/v1/users/u1/history", headers=headers).json()["entries"]
        if e["event"] == "FactObserved" and "杭州" in e["text"]
    )
    page = c.get(f"/console/users/u1/items/{hangzhou}", headers=headers).text
    assert "用户在杭州工作" in page and "我在杭州工作" in page and f"/console/users/u1/items/{old}" in page
    assert "update" in page and 'class="retired"' in page
    assert re.search(r"<td>rules that decided</td>\s*<td>rules_zh_facts\.[a-z_.-]+", page), page  # ADR 0035
    assert c.get(f"/console/users/u1/items/{hangzhou[:8]}", headers=headers).status_code == 200
    assert c.get("/console/users/u1/items/nothing", headers=headers).status_code == 404


def test_a_correction_is_recorded_with_the_keys_identity_and_changes_the_timeline(moved: Console) -> None:
    csrf = moved.sign_in()
    c = moved.client
    item = fact_id(moved, "u1", "上海工作")
    done = c.post(f"/console/users/u1/items/{item}/invalidate", data={"csrf": csrf, "reason": "用户说错了"})
    assert done.status_code == 200 and "?done=invalidated" in str(done.url)
    page = done.text
    key_id = moved.token().split("_")[1]
    li = re.search(r'<li class="invalidation">(.*?)</li>', page, re.S)
    assert li and "用户在上海工作" in li.group(1) and "用户说错了" in li.group(1) and f"api:{key_id}" in li.group(1)
    why = c.get(f"/v1/users/u1/items/{item}", headers=moved.bearer()).json()
    assert why["is_active"] is False and why["invalidated"]["actor"].startswith(f"api:{key_id}")
    restated = c.post("/console/users/u1/facts", data={"csrf": csrf, "text": "用户在南京工作", "category": "location"})
    profile = restated.text.split("<h2>", 2)[1].split("id='timeline'")[0]
    assert restated.status_code == 200 and "用户在南京工作" in profile


def test_a_form_without_its_csrf_token_changes_nothing(moved: Console) -> None:
    csrf = moved.sign_in()
    c = moved.client
    item = fact_id(moved, "u1", "上海工作")
    for data in ({"reason": "x"}, {"reason": "x", "csrf": csrf[:-2] + "zz"}):
        refused = c.post(f"/console/users/u1/items/{item}/invalidate", data=data)
        assert refused.status_code == 403, refused.text
    assert c.post("/console/users/u1/facts", data={"text": "用户养猫"}).status_code == 403
    assert c.post("/console/users/u1/forget", data={"confirm": "u1"}).status_code == 403
    assert c.get(f"/v1/users/u1/items/{item}", headers=moved.bearer()).json()["is_active"] is True
    assert c.get("/v1/users/u1/profile", headers=moved.bearer()).status_code == 200


def test_a_read_key_looks_but_cannot_post(moved: Console) -> None:
    c = moved.client
    item = fact_id(moved, "u1", "上海工作")
    for headers in (moved.bearer(scope="read"), None):
        if headers is None:  # the same through a session
            csrf = moved.sign_in(scope="read")
        kwargs: dict[str, Any] = {"headers": headers} if headers else {}
        data = {} if headers else {"csrf": csrf}
        page = c.get("/console/users/u1", **kwargs)
        assert page.status_code == 200 and "/invalidate" not in page.text and "/forget" not in page.text
        why = c.get(f"/console/users/u1/items/{item}", **kwargs)
        assert why.status_code == 200 and "/invalidate" not in why.text
        assert (
            c.post(f"/console/users/u1/items/{item}/invalidate", data={**data, "reason": "r"}, **kwargs).status_code
            == 403
        )
        assert c.post("/console/users/u1/facts", data={**data, "text": "用户养猫"}, **kwargs).status_code == 403
        assert c.post("/console/users/u1/forget", data={**data, "confirm": "u1"}, **kwargs).status_code == 403
        assert c.get("/console/users/u1/forget", **kwargs).status_code == 403
    assert c.get(f"/v1/users/u1/items/{item}", headers=moved.bearer()).json()["is_active"] is True


def test_another_tenants_user_is_404_on_every_console_route(moved: Console) -> None:
    c, other = moved.client, moved.bearer("globex", "admin")
    moved.say("mine", "我在苏州工作", tenant="globex")
    item = fact_id(moved, "u1", "上海工作")
    message_id = c.get("/v1/users/u1/history", headers=moved.bearer()).json()["entries"][1]["message_id"]
    for user in ("u1", "nobody"):
        for path in ("", "/messages", f"/messages/{message_id}", f"/items/{item}", "/export", "/forget"):
            assert c.get(f"/console/users/{user}{path}", headers=other).status_code == 404, (user, path)
        for path, data in (
            (f"/items/{item}/invalidate", {"reason": "hostile"}),
            ("/facts", {"text": "用户养猫"}),
            ("/forget", {"confirm": user}),
        ):
            assert c.post(f"/console/users/{user}{path}", data=data, headers=other).status_code == 404, (user, path)
    listing = c.get("/console/users", headers=other).text
    assert "mine" in listing and "u1" not in listing
    tried = {
        ("GET", "/console/users/{user_id}" + tail)
        for tail in ("", "/messages", "/messages/{message_id}", "/items/{item_id}", "/export", "/forget")
    } | {("POST", "/console/users/{user_id}" + tail) for tail in ("/items/{item_id}/invalidate", "/facts", "/forget")}
    # (the console's own router: FastAPI 0.16x wraps an included router, app.routes no longer lists its routes)
    routes = {
        (method, route.path)
        for route in console_routes.router.routes
        if isinstance(route, APIRoute) and "{user_id}" in route.path
        for method in route.methods
    }
    assert routes and routes == tried, "a console route on a user has no cross-tenant attempt here"
    assert c.get(f"/v1/users/u1/items/{item}", headers=moved.bearer()).json()["is_active"] is True


def test_forgetting_needs_the_user_id_typed_and_leaves_a_tombstone(moved: Console) -> None:
    csrf = moved.sign_in()
    c = moved.client
    wrong = c.post("/console/users/u1/forget", data={"csrf": csrf, "confirm": "u2"})
    assert wrong.status_code == 422 and c.get("/v1/users/u1/profile", headers=moved.bearer()).status_code == 200
    done = c.post("/console/users/u1/forget", data={"csrf": csrf, "confirm": "u1"})
    assert done.status_code == 200 and "/console/tombstones" in str(done.url)
    assert "<td>" in done.text and "api:" in done.text and "u1" not in done.text.split("<main", 1)[1]
    assert c.get("/console/users/u1").status_code == 404
    assert "/console/users/u1" not in c.get("/console/users").text


def test_export_downloads_the_persons_memory_as_json(moved: Console) -> None:
    answer = moved.client.get("/console/users/u1/export", headers=moved.bearer(scope="read"))
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/json")
    assert answer.headers["content-disposition"] == 'attachment; filename="factledger-u1.json"'
    assert "用户在上海工作" in answer.text


def test_the_interface_follows_the_browser_and_the_switch(moved: Console) -> None:
    c, headers = moved.client, moved.bearer()
    chinese = c.get("/console/users", headers={**headers, "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}).text
    assert '<html lang="zh-CN">' in chinese and "用户" in chinese and ">English<" in chinese
    english = c.get("/console/users", headers={**headers, "Accept-Language": "en-GB,zh;q=0.3"}).text
    assert '<html lang="en">' in english and ">中文<" in english
    switched = c.get("/console/language/zh", params={"next": "/console/users/u1"}, follow_redirects=False)
    assert switched.status_code == 303 and switched.headers["location"] == "/console/users/u1"
    assert "factledger_console_lang=zh" in switched.headers["set-cookie"]
    page = c.get("/console/users/u1", headers={**headers, "Accept-Language": "en"}).text
    assert '<html lang="zh-CN">' in page and "时间线" in page


def test_health_shows_the_lag_the_usage_per_day_and_the_errors(console: Console, backend: str) -> None:
    console.say("u1", "我在杭州工作")
    app: Any = console.client.app
    service = app.state.tenants.service("acme")
    if backend == "postgres":
        from factledger.infrastructure.llm.usage import CallRecord

        service.usage_log.record(CallRecord("chat", "gpt-test", input_tokens=120, output_tokens=30))
        service.usage_log.record(CallRecord("chat", "gpt-test", ok=False, error="timeout"))
    page = console.client.get("/console/health", headers=console.bearer(scope="read"))
    assert page.status_code == 200 and len(page.content) < PAGE_BUDGET
    text = page.text
    assert re.search(r"Lag \(events behind\)</td><td><strong>0</strong>", text), text
    if backend == "postgres":
        assert '<svg role="img"' in text and "2 calls, 150 tokens" in text
        assert re.search(r"failed LLM calls</td><td>1</td>", text), text
    else:
        assert "keeps no usage log" in text and "<svg" not in text
    with pytest.raises(Exception, match="days must be"):
        service.usage_by_day(0)


def replayed(console: Console, name: str) -> None:
    admin = console.bearer(scope="admin")
    started = console.client.post(f"/v1/ledgers/{name}/replay", json={"extractor": "offline"}, headers=admin)
    assert started.status_code == 202, started.text
    for _ in range(600):
        if console.client.get(f"/v1/ledgers/{name}/replay", headers=admin).json()["state"] != "running":
            return
        time.sleep(0.05)
    raise AssertionError("the replay did not finish")


def test_ledgers_show_a_replay_its_diff_side_by_side_and_promote_after_typing_its_name(moved: Console) -> None:
    c, admin = moved.client, moved.bearer(scope="admin")
    replayed(moved, "again")
    item = fact_id(moved, "u1", "上海工作")
    c.post(f"/v1/users/u1/items/{item}/invalidate", json={"reason": "wrong"}, headers=admin)
    listing = c.get("/console/ledgers", headers=admin)
    assert listing.status_code == 200 and 'href="/console/ledgers/again"' in listing.text
    assert "finished" in listing.text and "offline-rules/" in listing.text
    summary = c.get("/console/ledgers/again", headers=admin).text
    assert 'href="/console/ledgers/again?user=u1"' in summary
    side = c.get("/console/ledgers/again", params={"user": "u1"}, headers=admin).text
    row = re.search(r"<tr><td>(<span class=\"fact old\">用户在上海工作.*?)</tr>", side, re.S)
    assert row and '<span class="fact">用户在上海工作' in row.group(1) and "is_active: False → True" in row.group(1)
    path = "/console/ledgers/again/promote"
    assert c.post(path, data={"confirm": "agian"}, headers=admin).status_code == 422
    refused = c.post(path, data={"confirm": "again"}, headers=admin)
    assert refused.status_code == 422 and "operator correction" in refused.text
    done = c.post(path, data={"confirm": "again", "force": "yes"}, headers=admin)
    assert done.status_code == 200 and "done=promoted" in str(done.url)
    assert re.search(r"<tr><td>live</td><td>offline-rules/", done.text), done.text


def test_ledgers_need_an_admin_key_and_stay_in_the_tenant(moved: Console) -> None:
    c = moved.client
    replayed(moved, "again")
    write = moved.bearer()
    assert "/console/ledgers" not in c.get("/console/users", headers=write).text
    for path in ("/console/ledgers", "/console/ledgers/again"):
        assert c.get(path, headers=write).status_code == 403
    assert c.post("/console/ledgers/again/promote", data={"confirm": "again"}, headers=write).status_code == 403
    other = moved.bearer("globex", "admin")
    assert "again" not in c.get("/console/ledgers", headers=other).text
    assert c.get("/console/ledgers/again", headers=other).status_code == 404
    assert c.post("/console/ledgers/again/promote", data={"confirm": "again"}, headers=other).status_code == 404
    assert (
        c.get("/console/ledgers/again", params={"user": "u1"}, headers=moved.bearer(scope="admin")).status_code == 200
    )


def test_over_https_the_session_cookie_is_secure(settings: Settings) -> None:
    app = create_app(settings, mount_mcp=False)
    with TestClient(app, base_url="https://testserver") as client:
        token = app.state.keys.create("acme", Scope.READ, "tls").token
        form = client.get("/console/sign-in")
        assert "Secure" in form.headers["set-cookie"]
        done = client.post("/console/sign-in", data={"csrf": csrf_of(form.text), "key": token}, follow_redirects=False)
        assert done.status_code == 303 and "Secure" in done.headers["set-cookie"]


def test_revoking_the_key_ends_its_sessions(moved: Console) -> None:
    moved.sign_in(scope="read")
    assert moved.client.get("/console/users").status_code == 200
    key_id = moved.token(scope="read").split("_")[1]
    moved.keys.revoke(key_id)
    assert moved.client.get("/console/users", follow_redirects=False).status_code == 303
    app: Any = moved.client.app
    assert app.state.console_sessions._sessions == {}  # ended, not tried again on every page


@pytest.mark.slow
def test_a_long_history_keeps_every_page_under_the_budget(console: Console) -> None:
    """Each page shows a bounded part: the newest 200 changes of the timeline, 50 messages."""
    cities = ["杭州", "上海", "北京", "深圳", "成都", "西安", "南京", "苏州"]
    batch = [
        {"message": f"我搬到{cities[n % 8]}了，现在在{cities[n % 8]}工作，第{n}次 <b>搬家</b>"} for n in range(400)
    ]
    answer = console.client.post("/v1/users/mover/messages/batch", json={"messages": batch}, headers=console.bearer())
    assert answer.status_code == 200 and answer.json()["recorded"] == 400, answer.text[:500]
    headers = console.bearer()
    for path in ("/console/users/mover", "/console/users/mover/messages", "/console/users/mover/messages?offset=350"):
        page = console.client.get(path, headers=headers)
        assert page.status_code == 200 and len(page.content) < PAGE_BUDGET, (path, len(page.content))
    said: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = console.client.get(
            "/v1/users/mover/history", params={"kind": "message", "limit": 500, "offset": offset}, headers=headers
        ).json()
        said += [e["message_id"] for e in page["entries"] if e["event"] == "MessageIngested"]
        offset = page["next_offset"]
    assert len(said) == 400
    first, last = f"/messages/{said[0]}", f"/messages/{said[-1]}"
    timeline = console.client.get("/console/users/mover", headers=headers).text
    assert timeline.count("<li class=") == 200 and last in timeline and first not in timeline
    counted = re.search(r"of (\d+)</span>", timeline.split("id='timeline'")[1])
    assert counted and int(counted.group(1)) > 400
    total = int(counted.group(1))
    older = re.search(r'href="(/console/users/mover\?older=200#timeline)" rel="prev"', timeline)
    assert older, timeline[-3000:]
    oldest = console.client.get(f"/console/users/mover?older={total - 1}", headers=headers).text
    assert oldest.count("<li class=") == 1 and first in oldest and "Newer changes" in oldest
    assert 'rel="prev"' not in oldest.split("id='timeline'")[1]


def test_an_admin_starts_a_replay_from_the_ledgers_page(moved: Console) -> None:
    c, admin = moved.client, moved.bearer(scope="admin")
    started = c.post("/console/ledgers/replay", data={"name": "tuned", "extractor": "offline"}, headers=admin)
    assert started.status_code == 200 and "done=replaying" in str(started.url)
    for _ in range(600):
        if c.get("/v1/ledgers/tuned/replay", headers=admin).json()["state"] != "running":
            break
        time.sleep(0.05)
    listing = c.get("/console/ledgers", headers=admin).text
    assert 'href="/console/ledgers/tuned"' in listing and re.search(r"finished \d+/\d+", listing), listing
    for bad in ({"name": "live"}, {"name": "Bad Name"}, {"name": "ok_name", "extractor": "gpt"}):
        assert c.post("/console/ledgers/replay", data=bad, headers=admin).status_code == 422, bad
    assert c.post("/console/ledgers/replay", data={"name": "x2"}, headers=moved.bearer()).status_code == 403
