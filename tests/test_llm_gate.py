"""The LLM path's gate (ADR 0028): every message that may state or change a fact reaches the model,
plain small talk makes no call. Over HTTP to the fake OpenAI server; no database."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI

from factledger.infrastructure.llm import LLMExtractor, load_prompt_set
from factledger.infrastructure.llm.client import LLMClient
from factledger.infrastructure.llm.gate import LLMGate, is_chit_chat, known_terms, stateable_marks

DEV = json.loads((Path(__file__).parent / "fixtures/knowledge_update_messages_dev.json").read_text("utf-8"))
SMALL_TALK = ["谢谢", "好的", "哈哈", "ok", "👍", "😂😂", "thanks!", "嗯嗯", "好的呀～"]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def extractor(fake: FakeOpenAI, prompts: str) -> LLMExtractor:
    client = LLMClient(api_key="test", base_url=fake.url + "/v1", timeout=5.0, max_retries=1, backoff=0.01)
    return LLMExtractor(client, "gpt-4o-mini", load_prompt_set(prompts))


def chat_calls(fake: FakeOpenAI) -> int:
    return sum(1 for r in fake.requests if r["path"].endswith("/chat/completions"))


@pytest.mark.parametrize(
    "every", [pytest.param(4, id="every-4th"), pytest.param(1, id="all", marks=pytest.mark.slow)]
)  # the unit tier reads a quarter of the dev set, the integration tier all of it
@pytest.mark.parametrize("prompts", ["seed", "combined"])
def test_every_dev_message_that_carries_a_fact_or_its_change_reaches_the_llm(
    fake: FakeOpenAI, prompts: str, every: int
) -> None:
    llm = extractor(fake, prompts)
    kept = []
    for message in DEV["carrying"][::every]:
        before = chat_calls(fake)
        llm.extract(message)
        if chat_calls(fake) == before:
            kept.append(message)
    assert kept == []


@pytest.mark.parametrize("prompts", ["seed", "combined"])
@pytest.mark.parametrize("message", SMALL_TALK)
def test_small_talk_makes_no_call(fake: FakeOpenAI, prompts: str, message: str) -> None:
    extractor(fake, prompts).extract(message, known_facts=["用户在杭州工作"])
    assert chat_calls(fake) == 0


def test_the_dev_sets_chit_chat_and_bare_requests_make_no_call(fake: FakeOpenAI) -> None:
    llm = extractor(fake, "combined")
    plain = ["今天好冷啊", "好累", "ugh, Mondays", "hi again!", "can you suggest a party theme?", "帮我起个英文名吧"]
    for message in plain:
        llm.extract(message)
    assert chat_calls(fake) == 0


@pytest.mark.parametrize(
    ("message", "known", "mark"),
    [
        ("那边的房租贵吗？", ["用户住在西安"], None),  # asks, carries nothing
        ("西安那边的房租贵吗？", ["用户住在西安"], "known_fact"),  # asks about what the user is known to hold
        ("is Denver nice in winter?", ["The user lives in Denver"], "known_fact"),
        ("can you help with her homework? she's in third grade", [], "someone"),
        ("帮我算算，我们家3口人一个月吃多少米", [], "number"),
        ("what should I say now that I quit?", [], "change"),
    ],
)
def test_a_question_passes_only_with_something_stateable(message: str, known: list[str], mark: str | None) -> None:
    signals = LLMGate().detect(message, known)
    if mark is None:
        assert not signals["has_fact_signal"] and not signals["has_pref_signal"]
    else:
        assert signals["has_fact_signal"]
        assert mark in stateable_marks(message, known_terms(known))


@pytest.mark.parametrize(
    ("text", "chit_chat"),
    [
        ("今天天气不错", True),
        ("最近好忙啊😩", True),
        ("so tired today lol", True),
        ("今天又加班", False),  # 加班 is the user's work
        ("today is my 30th birthday", False),
        ("finally 70kg", False),
        ("she's in second grade now", False),
    ],
)
def test_chit_chat_is_only_closed_class_words(text: str, chit_chat: bool) -> None:
    assert is_chit_chat(text) is chit_chat


def test_a_reply_preference_alone_costs_the_seed_set_one_call(fake: FakeOpenAI) -> None:
    extractor(fake, "seed").extract("周末别给我发消息")
    assert chat_calls(fake) == 1


def test_a_message_the_offline_detector_reads_nothing_in_gets_both_seed_calls(fake: FakeOpenAI) -> None:
    from factledger.infrastructure.offline import SignalDetector

    detector = SignalDetector()
    unread = [
        m for m in DEV["carrying"] if not any(detector.detect(m)[k] for k in ("has_fact_signal", "has_pref_signal"))
    ]
    assert unread, "the dev set has changes the offline detector misses"
    llm = extractor(fake, "seed")
    for message in unread:
        llm.extract(message)
    asked = [FakeOpenAI.prompt(body) for body in fake.chat_requests()]
    assert sum("识别偏好" in p for p in asked) == len(unread)  # the preference prompt
    assert len(asked) == 2 * len(unread)
