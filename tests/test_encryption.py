"""Event payloads encrypted at rest (issue 11, item 5)."""

from __future__ import annotations

from pathlib import Path

import attrs
import psycopg
import pytest
from psycopg.sql import SQL, Identifier

from factledger.application.errors import ConfigError
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.encryption import new_key

pytestmark = pytest.mark.pg_only

SECRET_TEXT = "我住在杭州西湖区，我喜欢喝龙井茶。"


@pytest.fixture
def encrypted(pg_uri: str, schema: str, tmp_path: Path) -> Settings:
    return Settings(
        home=tmp_path / "home", database_url=pg_uri, schema=schema, encryption_key=new_key(), snapshot_interval=2
    )


def raw_payloads(pg_uri: str, schema: str) -> list[bytes]:
    with psycopg.connect(pg_uri) as conn:
        rows = []
        for table in ("factledger_events", "factledger_snapshots"):
            rows += conn.execute(SQL("SELECT state FROM {}").format(Identifier(schema, table))).fetchall()
    return [bytes(row[0]) for row in rows]


def test_the_event_tables_hold_no_plaintext(encrypted: Settings, pg_uri: str) -> None:
    with open_ledger(encrypted) as service:
        for n in range(3):
            service.ingest("enc", SECRET_TEXT + f"第{n}次。")
        assert service.profile("enc").known
    payloads = raw_payloads(pg_uri, encrypted.schema)
    assert len(payloads) > 5
    for needle in ("杭州", "龙井", "enc", "MessageIngested"):
        assert not any(needle.encode() in p for p in payloads), needle


def test_the_right_key_reads_everything_back_and_forgets(encrypted: Settings) -> None:
    with open_ledger(encrypted) as service:
        service.ingest("enc", SECRET_TEXT)
        before = service.profile("enc").to_dict()
    with open_ledger(encrypted) as service:
        assert service.profile("enc").to_dict() == before
        assert service.rebuild_read_model() > 0
        assert service.forget("enc").counts["events"] > 0
        assert not service.profile("enc").known


def test_a_missing_or_wrong_key_is_a_clear_error_never_garbage(encrypted: Settings) -> None:
    with open_ledger(encrypted) as service:
        service.ingest("enc", SECRET_TEXT)
    with pytest.raises(ConfigError, match=r"encrypted.*FACTLEDGER_ENCRYPTION_KEY"):
        open_ledger(attrs.evolve(encrypted, encryption_key=None))
    with pytest.raises(ConfigError, match="FACTLEDGER_ENCRYPTION_KEY is not the key"):
        open_ledger(attrs.evolve(encrypted, encryption_key=new_key()))


def test_encryption_is_refused_on_a_database_with_plaintext_events(encrypted: Settings) -> None:
    plain = attrs.evolve(encrypted, encryption_key=None)
    with open_ledger(plain) as service:
        service.ingest("plain", SECRET_TEXT)
    with pytest.raises(ConfigError, match="written unencrypted"):
        open_ledger(encrypted)


@pytest.mark.parametrize("bad", ["not base64!", "YWJj", "a" * 7])
def test_a_malformed_key_names_the_setting(tmp_path: Path, bad: str) -> None:
    with pytest.raises(ConfigError, match="FACTLEDGER_ENCRYPTION_KEY"):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_ENCRYPTION_KEY": bad})
