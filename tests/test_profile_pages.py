"""A profile says how many facts and preferences there are, shows a page of each in a stated
order (importance or strength, then when first said, then id), and pages (``limit``,
``offset``) the same way in the library, ``as_of``, the CLI, HTTP and MCP."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import attrs
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from processes import run_cli, run_cli_json
from scripted import ScriptedExtractor

from factledger import AsyncLedger, LedgerService
from factledger.application.access import Scope
from factledger.application.errors import InvalidInput
from factledger.entrypoints.http import create_app
from factledger.entrypoints.mcp_tools import Caller, build_server
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.tenants import Tenants, tenant_schema

FACTS = 63  # more than a default page (50) of facts
PREFERENCES = 23  # and of preferences (20)
START = datetime(2025, 1, 1, tzinfo=UTC)


def _confidence(i: int) -> float:
    """Importances with ties, so the tie-breaks (first said, then id) decide too."""
    return round(0.3 + 0.05 * (i % 7), 2)


SCRIPT: dict[str, Any] = {
    **{f"fact {i}": ([(f"用户的第{i}个爱好是编号{i}", "habit", _confidence(i))], []) for i in range(FACTS)},
    **{
        f"preference {i}": ([], [(f"偏好第{i}种颜色编号{i}", "style", _confidence(i), "e")]) for i in range(PREFERENCES)
    },
}


def tell(service: LedgerService, user: str = "u") -> None:
    """Every scripted message, one second apart (so "first said" orders ties)."""
    for n, message in enumerate(SCRIPT):
        service.ingest(user, message, timestamp=START + timedelta(seconds=n))


def ids(profile: Any) -> tuple[list[str], list[str]]:
    return [f.id for f in profile.facts], [p.id for p in profile.preferences]


def test_a_profile_says_how_many_there_are_and_shows_the_most_important_first(
    open_service: Callable[..., LedgerService],
) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    tell(service)
    everything = service.profile("u", limit=1000)
    facts_total, preferences_total = everything.facts_total, everything.preferences_total
    assert facts_total == len(everything.facts) == FACTS
    assert preferences_total == len(everything.preferences) > 20
    number = {f"用户的第{i}个爱好是编号{i}": i for i in range(FACTS)}  # also the order they were said in
    assert [number[f.text] for f in everything.facts] == sorted(range(FACTS), key=lambda i: (-_confidence(i), i))
    strengths = [p.strength for p in everything.preferences]
    assert strengths == sorted(strengths, reverse=True)

    first = service.profile("u").to_dict()
    assert (first["facts_count"], first["facts_total"], first["facts_limit"]) == (50, facts_total, 50)
    assert (first["preferences_count"], first["preferences_total"], first["preferences_limit"]) == (
        20,
        preferences_total,
        20,
    )
    assert first["offset"] == 0
    assert service.profile("u").has_more


def test_pages_cover_every_item_once_in_order_from_the_read_model_and_from_the_events(
    open_service: Callable[..., LedgerService],
) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    tell(service)
    whole = ids(service.profile("u", limit=1000))
    now = datetime.now(UTC)
    for source in ({}, {"as_of": now}, {"as_of": now, "clock": "recorded"}):
        facts: list[str] = []
        preferences: list[str] = []
        for offset in range(0, FACTS + 7, 7):
            page = service.profile("u", limit=7, offset=offset, **source)
            assert (page.offset, page.facts_limit, page.facts_total) == (offset, 7, FACTS), source
            facts += ids(page)[0]
            preferences += ids(page)[1]
        assert (facts, preferences) == whole, source
    tail = service.profile("u", limit=10, offset=60)
    assert len(tail.facts) == 3 and not tail.preferences and not tail.has_more
    assert (
        service.profile("u", limit=10, offset=60).to_dict()
        == service.profile("u", as_of=now, limit=10, offset=60).to_dict()
    )
    past_the_end = service.profile("u", offset=500).to_dict()
    assert past_the_end["facts"] == {} and past_the_end["facts_total"] == FACTS


def test_a_profile_as_it_was_pages_what_had_been_said_by_then(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    tell(service)
    then = START + timedelta(seconds=9.5)  # the first ten facts had been said
    page = service.profile("u", as_of=then, limit=4, offset=8)
    assert (len(page.facts), page.facts_total, page.preferences_total) == (2, 10, 0)


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ({"limit": 0}, "limit must be an integer from 1 to 1000 (max_profile_limit), got 0"),
        ({"limit": 1001}, "limit must be an integer from 1 to 1000 (max_profile_limit), got 1001"),
        ({"limit": True}, "limit must be an integer from 1 to 1000 (max_profile_limit), got True"),
        ({"limit": "5"}, "limit must be an integer from 1 to 1000 (max_profile_limit), got '5'"),
        ({"offset": -1}, "offset must be an integer from 0 up, got -1"),
        ({"offset": 1.5}, "offset must be an integer from 0 up, got 1.5"),
    ],
)
def test_a_bad_page_is_refused_naming_it(service: LedgerService, page: dict[str, Any], message: str) -> None:
    service.ingest("u", "我住在杭州")
    for as_of in (None, datetime.now(UTC)):
        with pytest.raises(InvalidInput) as refused:
            service.profile("u", as_of=as_of, **page)
        assert str(refused.value) == message


def test_the_largest_page_is_a_setting(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT), max_profile_limit=30)
    tell(service)
    assert len(service.profile("u", limit=30).facts) == 30
    with pytest.raises(InvalidInput, match=r"from 1 to 30 \(max_profile_limit\)"):
        service.profile("u", limit=31)


def test_the_async_ledger_pages_alike(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    tell(service)
    page = asyncio.run(AsyncLedger(service).profile("u", limit=5, offset=50))
    assert page.to_dict() == service.profile("u", limit=5, offset=50).to_dict()
    assert len(page.facts) == 5 and page.facts_total == FACTS


def test_a_memory_context_shows_the_first_page_and_says_how_many_there_are(
    open_service: Callable[..., LedgerService],
) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    tell(service)
    context = service.memory_context("u", "爱好")
    assert (len(context.profile.facts), context.profile.facts_total) == (50, FACTS)
    assert context.to_dict()["profile"]["facts_total"] == FACTS


# ---- HTTP, MCP and the CLI ----------------------------------------------------------------------


TENANT = "acme"


@pytest.fixture
def told(settings: Settings) -> Iterator[Settings]:
    """An installation where user ``u`` of the tenant ``acme`` said every scripted message."""
    tenant = attrs.evolve(settings, schema=tenant_schema(TENANT, settings.schema))
    with open_ledger(tenant, extractor=ScriptedExtractor(SCRIPT)) as service:
        tell(service)
    yield settings


def test_http_pages_the_profile(told: Settings) -> None:
    app = create_app(told, mount_mcp=False)
    with TestClient(app) as client:
        headers = {"Authorization": f"Bearer {app.state.keys.create(TENANT, Scope.READ, 't').token}"}
        first = client.get("/v1/users/u/profile", headers=headers).json()
        assert (first["facts_count"], first["facts_total"]) == (50, FACTS)
        page = client.get("/v1/users/u/profile", params={"limit": 5, "offset": 60}, headers=headers).json()
        assert (page["facts_count"], page["offset"], page["facts_limit"]) == (3, 60, 5)
        later = client.get(
            "/v1/users/u/profile", params={"limit": 5, "offset": 60, "as_of": "2030-01-01T00:00:00Z"}, headers=headers
        ).json()
        assert later == page
        refused = client.get("/v1/users/u/profile", params={"limit": 5000}, headers=headers)
        assert refused.status_code == 422 and refused.json()["field"] == "limit"
        assert "max_profile_limit" in refused.json()["detail"]
        assert client.get("/v1/users/u/profile", params={"offset": -1}, headers=headers).status_code == 422


def test_the_mcp_tool_pages_the_profile(told: Settings) -> None:
    tenants = Tenants(told)

    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator(TENANT))) as client:
            result = await client.call_tool("get_profile", {"user_id": "u", "limit": 5, "offset": 60})
            assert not result.is_error and result.structured_content is not None
            page = result.structured_content
            assert (page["facts_count"], page["facts_total"], page["offset"]) == (3, FACTS, 60)
            refused = await client.call_tool("get_profile", {"user_id": "u", "limit": 0})
            assert refused.is_error and "invalid input: limit must be" in refused.content[0].text  # type: ignore[union-attr]

    try:
        anyio.run(main)
    finally:
        tenants.close()


@pytest.fixture
def told_to_the_cli(pg_uri: str, schema: str, cli_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``cli_env`` where user ``u`` said every scripted message."""
    settings = Settings(home=tmp_path / "home", database_url=pg_uri, schema=schema)
    with open_ledger(settings, extractor=ScriptedExtractor(SCRIPT)) as service:
        tell(service)
    return cli_env


def test_the_cli_says_how_many_it_shows_and_pages(told_to_the_cli: dict[str, str]) -> None:
    env = told_to_the_cli
    page = run_cli_json(env, "profile", "u", "--limit", "5", "--offset", "60")
    assert (page["facts_count"], page["facts_total"], page["preferences_count"]) == (3, FACTS, 0)
    preferences = page["preferences_total"]
    assert preferences > 20
    shown = " ".join(run_cli(env, "profile", "u").stdout.split())
    assert (
        f"showing 50 of 63 facts and 20 of {preferences} preferences, most important first (--offset/--limit for more)"
    ) in shown
    last = " ".join(run_cli(env, "profile", "u", "--limit", "5", "--offset", "60").stdout.split())
    assert f"showing 61–63 of 63 facts and none of {preferences} preferences, most important first" in last
    assert "for more" not in last
    refused = run_cli(env, "profile", "u", "--limit", "0", expect=2)
    assert "limit must be an integer from 1 to 1000 (max_profile_limit), got 0" in refused.stderr
