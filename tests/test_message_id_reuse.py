"""A message id sent again with another text is a conflict (``MessageIdReused``), not a silent
duplicate; the same id with the same text stays an idempotent ``duplicate``. The store keeps a
keyed hash of the text beside each id; ids recorded without one (databases from before) are
duplicates as they were."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import anyio
import psycopg
import pytest
from fastapi.testclient import TestClient
from mcp import Client
from psycopg.sql import SQL, Identifier

from factledger.application.access import Scope
from factledger.application.errors import MessageIdReused
from factledger.application.ingestion import Incoming
from factledger.application.results import IngestResult
from factledger.application.service import LedgerService
from factledger.entrypoints.http import create_app
from factledger.entrypoints.mcp_tools import Caller, build_server
from factledger.infrastructure.config import Settings
from factledger.infrastructure.tenants import Tenants
from tests.processes import run_cli, run_cli_json
from tests.test_mcp import ok, refused
from tests.test_reliability import events_of


def test_an_id_sent_again_with_other_text_is_refused_and_records_nothing(service: LedgerService) -> None:
    first = service.ingest("u", "我住在杭州", message_id="m-1")
    assert first.status == "recorded"
    assert service.ingest("u", "我住在杭州", message_id="m-1").status == "duplicate"
    with pytest.raises(MessageIdReused, match="m-1") as refused:
        service.ingest("u", "我住在南京", message_id="m-1")
    assert refused.value.message_id == "m-1" and refused.value.user_id == "u"
    assert len(events_of(service, "u", "MessageIngested")) == 1
    assert [f.text for f in service.profile("u").facts] == ["用户住在杭州"]
    assert service.ingest("other", "我住在南京", message_id="m-1").status == "recorded"  # ids are per user


@pytest.mark.postgres
def test_ids_recorded_without_a_hash_stay_duplicates(
    service: LedgerService, open_service: Callable[..., LedgerService], pg_uri: str, schema: str
) -> None:
    service.ingest("u", "我住在杭州", message_id="old-1")
    with psycopg.connect(pg_uri, autocommit=True) as conn:  # a table from before the hash column
        conn.execute(SQL("ALTER TABLE {} DROP COLUMN text_hash").format(Identifier(schema, "factledger_message_ids")))
    reopened = open_service()
    assert reopened.ingest("u", "我住在南京", message_id="old-1").status == "duplicate"  # unknown: as before
    reopened.ingest("u", "我在银行工作", message_id="new-1")
    with pytest.raises(MessageIdReused):
        reopened.ingest("u", "我在学校工作", message_id="new-1")
    assert len(events_of(reopened, "u", "MessageIngested")) == 2


def test_http_answers_409_for_an_id_reused_with_other_text(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}", rate_limit=0)
    app = create_app(settings, mount_mcp=False)
    key = {"Authorization": f"Bearer {app.state.keys.create('acme', Scope.WRITE).token}"}
    with TestClient(app) as client:
        url = "/v1/users/u1/messages"
        assert client.post(url, json={"message": "我住在杭州", "message_id": "m-1"}, headers=key).status_code == 201
        again = client.post(url, json={"message": "我住在杭州", "message_id": "m-1"}, headers=key)
        assert again.status_code == 200 and again.json()["status"] == "duplicate"
        reused = client.post(url, json={"message": "我住在南京", "message_id": "m-1"}, headers=key)
        assert reused.status_code == 409, reused.text
        body = reused.json()
        assert body["type"].endswith(":message-id-reused") and body["field"] == "message_id", body
        profile = client.get("/v1/users/u1/profile", headers=key).json()
        assert [f["fact"] for facts in profile["facts"].values() for f in facts] == ["用户住在杭州"]


def test_mcp_remember_says_conflict_for_an_id_reused_with_other_text(tmp_path: Path) -> None:
    tenants = Tenants(Settings(home=tmp_path, backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}"))

    async def main() -> None:
        async with Client(build_server(tenants, lambda: Caller.operator("demo"))) as client:
            first = await ok(client, "remember", user_id="u1", message="我住在杭州", message_id="m-1")
            again = await ok(client, "remember", user_id="u1", message="我住在杭州", message_id="m-1")
            assert (first["status"], again["status"]) == ("recorded", "duplicate")
            said = await refused(client, "remember", user_id="u1", message="我住在南京", message_id="m-1")
            assert "conflict: message_id 'm-1'" in said and "another text" in said, said

    try:
        anyio.run(main)
    finally:
        tenants.close()


@pytest.mark.postgres
def test_the_cli_exits_2_naming_the_reused_id(cli_env: dict[str, str]) -> None:
    run_cli(cli_env, "ingest", "--user", "u", "--message-id", "m-1", "我住在杭州")
    again = run_cli_json(cli_env, "ingest", "--user", "u", "--message-id", "m-1", "我住在杭州")
    assert again["status"] == "duplicate"
    reused = run_cli(cli_env, "ingest", "--user", "u", "--message-id", "m-1", "我住在南京", expect=2)
    assert "message_id 'm-1'" in reused.stderr and "another text" in reused.stderr, reused.stderr


def test_a_batch_answers_each_reused_id_and_records_the_rest(service: LedgerService) -> None:
    service.ingest("u", "我住在杭州", message_id="m-1")
    outcomes = service.ingest_many(
        [
            Incoming("u", "我住在杭州", message_id="m-1"),  # a retry
            Incoming("u", "我住在南京", message_id="m-1"),  # another message under a taken id
            Incoming("u", "我在银行工作", message_id="m-2"),
        ]
    )
    assert isinstance(outcomes[0], IngestResult) and outcomes[0].status == "duplicate"
    assert isinstance(outcomes[1], MessageIdReused)
    assert isinstance(outcomes[2], IngestResult) and outcomes[2].status == "recorded"
    with pytest.raises(MessageIdReused):  # the batch kept the hash of what it recorded
        service.ingest("u", "我在学校工作", message_id="m-2")
