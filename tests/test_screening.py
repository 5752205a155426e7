"""Secrets are screened out before anything is recorded or prompted (issue 11, item 4), end to end.

``test_sensitive.py`` holds the detection table; here: what the ledger does with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import attrs
import pytest
from fake_openai import FakeOpenAI

from factledger.application.errors import ConfigError, InvalidInput
from factledger.application.service import LedgerService
from factledger.domain.memory import UserMemory
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

PHONE = "13812345678"
EMAIL = "zhang.san@example.com"
PASSWORD = "Tr0ub4dor&3x"
MESSAGE = f"我的手机号是{PHONE}，邮箱是{EMAIL}，我住在杭州。"
CONTEXT = [{"role": "user", "content": f"my password: {PASSWORD}"}]


def recorded_texts(service: LedgerService, user_id: str) -> str:
    return repr([e.__dict__ for e in service.ledger.user_events(user_id)])


def test_secrets_become_placeholders_in_every_event_and_the_result(service: LedgerService) -> None:
    result = service.ingest("s", MESSAGE, context=CONTEXT)
    assert result.redacted == {"email": 1, "password": 1, "phone": 1}
    assert result.to_dict()["redacted"] == result.redacted
    everything = recorded_texts(service, "s")
    for secret in (PHONE, EMAIL, PASSWORD):
        assert secret not in everything
    [message] = [e for e in service.ledger.user_events("s") if isinstance(e, UserMemory.MessageIngested)]
    assert message.text == "我的手机号是[手机号]，邮箱是[邮箱]，我住在杭州。"
    assert message.context == [{"role": "user", "content": "my password: [密码]"}]
    assert message.redacted == {"email": 1, "password": 1, "phone": 1}
    assert all(PHONE not in row["content"] for row in service.read_model.all_rows())


def test_a_refused_kind_records_nothing(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(sensitive="redact,password=refuse")
    with pytest.raises(InvalidInput, match="password"):
        service.ingest("r", "我住在杭州", context=CONTEXT)
    assert service.history("r").total == 0
    assert service.ingest("r", MESSAGE).redacted == {"email": 1, "phone": 1}  # the others still redacted


def test_keep_leaves_the_text_as_it_was(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(sensitive="keep")
    assert service.ingest("k", MESSAGE).redacted == {}
    assert PHONE in recorded_texts(service, "k")


def test_an_operators_words_are_screened_too(service: LedgerService) -> None:
    service.ingest("o", "我住在杭州。")
    service.restate("o", f"用户的手机号是{PHONE}")
    fact_id = next(iter(service.ledger.find_memory("o").facts))  # type: ignore[union-attr]
    service.invalidate("o", fact_id, reason=f"she said her mail is {EMAIL}")
    everything = recorded_texts(service, "o")
    assert PHONE not in everything and EMAIL not in everything and "[手机号]" in everything


@pytest.mark.parametrize(
    ("value", "problem"),
    [("redact,fax=keep", "'fax' is not a kind"), ("forget", "'forget' is not a policy"), ("phone=", "policy")],
)
def test_a_bad_policy_names_the_setting_and_the_problem(tmp_path: Path, value: str, problem: str) -> None:
    with pytest.raises(ConfigError, match="FACTLEDGER_SENSITIVE") as caught:
        Settings.load({"FACTLEDGER_HOME": str(tmp_path), "FACTLEDGER_SENSITIVE": value})
    assert problem in str(caught.value)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.mark.pg_only
def test_no_secret_reaches_a_prompt_and_usage_counts_them(settings: Settings, fake: FakeOpenAI) -> None:
    llm = attrs.evolve(
        settings, openai_api_key="test", openai_base_url=fake.url + "/v1", embedding_dimension=64, llm_max_retries=0
    )
    with open_ledger(llm) as service:
        service.ingest("p", MESSAGE, context=CONTEXT)
        assert fake.chat_requests(), "the message was gated out: nothing was tested"
        sent = repr(fake.requests)
        for secret in (PHONE, EMAIL, PASSWORD):
            assert secret not in sent
        assert "[手机号]" in sent
        assert service.usage("p")["redacted"] == {"email": 1, "password": 1, "phone": 1}
        assert service.usage()["redacted"] == {"email": 1, "password": 1, "phone": 1}
