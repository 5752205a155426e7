"""Memories in the user's language (ADR 0029): the request asks for it beside the verbatim prompt,
the prompt id records it, and what the model writes is what is stored. Over HTTP to the fake server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from fake_openai import FakeOpenAI

from factledger.application.errors import InvalidInput
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import ConfigError, Settings
from factledger.infrastructure.llm import LLMExtractor, LLMJudge, load_prompt_set
from factledger.infrastructure.llm.client import LLMClient
from factledger.infrastructure.llm.language import main_language
from factledger.infrastructure.offline import RuleExtractor

CHICAGO = {"en": "The user lives in Chicago", "zh": "用户住在芝加哥"}


def obedient_model(body: dict[str, Any]) -> str:
    """A model that writes its facts in the language a system message asks for, else in the prompt's (Chinese)."""
    system = " ".join(m["content"] for m in body["messages"] if m["role"] == "system")
    prompt = body["messages"][-1]["content"]
    if "判断" in prompt:
        return "different"
    fact = {"fact": CHICAGO["en" if "in English" in system else "zh"], "category": "location", "confidence": 0.9}
    if "提取事实信息和偏好" in prompt:
        return json.dumps({"facts": [fact], "preferences": []}, ensure_ascii=False)
    return json.dumps([fact] if "提取事实信息" in prompt else [], ensure_ascii=False)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        server.chat_handler = obedient_model
        yield server


def client(fake: FakeOpenAI) -> LLMClient:
    return LLMClient(api_key="test", base_url=fake.url + "/v1", timeout=5.0, max_retries=1, backoff=0.01)


def systems(fake: FakeOpenAI) -> list[str]:
    return [m["content"] for body in fake.chat_requests() for m in body["messages"] if m["role"] == "system"]


@pytest.mark.parametrize("prompts", ["seed", "combined"])
def test_an_english_message_asks_for_english_and_gets_english_memories(fake: FakeOpenAI, prompts: str) -> None:
    prompt_set = load_prompt_set(prompts)
    said = LLMExtractor(client(fake), "m", prompt_set).extract("I live in Chicago.")
    assert [f.text for f in said.facts] == ["The user lives in Chicago"]
    assert systems(fake) and all("in English" in s for s in systems(fake))
    assert said.prompt_id == f"{prompt_set.id}+lang=en"
    # the verbatim prompt is still the user message, unchanged
    template = prompt_set.templates[prompts_key(prompts)]
    assert fake.chat_requests()[0]["messages"][-1]["content"].startswith(template[:10])


def prompts_key(prompts: str) -> str:
    return "combined" if prompts == "combined" else "fact"


@pytest.mark.parametrize("prompts", ["seed", "combined"])
def test_a_chinese_message_is_asked_as_it_always_was(fake: FakeOpenAI, prompts: str) -> None:
    prompt_set = load_prompt_set(prompts)
    said = LLMExtractor(client(fake), "m", prompt_set).extract("我住在芝加哥，在一家律所上班")
    assert [f.text for f in said.facts] == ["用户住在芝加哥"]
    assert systems(fake) == []
    assert said.prompt_id == prompt_set.id


def test_a_mixed_message_follows_its_main_language() -> None:
    assert main_language("我喜欢用VS Code写Python") == "zh"
    assert main_language("call me 小王 from now on please") == "en"
    assert main_language("btw 我上个月搬到Denver了") == "zh"


def test_a_setting_fixes_one_language_for_the_installation(fake: FakeOpenAI) -> None:
    llm = LLMExtractor(client(fake), "m", load_prompt_set("seed"), language="zh")
    said = llm.extract("I live in Chicago.")
    assert [f.text for f in said.facts] == ["用户住在芝加哥"]
    assert said.prompt_id.endswith("+lang=zh") and "中文" in systems(fake)[0]


def test_the_setting_is_checked() -> None:
    assert Settings.load({"FACTLEDGER_MEMORY_LANGUAGE": "EN"}).memory_language == "en"
    with pytest.raises(ConfigError, match="FACTLEDGER_MEMORY_LANGUAGE must be one of auto, zh, en"):
        Settings.load({"FACTLEDGER_MEMORY_LANGUAGE": "fr"})


def test_the_relation_check_of_english_facts_says_they_are_english(fake: FakeOpenAI) -> None:
    prompts = load_prompt_set("seed")
    verdict = LLMJudge(client(fake), "m", prompts).judge("The user lives in Boston", "The user lives in Denver")
    assert verdict.prompt_id == prompts.template_id("conflict_check") + "+lang=en"
    assert "in English" in systems(fake)[0]


def test_english_in_english_memory_stored_through_the_service(settings: Settings, fake: FakeOpenAI) -> None:
    llm = attrs.evolve(settings, openai_api_key="test", openai_base_url=fake.url + "/v1", embedding_model="offline")
    service = open_ledger(llm)
    try:
        result = service.ingest("u1", "I live in Chicago.", message_id="m1")
        assert result.facts == ("The user lives in Chicago",)
        assert [f.text for f in service.profile("u1").facts] == ["The user lives in Chicago"]
    finally:
        service.close()


def test_offline_english_in_english_memory() -> None:
    said = RuleExtractor().extract("I live in Chicago.")
    assert said.facts and all(main_language(f.text) == "en" for f in said.facts)


def test_a_combined_verdict_on_english_facts_records_the_language(settings: Settings, fake: FakeOpenAI) -> None:
    def model(body: dict[str, Any]) -> str:
        boston = "Boston" in body["messages"][-1]["content"].split("已知事实")[0]
        named = [] if boston else ["The user lives in Boston"]
        text = "The user lives in Boston" if boston else "The user lives in Denver"
        facts = [{"fact": text, "category": "location", "confidence": 0.9, "conflicts_with": named}]
        return json.dumps({"facts": facts, "preferences": []})

    fake.chat_handler = model
    changes: dict[str, Any] = {"openai_api_key": "test", "openai_base_url": fake.url + "/v1"}
    service = open_ledger(attrs.evolve(settings, embedding_model="offline", prompts="combined", **changes))
    try:
        service.ingest("u1", "I live in Boston.")
        service.ingest("u1", "I just moved to Denver.")
        [ended] = [e.to_dict() for e in service.history("u1") if e.to_dict()["event"] == "FactInvalidated"]
        assert ended["judge_prompt_id"] == load_prompt_set("combined").template_id("combined") + "+lang=en"
    finally:
        service.close()


def test_memory_context_headings_follow_the_language_of_the_memories(settings: Settings) -> None:
    service = open_ledger(settings, warn_if_offline=False)
    try:
        service.ingest("en", "I live in Chicago and I work as a nurse.")
        service.ingest("zh", "我住在芝加哥，在一家医院当护士")
        english = service.memory_context("en", "Where do I live?").text
        assert english.startswith("What is known about the user:") and "已知" not in english
        assert service.memory_context("zh", "我住在哪").text.startswith("已知的用户信息：")
        # Chinese memories asked about in English: the block is in the memories' language
        assert service.memory_context("zh", "where?").text.startswith("已知的用户信息：")
        # a language asked for is the one given
        assert service.memory_context("en", "Where do I live?", language="zh").text.startswith("已知的用户信息：")
        with pytest.raises(InvalidInput, match="language must be 'auto', 'zh' or 'en', got 'fr'"):
            service.memory_context("en", "x", language="fr")
    finally:
        service.close()
