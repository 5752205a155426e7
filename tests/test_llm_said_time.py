"""The LLM is told when a message was said (issue 26, item 3): the seed prompts, verbatim, get a
system line beside them, the combined prompt says it in its text, the recorded prompt ids say so,
and a message said before others is told its own time. Over HTTP to the fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import attrs
import pytest
from fake_openai import FakeOpenAI, Reply

from factledger.application.ingestion import Incoming
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.llm import LLMExtractor, load_prompt_set
from factledger.infrastructure.llm.client import LLMClient
from factledger.infrastructure.llm.extractor import approximate_tokens
from factledger.infrastructure.llm.prompts import PromptError
from factledger.infrastructure.llm.said_time import said_label, said_line
from factledger.infrastructure.llm.usage import CallRecord

SHANGHAI = timezone(timedelta(hours=8))
MAY_8 = datetime(2023, 5, 8, 21, 30, tzinfo=SHANGHAI)  # a Monday, 13:30 UTC
JUNE_10 = datetime(2023, 6, 10, 9, 0, tzinfo=SHANGHAI)
DEAL = "上周我和一家户外装备公司谈成了合作"
FACT = {"fact": "用户在2023-05-01那周和一家户外装备公司谈成了合作", "category": "work", "confidence": 0.9}


def model(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "判断" in prompt:
        return "different"
    facts = [FACT] if DEAL in prompt else []  # what a model told the date writes
    if "提取事实信息和偏好" in prompt:
        return json.dumps({"facts": facts, "preferences": [], "retracted": []}, ensure_ascii=False)
    return json.dumps(facts if "提取事实信息" in prompt else [], ensure_ascii=False)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.chat_handler = model
        yield server


@pytest.fixture
def ledger(settings: Settings, fake: FakeOpenAI) -> Iterator[Any]:
    services: list[LedgerService] = []

    def opened(prompts: str) -> LedgerService:
        llm = {"openai_api_key": "test", "openai_base_url": fake.url + "/v1", "embedding_model": "offline"}
        llm |= {"llm_max_retries": 0, "llm_retry_backoff": 0.01}
        services.append(open_ledger(attrs.evolve(settings, prompts=prompts, **llm)))
        return services[-1]

    yield opened
    for service in services:
        service.close()


def systems(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "system"]


def extraction_calls(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [b for b in fake.chat_requests() if "判断" not in b["messages"][-1]["content"]]


def recorded_prompt_ids(service: LedgerService, user: str) -> list[str]:
    recorded = [e.to_dict() for e in service.history(user)]
    return [e["extraction"]["prompt_id"] for e in recorded if e["event"] == "ExtractionRecorded"]


def test_the_label_is_the_date_weekday_and_zone_as_recorded() -> None:
    assert said_label(MAY_8) == "2023-05-08 周一 UTC+08:00"
    assert said_label(MAY_8.astimezone(UTC)) == "2023-05-08 周一 UTC+00:00"
    assert said_label(datetime(2023, 5, 7, 22, 0, tzinfo=timezone(-timedelta(hours=5, minutes=30)))).endswith(
        "周日 UTC-05:30"
    )
    assert said_label(MAY_8, "en") == "2023-05-08 Monday UTC+08:00"
    assert said_label(None) == "不详"


def test_seed_a_backdated_message_is_told_its_own_time_beside_the_spec_prompt(ledger: Any, fake: FakeOpenAI) -> None:
    service = ledger("seed")
    seed = load_prompt_set("seed")
    service.ingest("u1", "我在杭州工作", timestamp=JUNE_10)
    service.ingest("u1", DEAL, timestamp=MAY_8)  # said before what the memory holds (ADR 0025)
    first, second = extraction_calls(fake)
    assert systems(first) == ["这句话说于2023-06-10 周六 UTC+08:00：相对时间（昨天、上周、下个月）写成具体日期。"]
    assert systems(second) == ["这句话说于2023-05-08 周一 UTC+08:00：相对时间（昨天、上周、下个月）写成具体日期。"]
    # the spec's prompt itself is what it always was
    assert second["messages"][-1]["content"] == seed.render("fact", user_message=DEAL)
    assert recorded_prompt_ids(service, "u1") == [f"{seed.id}+said", f"{seed.id}+said"]
    assert [f.text for f in service.profile("u1").facts] == [FACT["fact"]]


def test_seed_calls_record_their_template_ids_with_the_said_time(fake: FakeOpenAI) -> None:
    seed = load_prompt_set("seed")
    calls = Calls()
    llm = LLMExtractor(client(fake, usage=calls), "m", seed, signal_gating=False)
    said = llm.extract_said_at("上个月搬到杭州了，回复简短点", (), (), (), MAY_8)
    fact_call, preference_call = fake.chat_requests()
    assert systems(fact_call) and "2023-05-08 周一 UTC+08:00" in systems(fact_call)[0]
    assert systems(preference_call) == [], "how to reply needs no date: asked as it always was"
    assert said.prompt_id == f"{seed.id}+said"
    assert [r.prompt_id for r in calls.records] == [seed.template_id("fact") + "+said", seed.template_id("preference")]


def test_combined_says_the_time_in_its_text_and_asks_for_dates(ledger: Any, fake: FakeOpenAI) -> None:
    service = ledger("combined")
    combined = load_prompt_set("combined")
    assert "{said_at}" in combined.templates["combined"] and "按说话日期写成日期" in combined.templates["combined"]
    service.ingest("u1", "我在杭州工作", timestamp=JUNE_10)
    service.ingest("u1", DEAL, timestamp=MAY_8)
    first, second = extraction_calls(fake)
    assert '2023-06-10 周六 UTC+08:00，用户最新说："我在杭州工作"' in first["messages"][-1]["content"]
    assert f'2023-05-08 周一 UTC+08:00，用户最新说："{DEAL}"' in second["messages"][-1]["content"]
    assert systems(second) == [], "a Chinese message needs no line beside the combined prompt"
    assert recorded_prompt_ids(service, "u1") == [combined.id, combined.id]


def test_an_english_message_is_told_the_time_in_english_beside_the_language(fake: FakeOpenAI) -> None:
    seed = load_prompt_set("seed")
    said = LLMExtractor(client(fake), "m", seed).extract_said_at(
        "Last week I got a deal with an outdoor gear company.", (), (), (), MAY_8
    )
    [system] = systems(fake.chat_requests()[0])
    assert "in English" in system and "Said on 2023-05-08 Monday UTC+08:00" in system
    assert said.prompt_id == f"{seed.id}+lang=en+said"


def test_a_text_extracted_without_a_time_is_asked_as_before(fake: FakeOpenAI) -> None:
    seed = load_prompt_set("seed")
    said = LLMExtractor(client(fake), "m", seed).extract(DEAL)
    assert systems(fake.chat_requests()[0]) == [] and said.prompt_id == seed.id
    LLMExtractor(client(fake), "m", load_prompt_set("combined")).extract(DEAL)
    assert '不详，用户最新说："' in fake.chat_requests()[-1]["messages"][-1]["content"]


def test_a_retried_extraction_is_told_the_time_the_message_was_said(ledger: Any, fake: FakeOpenAI) -> None:
    service = ledger("seed")
    fake.script(Reply(status=500, body={"error": {"message": "down"}}))
    assert service.ingest("u1", DEAL, timestamp=MAY_8).status == "extraction_failed"
    fake.requests.clear()
    service.retry_failed("u1")
    [call] = extraction_calls(fake)
    assert "2023-05-08 周一 UTC+08:00" in systems(call)[0]


def test_a_prompt_file_may_show_the_said_time_in_a_fact_template(tmp_path: Path, fake: FakeOpenAI) -> None:
    seed_file = tmp_path / "seed.toml"
    source = (Path(__file__).parents[1] / "infrastructure/llm/prompts/seed.toml").read_text(encoding="utf-8")
    shown = source.replace('用户说："{user_message}"', '用户（{said_at}）说："{user_message}"', 1)
    seed_file.write_text(shown.replace('用户最新说："{user_message}"', '用户最新（{said_at}）说："{user_message}"'))
    own = load_prompt_set(str(seed_file))
    said = LLMExtractor(client(fake), "m", own).extract_said_at(DEAL, (), (), (), MAY_8)
    [call] = fake.chat_requests()
    assert systems(call) == [] and "用户（2023-05-08 周一 UTC+08:00）说：" in call["messages"][-1]["content"]
    assert said.prompt_id == own.id, "the file's own text names the said-time: nothing beside it"
    seed_file.write_text(shown)  # fact_with_context without it: that call gets the line beside it
    assert (
        LLMExtractor(client(fake), "m", load_prompt_set(str(seed_file)))
        .extract_said_at(DEAL, (), (), (), MAY_8)
        .prompt_id.endswith("+said")
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(source.replace("{user_message}", "{user_message} {said_at}"))
    with pytest.raises(PromptError, match=r"template 'preference' uses unknown placeholder\(s\) \{said_at\}"):
        load_prompt_set(str(bad))


class Calls:
    """A call log that keeps the records (the real one writes them to the database)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def record(self, call: CallRecord) -> None:
        self.records.append(call)


def client(fake: FakeOpenAI, usage: Any = None) -> LLMClient:
    return LLMClient(api_key="test", base_url=fake.url + "/v1", timeout=5.0, max_retries=1, backoff=0.01, usage=usage)


def test_a_bulk_import_tells_each_message_its_own_time(ledger: Any, fake: FakeOpenAI) -> None:
    service = ledger("combined")
    later = MAY_8 + timedelta(days=3)
    outcomes = service.ingest_many(
        [Incoming("u1", "我在杭州工作", timestamp=later), Incoming("u1", DEAL, timestamp=MAY_8)]
    )
    assert not [o for o in outcomes if isinstance(o, Exception)]
    prompts = [b["messages"][-1]["content"] for b in extraction_calls(fake)]
    assert [p.split("，用户最新说")[0].rsplit("\n", 1)[-1] for p in prompts] == [
        "2023-05-11 周四 UTC+08:00",
        "2023-05-08 周一 UTC+08:00",
    ]


def test_a_replay_re_decides_each_message_told_its_said_time(ledger: Any, fake: FakeOpenAI) -> None:
    service = ledger("combined")
    service.ingest("u1", DEAL, timestamp=MAY_8)
    fake.requests.clear()
    service.replay("told", "llm", prompts="seed")
    [call] = extraction_calls(fake)
    assert systems(call) == ["这句话说于2023-05-08 周一 UTC+08:00：相对时间（昨天、上周、下个月）写成具体日期。"]


def test_a_replay_estimate_counts_the_line_beside_the_prompt(fake: FakeOpenAI) -> None:
    llm = LLMExtractor(client(fake), "m", load_prompt_set("seed"))
    calls, tokens = llm.estimate_cost(DEAL)
    told_calls, told_tokens = llm.estimate_cost(DEAL, (), MAY_8)
    assert calls == told_calls == 1 and told_tokens - tokens == approximate_tokens(said_line(MAY_8, "zh"))
    assert fake.chat_requests() == []  # an estimate asks nothing
