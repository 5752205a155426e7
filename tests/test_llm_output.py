"""Malformed LLM and embedding output, transport failures and relation answers, over HTTP to the fake server.

No database here: the extractor and judge run on a client without cache or
call log, so each case is one or two HTTP round trips.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from fake_openai import EXAMPLE, FakeOpenAI, Reply

from factledger.application.ports import ExtractionFailure
from factledger.domain.values import MAX_TEXT_LENGTH, Relation
from factledger.infrastructure.config import ConfigError
from factledger.infrastructure.llm import LLMExtractor, LLMJudge, load_prompt_set
from factledger.infrastructure.llm.client import LLMAuthError, LLMClient, LLMConfigError, LLMUnavailable
from factledger.infrastructure.llm.embedder import OpenAIEmbedder
from factledger.infrastructure.llm.usage import CallRecord


class Signals:
    """A detector that always sees the signals it was built with (the real one is tested elsewhere)."""

    def __init__(self, facts: bool, prefs: bool):
        self.result = {"has_fact_signal": facts, "has_pref_signal": prefs, "fact_categories": [], "pref_categories": []}

    def detect(self, text: str) -> dict[str, Any]:
        return dict(self.result)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def client(fake: FakeOpenAI, **kwargs: Any) -> LLMClient:
    options = {"timeout": 5.0, "max_retries": 2, "backoff": 0.01, **kwargs}
    return LLMClient(api_key="test", base_url=fake.url + "/v1", **options)


def fact_extractor(fake: FakeOpenAI, **kwargs: Any) -> LLMExtractor:
    """Seed prompts, a fact signal only: exactly one call per extraction."""
    return LLMExtractor(client(fake, **kwargs), "gpt-4o-mini", load_prompt_set("seed"), detector=Signals(True, False))


FACT = {"fact": "用户在杭州工作", "category": "location", "confidence": 0.9}


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        pytest.param(
            "```json\n" + json.dumps([FACT], ensure_ascii=False) + "\n```",
            [("用户在杭州工作", "location", 0.9)],
            id="code-fence",
        ),
        pytest.param(
            "好的，提取结果如下：\n" + json.dumps([FACT], ensure_ascii=False) + "\n以上。",
            [("用户在杭州工作", "location", 0.9)],
            id="prose",
        ),
        pytest.param(
            '[{"fact": "用户在杭州工作", "category": "location", "confidence": 0.9,},]',
            [("用户在杭州工作", "location", 0.9)],
            id="trailing-commas",
        ),
        pytest.param(json.dumps(FACT, ensure_ascii=False), [("用户在杭州工作", "location", 0.9)], id="single-object"),
        pytest.param(
            '{"facts": [' + json.dumps(FACT, ensure_ascii=False) + "]}",
            [("用户在杭州工作", "location", 0.9)],
            id="wrapped-array",
        ),
        pytest.param(
            "[{'fact': '用户在杭州工作', 'category': 'location', 'confidence': 0.9, 'conflicts_with': None}]",
            [("用户在杭州工作", "location", 0.9)],
            id="python-literal",
        ),
        pytest.param(
            '[{"fact": "用户在杭州工作", "category": "城市"}]',
            [("用户在杭州工作", "other", 0.5)],
            id="unknown-category",
        ),
        pytest.param(
            '[{"fact": "用户在杭州工作", "category": "Location", "confidence": "0.8"}]',
            [("用户在杭州工作", "location", 0.8)],
            id="number-as-string",
        ),
        pytest.param(
            '[{"fact": "a", "confidence": "90%"}, {"fact": "b", "confidence": 7}, '
            '{"fact": "c", "confidence": -1}, {"fact": "d", "confidence": "high"}]',
            [("a", "other", 0.9), ("b", "other", 1.0), ("c", "other", 0.0), ("d", "other", 0.5)],
            id="out-of-range",
        ),
        pytest.param(
            '[{"fact": ""}, {"fact": "   "}, {"fact": null}, {"category": "work"}, {"fact": "用户在杭州工作"}]',
            [("用户在杭州工作", "other", 0.5)],
            id="empty-texts",
        ),
        pytest.param('["用户在杭州工作"]', [("用户在杭州工作", "other", 0.5)], id="bare-strings"),
        pytest.param("[]", [], id="nothing"),
    ],
)
def test_malformed_fact_answers_are_read(fake: FakeOpenAI, answer: str, expected: list[tuple[str, str, float]]) -> None:
    fake.script(answer)
    extraction = fact_extractor(fake).extract("我在杭州工作")
    assert [(f.text, f.category, f.confidence) for f in extraction.facts] == expected
    assert json.loads(extraction.raw_output) == {"fact": answer}
    assert len(fake.chat_requests()) == 1


def test_over_long_texts_are_bounded(fake: FakeOpenAI) -> None:
    fake.script(json.dumps([{"fact": "用" * 5000, "category": "other"}] * 50, ensure_ascii=False))
    extraction = fact_extractor(fake).extract("我在杭州工作")
    assert len(extraction.facts) == 20  # a runaway answer is cut too
    assert all(len(f.text) == MAX_TEXT_LENGTH for f in extraction.facts)


def test_conflicts_with_is_kept_and_nothing_words_are_null(fake: FakeOpenAI) -> None:
    fake.script(
        '[{"fact": "用户住在上海", "conflicts_with": "用户住在杭州"}, {"fact": "用户养猫", "conflicts_with": "null"}]'
    )
    facts = fact_extractor(fake).extract("我住在上海，养了只猫").facts
    assert [f.conflicts_with for f in facts] == ["用户住在杭州", None]


def test_malformed_preference_answers_are_read(fake: FakeOpenAI) -> None:
    extractor = LLMExtractor(client(fake), "m", load_prompt_set("combined"), detector=Signals(False, True))
    fake.script(
        'Sure! {"facts": [], "preferences": [{"preference": "偏好简短的回复风格", "category": "COMMUNICATION_STYLE", '
        '"strength": "1.5", "evidence": ["简短点", "说重点"]}, {"preference": ""}],}'
    )
    [pref] = extractor.extract("以后简短点").preferences
    assert (pref.text, pref.category, pref.strength, pref.evidence) == (
        "偏好简短的回复风格",
        "communication_style",
        1.0,
        "简短点; 说重点",
    )


def test_garbage_raises_extraction_failure_after_one_retry(fake: FakeOpenAI) -> None:
    fake.script("garbage {{{ not json", "still garbage")
    with pytest.raises(ExtractionFailure) as caught:
        fact_extractor(fake).extract("我在杭州工作")
    failure = caught.value
    assert failure.extractor_id == "openai:gpt-4o-mini/seed"
    assert failure.prompt_id == load_prompt_set("seed").id
    assert "still garbage" in failure.raw_output
    assert len(fake.chat_requests()) == 2


def test_server_errors_are_retried_then_fail_cleanly(fake: FakeOpenAI) -> None:
    fake.script(Reply(status=500), Reply(status=503), Reply(status=502))
    with pytest.raises(ExtractionFailure, match="HTTP 502"):
        fact_extractor(fake).extract("我在杭州工作")
    assert len(fake.chat_requests()) == 3  # the first try and max_retries=2


def test_a_429_then_success(fake: FakeOpenAI) -> None:
    fake.script(
        Reply(status=429, body={"error": {"message": "Rate limit reached", "code": "rate_limit_exceeded"}}), "[]"
    )
    assert fact_extractor(fake).extract("我在杭州工作").facts == ()
    assert len(fake.chat_requests()) == 2


def test_an_exhausted_quota_is_not_retried(fake: FakeOpenAI) -> None:
    fake.script(
        Reply(status=429, body={"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}})
    )
    with pytest.raises(ExtractionFailure, match="quota"):
        fact_extractor(fake).extract("我在杭州工作")
    assert len(fake.chat_requests()) == 1


def test_a_timeout_fails_the_extraction(fake: FakeOpenAI) -> None:
    fake.script(Reply("[]", delay=1.0))
    with pytest.raises(ExtractionFailure, match="Timeout"):
        fact_extractor(fake, timeout=0.2, max_retries=0).extract("我在杭州工作")


def test_a_connection_error_fails_the_extraction() -> None:
    with FakeOpenAI() as gone:
        url = gone.url
    extractor = LLMExtractor(
        LLMClient(api_key="k", base_url=url + "/v1", timeout=1, max_retries=1, backoff=0.01),
        "m",
        load_prompt_set("seed"),
        detector=Signals(True, False),
    )
    with pytest.raises(ExtractionFailure, match="APIConnectionError"):
        extractor.extract("我在杭州工作")


def test_401_names_the_key_and_404_the_model(fake: FakeOpenAI) -> None:
    fake.script(
        Reply(status=401, body={"error": {"message": "Incorrect API key provided: sk-xx", "code": "invalid_api_key"}})
    )
    with pytest.raises(LLMAuthError, match="set OPENAI_API_KEY"):
        fact_extractor(fake).extract("我在杭州工作")
    fake.script(
        Reply(status=404, body={"error": {"message": "The model `gpt-9` does not exist", "code": "model_not_found"}})
    )
    with pytest.raises(LLMConfigError, match="FACTLEDGER_LLM_MODEL"):
        fact_extractor(fake).extract("我在杭州工作")


def test_a_non_api_response_fails_cleanly(fake: FakeOpenAI) -> None:
    fake.script(Reply(body="<html>bad gateway</html>", headers={"content-type": "text/html"}))
    with pytest.raises(ExtractionFailure, match="not an OpenAI API response"):
        fact_extractor(fake).extract("我在杭州工作")


def test_the_chat_body_is_read_by_us_with_its_counts(fake: FakeOpenAI) -> None:
    def body(message: dict[str, Any], usage: Any) -> dict[str, Any]:
        return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message}], "usage": usage}

    fake.script(
        Reply(body=body({"role": "assistant", "content": "update"}, {"prompt_tokens": 31, "completion_tokens": 2})),
        Reply(body=body({"role": "assistant", "content": None, "refusal": "I can't"}, None)),
        Reply(body=body({"role": "assistant", "content": "ok"}, {"prompt_tokens": "many", "completion_tokens": -4})),
        Reply(body={"choices": []}),
    )
    answers = [client(fake).chat(model="m", prompt_id="p", prompt="hi") for _ in range(4)]
    assert [(a.text, a.input_tokens, a.output_tokens) for a in answers] == [
        ("update", 31, 2),
        ("I can't", 0, 0),
        ("ok", 0, 0),
        ("", 0, 0),
    ]
    sent = fake.requests[-1]["body"]
    assert sent["model"] == "m" and sent["messages"] == [{"role": "user", "content": "hi"}]
    assert sent["temperature"] == 0.0


def test_a_chat_answer_whose_content_is_not_text_is_unreadable(fake: FakeOpenAI) -> None:
    fake.script(Reply(body={"choices": [{"message": {"role": "assistant", "content": ["a", "list"]}}]}))
    with pytest.raises(LLMUnavailable, match=r"unreadable response.*not text"):
        client(fake).chat(model="m", prompt_id="p", prompt="hi")


@pytest.mark.parametrize(
    ("answer", "relation"),
    [
        ("update", Relation.UPDATE),
        ("UPDATE", Relation.UPDATE),
        ('"Update" — the address changed.', Relation.UPDATE),
        ("Conflict", Relation.CONFLICT),
        ("The answer is: duplicate.", Relation.DUPLICATE),
        ("different", Relation.DIFFERENT),
        ("这是更新", Relation.UPDATE),
        ("两者矛盾", Relation.CONFLICT),
        ("我不确定", Relation.DIFFERENT),
        ("", Relation.DIFFERENT),
    ],
)
def test_relation_answers_follow_the_spec_order(fake: FakeOpenAI, answer: str, relation: Relation) -> None:
    fake.script(answer)
    judge = LLMJudge(client(fake), "gpt-4o-mini", load_prompt_set("seed"))
    verdict = judge.judge("用户住在杭州", "用户住在上海")
    assert verdict.relation is relation
    assert verdict.raw_answer == answer
    assert verdict.prompt_id == load_prompt_set("seed").template_id("conflict_check")
    assert verdict.judge_id == "openai:gpt-4o-mini/seed"


def test_the_judge_falls_back_to_the_rules_when_the_llm_is_down(fake: FakeOpenAI) -> None:
    fake.script(*[Reply(status=503)] * 3)
    verdict = LLMJudge(client(fake), "m", load_prompt_set("seed")).judge("用户住在杭州", "用户住在杭州")
    assert verdict.raw_answer.startswith("[LLM unavailable")
    assert not verdict.judge_id.startswith("openai:")


def test_embeddings_are_unit_vectors_of_the_configured_size(fake: FakeOpenAI) -> None:
    embedder = OpenAIEmbedder(client(fake), "text-embedding-3-small", 32)
    assert embedder.embedder_id == "openai:text-embedding-3-small@32"
    vectors = embedder.embed(["用户在杭州工作", "用户的老板姓张"])
    assert [len(v) for v in vectors] == [32, 32]
    assert abs(sum(x * x for x in vectors[0]) - 1) < 1e-9
    assert fake.embedding_requests()[0]["dimensions"] == 32
    # a model factledger does not know is measured once
    unknown = OpenAIEmbedder(client(fake), "bge-m3")
    assert unknown.dimension == 64 and unknown.embedder_id == "openai:bge-m3@64"


class Calls:
    """A call log that keeps the records (the real one writes them to the database)."""

    def __init__(self) -> None:
        self.records: list[CallRecord] = []

    def record(self, call: CallRecord) -> None:
        self.records.append(call)


def embedding_answer(*vectors: Any, tokens: int = 7) -> Reply:
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return Reply(body={"object": "list", "data": data, "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def test_embeddings_are_read_from_floats_or_base64_and_metered(fake: FakeOpenAI) -> None:
    calls = Calls()
    embedder = OpenAIEmbedder(client(fake, usage=calls), "text-embedding-3-small", 4)
    as_base64 = base64.b64encode(np.array([0.0, 3.0, 0.0, 4.0], dtype="<f4").tobytes()).decode()
    # out of order (by "index"), one as floats and one as base64 float32, as some endpoints answer
    fake.script_embeddings(
        Reply(
            body={
                "object": "list",
                "data": [
                    {"object": "embedding", "index": 1, "embedding": as_base64},
                    {"object": "embedding", "index": 0, "embedding": [1.0, 0, 0, 0]},
                ],
                "usage": {"prompt_tokens": 11, "total_tokens": 11},
            }
        )
    )
    first, second = embedder.embed(["用户在杭州工作", "用户的老板姓张"])
    assert list(first) == [1.0, 0.0, 0.0, 0.0]
    assert list(second) == pytest.approx([0.0, 0.6, 0.0, 0.8])
    assert fake.embedding_requests()[0]["encoding_format"] == "float"
    assert [(c.kind, c.input_tokens, c.ok) for c in calls.records] == [("embedding", 11, True)]


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        pytest.param(embedding_answer([0.1] * 4, [0.1] * 4), "returned 2 vectors for 1 texts", id="two-for-one"),
        pytest.param(embedding_answer(), "returned 0 vectors for 1 texts", id="none"),
        pytest.param(Reply(body={"object": "list", "usage": {"prompt_tokens": 7}}), "no list of vectors", id="no-data"),
        pytest.param(embedding_answer(["0.1", "x", "y", "z"]), "unreadable vector for text 0", id="strings"),
        pytest.param(embedding_answer([0.1, None, 0.1, 0.1]), "unreadable vector for text 0", id="null"),
        pytest.param(embedding_answer([[0.1, 0.1], [0.1, 0.1]]), "unreadable vector for text 0", id="nested"),
        pytest.param(embedding_answer([0.1, [0.1], 0.1, 0.1]), "unreadable vector for text 0", id="ragged"),
        pytest.param(embedding_answer([]), "unreadable vector for text 0", id="empty"),
        pytest.param(embedding_answer(None), "unreadable vector for text 0", id="missing"),
        pytest.param(embedding_answer("not base64!"), "unreadable vector for text 0", id="bad-base64"),
        pytest.param(embedding_answer("AAAAAAA="), "unreadable vector for text 0", id="base64-not-float32"),
        pytest.param(embedding_answer(["NaN", 0.1, 0.1, 0.1]), "unreadable vector for text 0", id="nan-string"),
        pytest.param(
            Reply(body='{"data": [{"index": 0, "embedding": [NaN, 0.1, 0.1, 0.1]}], "usage": {"prompt_tokens": 7}}'),
            "unreadable vector for text 0",
            id="nan",
        ),
    ],
)
def test_a_malformed_embedding_answer_fails_clearly(fake: FakeOpenAI, reply: Reply, error: str) -> None:
    calls = Calls()
    embedder = OpenAIEmbedder(client(fake, usage=calls), "text-embedding-3-small", 4)
    fake.script_embeddings(reply)
    with pytest.raises(LLMUnavailable, match=error):
        embedder.embed(["用户在杭州工作"])
    assert len(fake.embedding_requests()) == 1  # a garbled answer is not a reason to ask again
    # the call went through and is metered like any other
    assert [(c.kind, c.input_tokens, c.ok) for c in calls.records] == [("embedding", 7, True)]


def test_a_vector_of_the_wrong_size_names_the_setting(fake: FakeOpenAI) -> None:
    fake.script_embeddings(embedding_answer([0.1] * 3))
    with pytest.raises(ConfigError, match="FACTLEDGER_EMBEDDING_DIMENSION=3"):
        OpenAIEmbedder(client(fake), "text-embedding-3-small", 4).embed(["用户在杭州工作"])


def test_embedding_transport_errors_are_mapped_like_chat(fake: FakeOpenAI) -> None:
    calls = Calls()
    embedder = OpenAIEmbedder(client(fake, usage=calls), "text-embedding-3-small", 4)
    fake.script_embeddings(Reply(status=503), Reply(status=429), embedding_answer([1.0, 0, 0, 0]))
    assert [list(v) for v in embedder.embed(["a"])] == [[1.0, 0.0, 0.0, 0.0]]
    assert calls.records[-1].attempts == 3
    fake.script_embeddings(*[Reply(status=500)] * 3)
    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        embedder.embed(["b"])
    fake.script_embeddings(Reply(status=401, body={"error": {"message": "Incorrect API key", "code": None}}))
    with pytest.raises(LLMAuthError, match="set OPENAI_API_KEY"):
        embedder.embed(["c"])
    fake.script_embeddings(Reply(status=404, body={"error": {"message": "no such model", "code": None}}))
    with pytest.raises(LLMConfigError, match="FACTLEDGER_EMBEDDING_MODEL"):
        embedder.embed(["d"])
    fake.script_embeddings(Reply(body="<html>bad gateway</html>", headers={"content-type": "text/html"}))
    with pytest.raises(LLMUnavailable, match="not an OpenAI API response: '<html>bad gateway"):
        embedder.embed(["e"])
    assert calls.records[-1].ok is False
    fake.script_embeddings(Reply(delay=1.0))
    with pytest.raises(LLMUnavailable, match="Timeout"):
        OpenAIEmbedder(client(fake, timeout=0.2, max_retries=0), "text-embedding-3-small", 4).embed(["f"])


def test_a_server_without_dimensions_is_asked_again_without(fake: FakeOpenAI) -> None:
    fake.script_embeddings(Reply(status=400, body={"error": {"message": "unknown parameter dimensions"}}))
    (vector,) = OpenAIEmbedder(client(fake), "bge-m3", 64).embed(["用户在杭州工作"])
    assert len(vector) == 64
    assert ["dimensions" in body for body in fake.embedding_requests()] == [True, False]


def test_example_passes_through_an_unscripted_server(fake: FakeOpenAI) -> None:
    extraction = LLMExtractor(client(fake), "m", load_prompt_set("combined")).extract(EXAMPLE)
    assert [f.text for f in extraction.facts] == ["用户在杭州工作", "用户的老板姓张"]
    assert len(fake.chat_requests()) == 1


def test_answers_orjson_refuses_are_read_as_json_reads_them() -> None:
    """orjson reads answers (ADR 0021); what it refuses and json accepts is read as before."""
    import math

    from factledger.infrastructure.llm.client import _json_object

    assert _json_object(b'{"usage": {"prompt_tokens": 3}}') == {"usage": {"prompt_tokens": 3}}
    assert math.isnan(_json_object(b'{"score": NaN}')["score"])
    for garbage in (b"<html>bad gateway</html>", b"[1, 2]", b"\xff\xfe"):
        with pytest.raises(ValueError, match="not an OpenAI API response"):
            _json_object(garbage)
