"""The LLM parts through the whole service, against a fake OpenAI-compatible server over HTTP."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from fake_openai import EXAMPLE, FakeOpenAI, Reply
from processes import wait_until

from factledger.application.ingestion import Incoming
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings
from factledger.infrastructure.llm import LLMAuthError, UsageLog, llm_parts, load_prompt_set

# The LLM parts through the whole service, with the call log and response cache in PostgreSQL.
pytestmark = pytest.mark.pg_only

SPEC_CONTEXT = [{"role": "assistant", "content": "你好，有什么可以帮你的？"}]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm_settings(settings: Settings, fake: FakeOpenAI) -> Settings:
    return attrs.evolve(
        settings,
        openai_api_key="test",
        openai_base_url=fake.url + "/v1",
        embedding_dimension=64,
        llm_timeout=5.0,
        llm_max_retries=2,
        llm_retry_backoff=0.01,
        prompts="seed",  # the spec's prompts: the tests below count its calls
    )


@pytest.fixture
def opener(llm_settings: Settings) -> Iterator[Callable[..., LedgerService]]:
    opened: list[LedgerService] = []

    def factory(**changes: Any) -> LedgerService:
        service = open_ledger(attrs.evolve(llm_settings, **changes))
        opened.append(service)
        return service

    yield factory
    for service in opened:
        service.close()


def usage_of(service: LedgerService, message_id: str) -> dict[str, Any]:
    report = UsageLog(service.ledger.factory.datastore).report()
    return next(m for m in report["messages"] if m["message_id"] == message_id)


def events(service: LedgerService, user: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in [e.to_dict() for e in service.history(user)] if e["event"] == kind]


def assert_spec_result(result: Any) -> None:
    assert result.facts == ("用户在杭州工作", "用户的老板姓张")
    assert result.preferences == ("偏好简短的回复风格",)
    categories = {i.text: i.category for i in result.items}
    assert categories == {
        "用户在杭州工作": "location",
        "用户的老板姓张": "relationship",
        "偏好简短的回复风格": "communication_style",
    }


def test_the_spec_example_through_the_seed_prompts(opener: Callable[..., LedgerService], fake: FakeOpenAI) -> None:
    service = opener()
    assert service.extractor.extractor_id == "openai:gpt-4o-mini/seed"
    result = service.ingest("user_123", EXAMPLE, session_id="session_456", context=SPEC_CONTEXT)
    assert_spec_result(result)
    prompts = [FakeOpenAI.prompt(b) for b in fake.chat_requests()]
    # with context: FACT_PROMPT_WITH_CONTEXT, then PREF_PROMPT; no relation check (nothing similar)
    assert len(prompts) == 2
    assert (
        "当前对话：\nassistant: 你好，有什么可以帮你的？" in prompts[0] and "已知事实（避免重复）：\n无" in prompts[0]
    )
    assert "从用户的话或行为中识别偏好" in prompts[1] and "上下文：assistant: 你好" in prompts[1]
    assert all(b["model"] == "gpt-4o-mini" and b["temperature"] == 0 for b in fake.chat_requests())

    seed_id = load_prompt_set("seed").id + "+said"  # told when the message was said, beside the spec's prompts
    [recorded] = events(service, "user_123", "ExtractionRecorded")
    assert recorded["extraction"]["prompt_id"] == seed_id
    assert list(json.loads(recorded["extraction"]["raw_output"])) == ["fact_with_context", "preference"]
    observed = events(service, "user_123", "FactObserved") + events(service, "user_123", "PreferenceObserved")
    assert len(observed) == 3 and {e["prompt_id"] for e in observed} == {seed_id}
    usage = usage_of(service, result.message_id)
    assert usage["calls"] == 2 and usage["cache_hits"] == 0 and usage["input_tokens"] > 0
    profile = service.profile("user_123").to_dict()
    assert [f["fact"] for f in profile["facts"]["location"]] == ["用户在杭州工作"]


def test_the_spec_example_through_the_combined_prompt_in_one_call(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    service = opener(prompts="combined")
    result = service.ingest("user_123", EXAMPLE)
    assert_spec_result(result)
    [request] = fake.chat_requests()
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["strict"] is True
    [recorded] = events(service, "user_123", "ExtractionRecorded")
    assert recorded["extraction"]["prompt_id"] == load_prompt_set("combined").id
    assert usage_of(service, result.message_id)["calls"] == 1


def test_combined_falls_back_to_json_object_where_structured_output_is_refused(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.reject_formats = {"json_schema"}
    service = opener(prompts="combined")
    assert_spec_result(service.ingest("u", EXAMPLE))
    assert [b.get("response_format", {}).get("type") for b in fake.chat_requests()] == ["json_schema", "json_object"]
    service.ingest("u2", "我住在上海")  # the endpoint's limit is remembered: no second refusal
    assert fake.chat_requests()[-1]["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("text", ["谢谢", "好的"])
def test_small_talk_costs_no_call(opener: Callable[..., LedgerService], fake: FakeOpenAI, text: str) -> None:
    service = opener()
    result = service.ingest("u", text)
    assert result.status == "recorded" and result.facts == () and result.preferences == ()
    assert fake.requests == []
    usage = usage_of(service, result.message_id)
    assert (usage["calls"], usage["embedding_calls"], usage["gated"]) == (0, 0, 1)


def test_gating_can_be_switched_off(opener: Callable[..., LedgerService], fake: FakeOpenAI) -> None:
    opener(signal_gating=False).ingest("u", "谢谢")
    assert len(fake.chat_requests()) == 2  # the spec's two extraction calls, signal or not


def test_a_429_is_retried(opener: Callable[..., LedgerService], fake: FakeOpenAI) -> None:
    fake.script(Reply(status=429, headers={"retry-after": "0"}))
    service = opener(prompts="combined")
    result = service.ingest("u", EXAMPLE)
    assert_spec_result(result)
    assert len(fake.chat_requests()) == 2
    assert usage_of(service, result.message_id)["calls"] == 1  # one logical call, two attempts


def test_a_timeout_is_recorded_as_a_failure_and_retried_later(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.script(Reply("[]", delay=1.5))
    service = opener(prompts="combined", llm_timeout=0.3, llm_max_retries=0)
    result = service.ingest("u", EXAMPLE)
    assert result.status == "extraction_failed"
    [failed] = events(service, "u", "ExtractionFailed")
    assert failed["prompt_id"] == load_prompt_set("combined").id
    assert "Timeout" in failed["error"]
    [retried] = service.retry_failed()
    assert retried.status == "recorded"
    assert_spec_result(retried)


def test_a_wrong_key_names_the_setting(opener: Callable[..., LedgerService], fake: FakeOpenAI) -> None:
    fake.script(Reply(status=401, body={"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}))
    service = opener()
    with pytest.raises(LLMAuthError, match="OPENAI_API_KEY"):
        service.ingest("u", EXAMPLE)
    assert [e.to_dict() for e in service.history("u")] == []  # nothing half-recorded
    assert len(fake.chat_requests()) == 1  # a 401 is not retried


def test_a_second_run_over_the_same_history_is_answered_by_the_cache(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    service = opener()
    service.ingest("first", EXAMPLE)
    sent = len(fake.requests)
    again = service.ingest("second", EXAMPLE)  # the same rendered prompts: nothing is sent
    assert_spec_result(again)
    assert len(fake.requests) == sent
    usage = usage_of(service, again.message_id)
    assert (usage["calls"], usage["cache_hits"], usage["input_tokens"]) == (0, 2, 0)
    [recorded] = events(service, "second", "ExtractionRecorded")
    assert "usage" not in recorded["extraction"], "tokens and cache hits live in llm_calls, not in events"
    # switched off, the same message is asked again
    opener(response_cache=False).ingest("third", EXAMPLE)
    assert len(fake.chat_requests()) == 4


def test_the_judge_decides_with_the_conflict_prompt_and_its_id_is_recorded(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我住在杭州"] = ([{"fact": "用户住在杭州", "category": "location", "confidence": 0.9}], [])
    fake.relation = "Duplicate."  # extra words and another case
    service = opener(fact_similarity=0.5)
    service.ingest("u", "我住在杭州")
    result = service.ingest("u", "我住在杭州")
    assert [i.action for i in result.items] == ["confirmed"]
    [confirmed] = events(service, "u", "FactConfirmed")
    assert confirmed["judge_prompt_id"] == load_prompt_set("seed").template_id("conflict_check")
    assert confirmed["raw_answer"] == "Duplicate."
    assert "旧事实：用户住在杭州\n新事实：用户住在杭州" in FakeOpenAI.prompt(fake.chat_requests()[-1])


def test_garbage_fails_the_extraction_after_a_retry(opener: Callable[..., LedgerService], fake: FakeOpenAI) -> None:
    fake.script("I'm sorry, I can't help with that.", "Still no JSON, sorry.")
    service = opener(prompts="combined")
    result = service.ingest("u", EXAMPLE)
    assert result.status == "extraction_failed"
    [failed] = events(service, "u", "ExtractionFailed")
    assert "Still no JSON" in failed["raw_output"]
    assert len(fake.chat_requests()) == 2


def test_a_prompt_file_of_ones_own_is_used_and_named(
    opener: Callable[..., LedgerService], fake: FakeOpenAI, tmp_path: Any
) -> None:
    from importlib import resources

    seed = resources.files("factledger.infrastructure.llm").joinpath("prompts/seed.toml").read_text(encoding="utf-8")
    mine = tmp_path / "mine.toml"
    mine.write_text(seed.replace('name = "seed"', 'name = "mine"').replace("不要推测", "绝不推测"), encoding="utf-8")
    service = opener(prompts=str(mine))
    assert service.extractor.extractor_id == "openai:gpt-4o-mini/mine"
    assert_spec_result(service.ingest("u", EXAMPLE))
    [recorded] = events(service, "u", "ExtractionRecorded")
    assert recorded["extraction"]["prompt_id"] == load_prompt_set(str(mine)).id + "+said"
    assert recorded["extraction"]["prompt_id"].startswith("mine@")
    assert "绝不推测" in FakeOpenAI.prompt(fake.chat_requests()[0])


def test_embeddings_can_come_from_elsewhere_or_stay_offline(
    opener: Callable[..., LedgerService], fake: FakeOpenAI, llm_settings: Settings
) -> None:
    with FakeOpenAI() as embeddings:
        service = opener(embedding_base_url=embeddings.url + "/v1", embedding_model="bge-m3", embedding_dimension=None)
        assert service.embedder.embedder_id == "openai:bge-m3@64"  # measured with one probe
        service.ingest("u", EXAMPLE)
        assert fake.embedding_requests() == [] and len(embeddings.embedding_requests()) >= 2
    # DeepSeek has no embeddings endpoint: the offline embedder stands in
    settings = attrs.evolve(llm_settings, embedding_model="offline")
    _, _, embedder = llm_parts(settings, service.ledger.factory.datastore)
    assert embedder.embedder_id.startswith("offline")


def test_an_outage_records_messages_pending_and_retry_failed_extracts_each_once(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    service = opener(prompts="combined")
    assert service.ingest("v", EXAMPLE, message_id="v1").status == "recorded"
    fake.down = {"chat": 500}
    pending = [service.ingest("u", f"我住在杭州，第{n}次说", message_id=f"m{n}") for n in range(5)]
    assert [r.status for r in pending] == ["extraction_failed"] * 5
    # After three calls in a row found it down (3 attempts each), the client stops calling for a while.
    assert len(fake.chat_requests()) == 1 + 3 * 3
    # Chat is back, embeddings are not: the extraction is fine but deciding on it needs vectors.
    fake.down = {"embeddings": 429}
    fake.answers["我搬到上海了"] = ([{"fact": "用户住在上海", "category": "location", "confidence": 0.9}], [])
    second = opener(prompts="combined")  # another process: its client has seen no failure
    assert second.ingest("v", "我搬到上海了", message_id="v2").status == "extraction_failed"
    fake.down = {}
    assert [e["message_id"] for e in events(second, "u", "ExtractionRecorded")] == []
    retrying = opener(prompts="combined")
    results = retrying.retry_failed()
    assert sorted(r.message_id for r in results if r.status == "recorded") == sorted(
        [f"m{n}" for n in range(5)] + ["v2"]
    )
    assert retrying.retry_failed() == [], "nothing is extracted twice"
    for user, expected in (("u", {f"m{n}": 1 for n in range(5)}), ("v", {"v1": 1, "v2": 1})):
        assert Counter(e["message_id"] for e in events(retrying, user, "ExtractionRecorded")) == Counter(expected)
    assert "用户住在上海" in [f["fact"] for f in retrying.profile("v").to_dict()["facts"]["location"]]


def test_a_conflicts_with_answer_invalidates_the_named_fact_even_when_dissimilar(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我是护士"] = ([{"fact": "用户是护士", "category": "work", "confidence": 0.9}], [])
    fake.answers["刚才说错了，我在医院药房配药"] = (
        [{"fact": "用户在医院药房配药", "category": "other", "confidence": 0.9, "conflicts_with": "用户是护士"}],
        [],
    )
    service = opener(prompts="combined")
    service.ingest("u", "我是护士")
    fake.relation = "update"
    [item] = service.ingest("u", "刚才说错了，我在医院药房配药").items
    assert (item.action, item.superseded_text) == ("superseded", "用户是护士")
    assert item.similarity is not None and item.similarity < 0.35, "neither similar nor of the same category"
    assert [f.text for f in service.profile("u").facts] == ["用户在医院药房配药"]


def test_a_fact_the_llm_marks_hypothetical_changes_nothing(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.answers["我住在杭州"] = ([{"fact": "用户住在杭州", "category": "location", "confidence": 0.9}], [])
    fake.answers["要是明年我搬去成都就好了"] = (
        [
            {
                "fact": "用户搬去成都",
                "category": "location",
                "confidence": 0.6,
                "conflicts_with": "用户住在杭州",
                "hypothetical": True,
            }
        ],
        [],
    )
    service = opener(prompts="combined")
    service.ingest("u", "我住在杭州")
    fake.relation = "update"
    result = service.ingest("u", "要是明年我搬去成都就好了")
    assert result.facts == () and result.items == ()
    assert [f.text for f in service.profile("u").facts] == ["用户住在杭州"]
    assert len(events(service, "u", "FactObserved")) == 1


# ---- the combined extraction as the relation check for the facts it was shown (ADR 0019) --------------


def judge_prompts(fake: FakeOpenAI) -> list[str]:
    return [p for p in map(FakeOpenAI.prompt, fake.chat_requests()) if "判断这两个事实" in p]


def script_a_move(fake: FakeOpenAI) -> None:
    fake.answers["我住在杭州"] = ([{"fact": "用户住在杭州", "category": "location", "confidence": 0.9}], [])
    fake.answers["我搬到上海了"] = (
        [{"fact": "用户住在上海", "category": "location", "confidence": 0.9, "conflicts_with": "用户住在杭州"}],
        [],
    )


def test_combined_a_named_known_fact_is_replaced_without_a_judge_call_and_the_verdict_names_the_prompt(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    script_a_move(fake)
    fake.relation = "different"  # a judge asked would keep both
    service = opener(prompts="combined")
    [old] = service.ingest("u", "我住在杭州").items
    [item] = service.ingest("u", "我搬到上海了").items
    assert (item.action, item.superseded_text, item.relation) == ("superseded", "用户住在杭州", "conflict")
    assert len(fake.chat_requests()) == 2 and judge_prompts(fake) == [], "one extraction call a message, no judge"
    assert "已知事实：\n- 用户住在杭州" in FakeOpenAI.prompt(fake.chat_requests()[-1])
    combined = load_prompt_set("combined")
    [invalidated] = events(service, "u", "FactInvalidated")
    assert (invalidated["judge_id"], invalidated["judge_prompt_id"]) == (
        "openai:gpt-4o-mini/combined",
        combined.template_id("combined"),
    )
    assert json.loads(invalidated["raw_answer"]) == {"fact": "用户住在上海", "conflicts_with": "用户住在杭州"}
    why = service.why("u", old.id).to_dict()["invalidated"]
    assert (why["relation"], why["superseded_by"]["text"]) == ("conflict", "用户住在上海")
    assert (why["judge_id"], why["judge_prompt_id"]) == (
        "openai:gpt-4o-mini/combined",
        combined.template_id("combined"),
    )
    # a model names no rule: its prompt id says what decided (ADR 0035)
    assert why["rules"] == [] and invalidated["rules"] == [] and service.why("u", item.id).rules == ()
    assert [f.text for f in service.profile("u").facts] == ["用户住在上海"]


def test_combined_a_shown_fact_said_again_is_confirmed_by_the_free_judge_without_a_call(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    from factledger.infrastructure.offline import RuleJudge

    fake.answers["我住在杭州"] = ([{"fact": "用户住在杭州", "category": "location", "confidence": 0.9}], [])
    service = opener(prompts="combined")
    service.ingest("u", "我住在杭州")
    [item] = service.ingest("u", "我住在杭州", message_id="again").items
    assert item.action == "confirmed" and judge_prompts(fake) == []
    [confirmed] = events(service, "u", "FactConfirmed")
    assert confirmed["judge_id"] == RuleJudge().judge_id and confirmed["judge_prompt_id"] is None
    assert confirmed["raw_answer"].startswith("duplicate")
    assert confirmed["rules"] == ["judge.same-words"]  # the offline judge decided, and names its rule


def test_combined_a_fact_the_extractor_was_not_shown_is_still_judged(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    script_a_move(fake)
    fake.answers["我的二十个习惯"] = (
        [{"fact": f"用户每周练第{n}首钢琴曲", "category": "habit", "confidence": 0.9} for n in range(20)],
        [],
    )
    fake.answers["我搬到上海了"][0][0]["conflicts_with"] = None  # it names nothing: the judge must find it
    service = opener(prompts="combined")
    service.ingest("u", "我住在杭州")
    service.ingest("u", "我的二十个习惯")  # the extractor sees the last 20 active facts: not 用户住在杭州
    assert len(service.profile("u").facts) == 21
    fake.relation = "update"
    asked_before = len(judge_prompts(fake))
    [item] = service.ingest("u", "我搬到上海了").items
    extraction = [p for p in map(FakeOpenAI.prompt, fake.chat_requests()) if "提取事实信息和偏好" in p][-1]
    assert "- 用户每周练第0首钢琴曲" in extraction and "- 用户住在杭州" not in extraction
    assert (item.action, item.superseded_text, item.relation) == ("superseded", "用户住在杭州", "update")
    [asked] = judge_prompts(fake)[asked_before:]
    assert "旧事实：用户住在杭州\n新事实：用户住在上海" in asked
    [invalidated] = events(service, "u", "FactInvalidated")
    assert invalidated["judge_prompt_id"] == load_prompt_set("combined").template_id("conflict_check")


def test_seed_still_asks_the_judge_about_the_fact_conflicts_with_names(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    script_a_move(fake)
    fake.relation = "update"
    service = opener()
    service.ingest("u", "我住在杭州")
    [item] = service.ingest("u", "我搬到上海了").items
    assert (item.action, item.superseded_text, item.relation) == ("superseded", "用户住在杭州", "update")
    [asked] = judge_prompts(fake)
    assert "旧事实：用户住在杭州\n新事实：用户住在上海" in asked
    [invalidated] = events(service, "u", "FactInvalidated")
    assert invalidated["judge_id"] == "openai:gpt-4o-mini/seed"
    assert invalidated["judge_prompt_id"] == load_prompt_set("seed").template_id("conflict_check")
    assert invalidated["raw_answer"] == "update"


# ---- ingest_many: a group that cannot be saved as one goes one by one, extracting nothing twice -------


def test_a_group_whose_decisions_need_a_service_that_is_down_records_each_message_pending_once(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    # One worker: with several, the failing calls of two users at once open the breaker sooner.
    service = opener(prompts="combined", bulk_workers=1)
    for n in range(4):
        fake.answers[f"我住在杭州，第{n}次说"] = (
            [{"fact": "用户住在杭州", "category": "location", "confidence": 0.9}],
            [],
        )
    fake.down = {"embeddings": 500}
    messages = [Incoming("u" if n % 2 else "w", f"我住在杭州，第{n}次说", message_id=f"m{n}") for n in range(4)]
    outcomes = service.ingest_many(messages)
    assert [getattr(o, "status", o) for o in outcomes] == ["extraction_failed"] * 4
    assert len(fake.chat_requests()) == 4, "the group's extractions are reused, not asked for again"
    fake.down = {}
    assert sorted(r.message_id for r in service.retry_failed()) == ["m0", "m1", "m2", "m3"]
    assert [f.text for f in service.profile("u").facts] == ["用户住在杭州"]


def test_a_group_that_meets_a_concurrent_writer_is_saved_one_by_one_on_the_fresh_memory(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    script_a_move(fake)
    fake.answers["我养了一只猫"] = ([{"fact": "用户养了一只猫", "category": "other", "confidence": 0.9}], [])
    bulk, other = opener(prompts="combined"), opener(prompts="combined")
    bulk.ingest("u", "我住在杭州")
    fake.relation = "update"
    moved = json.dumps({"facts": fake.answers["我搬到上海了"][0], "preferences": []}, ensure_ascii=False)
    fake.script(Reply(moved, delay=1.0))  # the group's extraction answers late ...
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.extend(bulk.ingest_many([Incoming("u", "我搬到上海了", message_id="x1")]))
    )
    worker.start()
    wait_until(lambda: len(fake.chat_requests()) == 2, 5, "the group's extraction call")
    other.ingest("u", "我养了一只猫", message_id="y1")  # ... and meanwhile another process writes the user
    worker.join(30)
    [outcome] = done
    assert outcome.status == "recorded" and [i.action for i in outcome.items] == ["superseded"]
    assert len(fake.chat_requests()) == 3, "the group's extraction is reused after the conflict"
    ingested = [e["message_id"] for e in events(bulk, "u", "MessageIngested")]
    assert ingested[1:] == ["y1", "x1"]
    assert sorted(f.text for f in bulk.profile("u").facts) == ["用户住在上海", "用户养了一只猫"]


# ---- ingest_many with an LLM: several users' calls in flight, each user's messages in order ----------


def import_moves(service: LedgerService, fake: FakeOpenAI, users: list[str], cities: list[str]) -> list[Any]:
    """Each user says where they live, then moves twice; the log is sorted by user."""
    for city in cities:
        fake.answers[f"我现在住在{city}"] = (
            [{"fact": f"用户住在{city}", "category": "location", "confidence": 0.9}],
            [],
        )
    messages = [
        Incoming(user, f"我现在住在{city}", message_id=f"{user}-{n}") for user in users for n, city in enumerate(cities)
    ]
    outcomes = service.ingest_many(messages)
    assert [o.message_id for o in outcomes] == [m.message_id for m in messages], "outcomes come back in order"
    return outcomes


def test_a_bulk_import_asks_for_several_users_at_once_and_decides_as_one_thread_would(
    opener: Callable[..., LedgerService], fake: FakeOpenAI
) -> None:
    fake.relation = "update"
    fake.chat_delay = 0.2
    # (no response cache: the users say the same words, and one thread would find the first answer stored)
    serial = import_moves(
        opener(bulk_workers=1, response_cache=False), fake, [f"a{k}" for k in range(6)], ["杭州", "上海", "成都"]
    )
    assert fake.most_in_flight == 1
    # What deciding embedded is in the shared cache, every message's of a group: a fresh process asks for nothing.
    embedded = len(fake.embedding_requests())
    opener().embedder.embed(["用户住在杭州", "用户住在上海", "用户住在成都"])
    assert len(fake.embedding_requests()) == embedded
    asked = len(fake.chat_requests())
    service = opener(bulk_workers=4, response_cache=False)
    at_once = import_moves(service, fake, [f"b{k}" for k in range(6)], ["南京", "武汉", "西安"])
    assert fake.most_in_flight >= 2, "users' calls overlap"
    assert len(fake.chat_requests()) - asked == asked, "as many calls as one thread makes"

    def actions(outcomes: list[Any]) -> list[list[str]]:
        return [[item.action for item in outcome.items] for outcome in outcomes]

    assert actions(at_once) == actions(serial)
    assert actions(at_once)[:3] == [["observed"], ["superseded"], ["superseded"]]
    for k in range(6):
        assert [f.text for f in service.profile(f"b{k}").facts] == ["用户住在西安"]
    # Every call made on a worker thread is in the call log, under its user and message ...
    log = UsageLog(service.ledger.factory.datastore).report()
    assert log["totals"]["calls"] == len(fake.chat_requests())
    for k in range(6):
        read = [m["message_id"] for m in log["messages"] if m["user_id"] == f"b{k}"]
        assert read == [f"b{k}-0", f"b{k}-1", f"b{k}-2"]
    # ... and what deciding embedded there is in the shared cache: a fresh process asks for nothing.
    embedded = len(fake.embedding_requests())
    fresh = opener()
    fresh.embedder.embed(["用户住在南京", "用户住在武汉", "用户住在西安"])
    assert len(fake.embedding_requests()) == embedded


def test_a_bulk_import_offline_stays_on_the_callers_thread(settings: Settings) -> None:
    service = open_ledger(attrs.evolve(settings, bulk_workers=8))
    try:
        assert service.offline and service.bulk.workers == 1
    finally:
        service.close()
