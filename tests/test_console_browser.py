"""The console in a real browser: headless Chromium from the Debian package, driven by
Playwright's Python package (ADR 0033), against ``create_app`` served by uvicorn on a free
port, on both backends.

Signs in with a key, opens a user, follows a supersession to its message, invalidates a fact
and sees the timeline change, forgets the user and sees them gone. Each page is
screenshotted under the test's temporary directory (``--basetemp``) for a reviewer.
Skipped, saying why, only when no Chromium is installed.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factledger.application.access import Scope
from factledger.entrypoints.http import create_app
from factledger.infrastructure.config import Settings

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The browser to drive: FACTLEDGER_TEST_CHROMIUM, else Debian's chromium on the PATH."""
    chosen = os.environ.get("FACTLEDGER_TEST_CHROMIUM")
    if chosen:
        return chosen
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


CHROMIUM = chromium_path()
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="no Chromium for the browser tests: apt-get install -y chromium (ADR 0033)"
    ),
]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(settings: Settings) -> Iterator[dict[str, Any]]:
    """The API and console on a real socket, with u1's history recorded and a write key."""
    import uvicorn

    app = create_app(settings, mount_mcp=False)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    service = app.state.tenants.service("acme")
    service.ingest("u1", "我在杭州工作，喜欢喝美式咖啡")
    service.ingest("u1", "我搬到上海了，现在在上海工作。")
    service.ingest("u1", "I prefer tea <script>document.title='owned'</script>")
    token = app.state.keys.create("acme", Scope.WRITE, "browser test").token
    admin = app.state.keys.create("acme", Scope.ADMIN, "browser test admin").token
    service.replay("tuned", "offline")
    try:
        yield {"base": f"http://127.0.0.1:{port}", "token": token, "admin": admin}
    finally:
        server.should_exit = True
        thread.join(timeout=30)


@pytest.fixture
def page(tmp_path: Path) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        context = browser.new_context(locale="en-GB", viewport={"width": 1200, "height": 900})
        tab = context.new_page()
        tab.set_default_timeout(15_000)
        try:
            yield tab
        finally:
            context.close()
            browser.close()


def shoot(page: Any, tmp_path: Path, name: str) -> None:
    (tmp_path / "screenshots").mkdir(exist_ok=True)
    page.screenshot(path=str(tmp_path / "screenshots" / f"{name}.png"), full_page=True)


def test_an_operator_follows_a_supersession_corrects_a_fact_and_forgets_a_person(
    served: dict[str, Any], page: Any, tmp_path: Path
) -> None:
    page.goto(served["base"] + "/console/users/u1")
    assert "/console/sign-in" in page.url
    shoot(page, tmp_path, "0-sign-in")
    page.get_by_label("API key").fill(served["token"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/console/users/u1$"))
    assert page.title() != "owned"  # the hostile message was shown, not run
    assert "<script>" in page.locator("ol.timeline").inner_text()
    shoot(page, tmp_path, "1-person")

    supersession = page.locator("li.supersession").first
    assert "用户在杭州工作" in supersession.inner_text() and "用户在上海工作" in supersession.inner_text()
    supersession.locator("a.message").click()
    page.wait_for_url(re.compile(r"/console/users/u1/messages/"))
    assert "我搬到上海了" in page.locator("blockquote").inner_text()
    shoot(page, tmp_path, "2-message")

    page.goto(served["base"] + "/console/users/u1")
    page.locator("table a.fact", has_text="用户在上海工作").click()
    page.wait_for_url(re.compile(r"/console/users/u1/items/"))
    shoot(page, tmp_path, "3-why")
    page.get_by_label("Reason").fill("the user never moved")
    page.get_by_role("button", name="Invalidate").click()
    page.wait_for_url(re.compile(r"done=invalidated"))
    invalidation = page.locator("li.invalidation")
    assert "用户在上海工作" in invalidation.inner_text() and "the user never moved" in invalidation.inner_text()
    shoot(page, tmp_path, "4-corrected")

    page.get_by_role("link", name="Forget this person").click()
    page.get_by_label("User id, to confirm").fill("u1")
    page.get_by_role("button", name="Forget this person").click()
    page.wait_for_url(re.compile(r"/console/tombstones"))
    shoot(page, tmp_path, "5-tombstones")
    page.get_by_role("link", name="Users", exact=True).click()
    assert page.locator("main").get_by_text("u1", exact=True).count() == 0
    shoot(page, tmp_path, "6-users-after-forget")
    assert len(list((tmp_path / "screenshots").glob("*.png"))) == 7


def test_the_console_is_usable_by_keyboard_and_every_field_has_a_label(
    served: dict[str, Any], page: Any, tmp_path: Path
) -> None:
    page.goto(served["base"] + "/console/sign-in")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.type(served["token"])  # the language switch, then the key field
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/console/users$"))
    for path in ("/console/users", "/console/users/u1", "/console/users/u1/forget"):
        page.goto(served["base"] + path)
        unlabelled = page.evaluate(
            "[...document.querySelectorAll('input:not([type=hidden]),select')]"
            ".filter(e => !(e.labels && e.labels.length)).map(e => e.name)"
        )
        assert unlabelled == [], (path, unlabelled)
    page.get_by_role("link", name="中文").click()
    assert page.locator("html").get_attribute("lang") == "zh-CN"
    assert page.get_by_role("button", name="遗忘此人").count() == 1
    shoot(page, tmp_path, "zh-forget")


def test_every_page_renders_in_the_browser_and_is_screenshotted(
    served: dict[str, Any], page: Any, tmp_path: Path
) -> None:
    page.goto(served["base"] + "/console/sign-in")
    page.get_by_label("API key").fill(served["admin"])
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r"/console/users$"))
    pages = {
        "users": "/console/users",
        "messages": "/console/users/u1/messages",
        "health": "/console/health",
        "ledgers": "/console/ledgers",
        "diff": "/console/ledgers/tuned",
        "diff-u1": "/console/ledgers/tuned?user=u1",
        "tombstones": "/console/tombstones",
    }
    for name, path in pages.items():
        answer = page.goto(served["base"] + path)
        assert answer is not None and answer.status == 200, (path, answer and answer.status)
        assert page.locator("h1").count() == 1
        shoot(page, tmp_path, f"page-{name}")
    page.goto(served["base"] + "/console/ledgers")
    assert page.get_by_role("link", name="tuned").count() == 1
    assert len(list((tmp_path / "screenshots").glob("page-*.png"))) == len(pages)
