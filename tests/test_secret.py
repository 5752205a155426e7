"""The installation secret and keyed hashes (issue 11, item 3)."""

from __future__ import annotations

import hashlib
import stat
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from psycopg.sql import SQL, Identifier

from factledger.application.errors import ConfigError
from factledger.application.service import LedgerService
from factledger.infrastructure.config import Settings
from factledger.infrastructure.embedding_cache import HASH_PURPOSE
from factledger.infrastructure.secret import load_secret


def test_the_secret_is_created_once_readable_only_by_its_owner(tmp_path: Path) -> None:
    path = tmp_path / "home" / "secret.key"
    first = load_secret(None, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_secret(None, path) == first
    assert first.digest("p", "13800138000") != hashlib.sha256(b"13800138000").digest()
    assert first.digest("a", "x") != first.digest("b", "x")  # purposes are kept apart


@pytest.mark.slow
def test_processes_starting_together_agree_on_one_secret(tmp_path: Path) -> None:
    path = tmp_path / "shared" / "secret.key"
    code = (
        "import sys; from pathlib import Path; from factledger.infrastructure.secret import load_secret; "
        "print(load_secret(None, Path(sys.argv[1])).hexdigest('t', 'x'))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, text=True) for _ in range(6)
    ]
    digests = {proc.communicate(timeout=60)[0].strip() for proc in procs}
    assert len(digests) == 1 and all(proc.returncode == 0 for proc in procs)
    assert not [p for p in path.parent.iterdir() if p.name != "secret.key"]  # no temporary files left


def test_a_secret_from_the_environment_wins_and_must_be_long_enough(tmp_path: Path) -> None:
    one = Settings.load({"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_SECRET": "s" * 32}).installation_secret()
    two = Settings.load({"FACTLEDGER_HOME": str(tmp_path / "b"), "FACTLEDGER_SECRET": "s" * 32}).installation_secret()
    assert one == two and not (tmp_path / "secret.key").exists()
    with pytest.raises(ConfigError, match="FACTLEDGER_SECRET"):
        Settings.load({"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_SECRET": "short"}).installation_secret()


@pytest.mark.parametrize("content", ["not hex at all", "abcd", ""])
def test_a_damaged_secret_file_is_an_error_naming_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "secret.key"
    path.write_text(content)
    with pytest.raises(ConfigError, match=r"secret\.key"):
        load_secret(None, path)


def test_an_unwritable_place_for_the_secret_is_an_error_naming_the_settings(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="FACTLEDGER_SECRET_FILE"):
        load_secret(None, blocker / "secret.key")


@pytest.mark.postgres
def test_the_embedding_cache_holds_keyed_hashes_only(service: LedgerService, settings: Settings, pg_uri: str) -> None:
    # Short personal data (a phone number is redacted before recording: a postcode is not).
    text = "用户家的邮编是310012"
    service.restate("k", text)
    secret = settings.installation_secret()
    with psycopg.connect(pg_uri) as conn:
        hashes = {
            bytes(row[0])
            for row in conn.execute(
                SQL("SELECT text_hash FROM {}").format(Identifier(settings.schema, "embedding_cache_v2"))
            )
        }
    assert secret.digest(HASH_PURPOSE, text) in hashes
    assert hashlib.sha256(text.encode()).digest() not in hashes
