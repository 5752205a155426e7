"""Bad input is refused at the boundary, with an error naming the field and the limit, and nothing is written.

``CASES`` is the table of input checks in docs/reliability.md, one row each;
``test_the_readme_lists_every_case`` keeps the two in step.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from property_sizes import examples

from factledger.application.errors import MessageIdReused
from factledger.application.service import InvalidInput, LedgerService
from factledger.domain.values import has_unstorable
from factledger.infrastructure.llm.parsing import UnusableOutput, parse_combined, parse_facts, parse_preferences

RELIABILITY = Path(__file__).resolve().parents[1] / "docs" / "reliability.md"
LONG = "我" * 16_001


def ingest(**changes: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"user_id": "u", "message": "我住在杭州"}
    call.update(changes)
    return call


# (case id as in docs/reliability.md, call, the words the error must contain)
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("user_id-type", ingest(user_id=42), "user_id must be a string, got int"),
    ("user_id-list", ingest(user_id=["f1"]), "user_id must be a string, got list"),
    ("user_id-empty", ingest(user_id="  "), "user_id must not be empty"),
    ("user_id-long", ingest(user_id="u" * 257), "the limit is 256 (max_id_chars)"),
    ("user_id-control", ingest(user_id="u\x00"), "user_id 'u\\x00' contains U+0000, a control character"),
    ("user_id-escape", ingest(user_id="u\x1b[31m"), "contains U+001B, a control character"),
    ("user_id-tab", ingest(user_id="u\t1"), "user_id 'u\\t1' contains U+0009, a control character"),
    (
        "user_id-invisible",
        ingest(user_id="u\u200b1"),
        "contains U+200B ZERO WIDTH SPACE, an invisible format character; ids must be visible text",
    ),
    ("session_id-bidi", ingest(session_id="s\u202e1"), "session_id 's\\u202e1' contains U+202E RIGHT-TO-LEFT"),
    ("message_id-newline", ingest(message_id="m\n1"), "message_id 'm\\n1' contains U+000A, a control character"),
    ("user_id-spaces", ingest(user_id=" u "), "user_id ' u ' has leading or trailing whitespace"),
    ("message_id-type", ingest(message_id=123), "message_id must be a string, got int"),
    ("message_id-long", ingest(message_id="m" * 1_000_000), "message_id is 1000000 characters long; the limit is 256"),
    ("session_id-type", ingest(session_id=7), "session_id must be a string, got int"),
    ("message-type", ingest(message=None), "message must be a string, got NoneType"),
    ("message-empty", ingest(message=" \n"), "message must not be empty"),
    ("message-only-control", ingest(message="\x00\x01"), "message must not be empty"),
    ("message-long", ingest(message=LONG), "message is 16001 characters long; the limit is 16000 (max_message_chars)"),
    ("context-type", ingest(context="hi"), "context must be a list of {role, content} turns, got str"),
    (
        "context-turns",
        ingest(context=[{"role": "user", "content": "x"}] * 51),
        "context has 51 turns; the limit is 50 (max_context_turns)",
    ),
    (
        "context-chars",
        ingest(context=[{"role": "user", "content": "好" * 30}] * 10_000),
        "context has 10000 turns; the limit is 50",
    ),
    (
        "context-size",
        ingest(context=[{"role": "user", "content": "好" * 1_000}] * 33),
        "more than 32000 characters of content (max_context_chars)",
    ),
    ("context-no-role", ingest(context=[{"content": "x"}]), "context[0]: a context turn has no 'role'"),
    (
        "context-content-type",
        ingest(context=[{"role": "user", "content": 5}]),
        "context[0]: a context turn's 'content' must be a string, got int",
    ),
    ("context-turn-type", ingest(context=["hi"]), "context[0]: a context turn must be an object"),
    ("timestamp-future", ingest(timestamp=datetime(9999, 1, 1, tzinfo=UTC)), "outside the plausible range"),
    ("timestamp-ancient", ingest(timestamp=datetime(1, 1, 1, tzinfo=UTC)), "outside the plausible range"),
    ("timestamp-type", ingest(timestamp="2024-01-01"), "timestamp must be a datetime, got str"),
]

RECALL_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("query-long", {"query": "x" * 5_000_000}, "query is 5000000 characters long; the limit is 2000 (max_query_chars)"),
    ("top_k-huge", {"top_k": 99999999999999999999}, "top_k must be an integer from 1 to 100 (max_top_k)"),
    ("top_k-zero", {"top_k": 0}, "top_k must be an integer from 1 to 100"),
    ("min_similarity-nan", {"min_similarity": float("nan")}, "min_similarity must be a number in [0, 1]"),
]


def head(service: LedgerService) -> int:
    return service.ledger.recorder.max_notification_id() or 0


@pytest.mark.parametrize(("case", "call", "words"), CASES, ids=[c[0] for c in CASES])
def test_bad_ingest_is_refused_and_nothing_is_written(
    service: LedgerService, case: str, call: dict[str, Any], words: str
) -> None:
    service.ingest("bystander", "我住在北京")
    before = head(service)
    call = dict(call)  # the case table is shared by both backends' runs
    user_id, message = call.pop("user_id"), call.pop("message")
    with pytest.raises(InvalidInput) as refused:
        service.ingest(user_id, message, **call)
    assert words in str(refused.value)
    assert len(str(refused.value)) < 400, "the error names the value, it does not echo it whole"
    assert head(service) == before, "a refused message records nothing"


@pytest.mark.parametrize(("case", "call", "words"), RECALL_CASES, ids=[c[0] for c in RECALL_CASES])
def test_bad_recall_is_refused(service: LedgerService, case: str, call: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        service.recall("u", **{"query": "住在哪里", **call})
    assert words in str(refused.value)


def test_the_reliability_page_lists_every_case() -> None:
    table = RELIABILITY.read_text(encoding="utf-8")
    missing = [case for case, _, _ in CASES + RECALL_CASES if f"`{case}`" not in table]
    assert not missing, f"docs/reliability.md's input table lacks {missing}"


def test_control_characters_are_removed_from_text_not_refused(service: LedgerService) -> None:
    result = service.ingest("u", "我住在北京\x00\x1b[31m", context=[{"role": "user", "content": "你\x07好"}])
    assert result.facts and all(not has_unstorable(f) for f in result.facts)
    [message] = [e for e in [e.to_dict() for e in service.history("u")] if e["event"] == "MessageIngested"]
    assert message["text"] == "我住在北京"  # the whole escape sequence, not only its ESC
    assert message["context"] == [{"role": "user", "content": "你好"}]
    assert service.read_model_status().quarantined == 0


def test_limits_are_configurable(settings: Any) -> None:
    import attrs

    from factledger.infrastructure.bootstrap import open_ledger

    with (
        open_ledger(attrs.evolve(settings, max_message_chars=10)) as strict,
        pytest.raises(InvalidInput, match="the limit is 10 \\(max_message_chars\\)"),
    ):
        strict.ingest("u", "我住在杭州，老板姓张，平时喜欢简短")


# ---- fuzzing -----------------------------------------------------------------------------

ids = st.one_of(st.text(max_size=300), st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2))
turns = st.lists(
    st.one_of(
        st.fixed_dictionaries({"role": st.text(max_size=10), "content": st.text(max_size=50)}),
        st.dictionaries(st.text(max_size=5), st.one_of(st.text(max_size=5), st.integers()), max_size=3),
        st.text(max_size=5),
    ),
    max_size=4,
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user_id=ids,
    message=st.one_of(st.text(max_size=200), st.sampled_from(["我住在北京\x00", "我叫\ud800小明", "我喜欢[/x]"])),
    message_id=st.one_of(st.none(), ids),
    context=st.one_of(st.none(), turns),
)
def test_fuzzed_ingest_records_all_or_nothing_and_never_poisons_the_read_model(
    service: LedgerService, user_id: Any, message: Any, message_id: Any, context: Any
) -> None:
    before = head(service)
    try:
        result = service.ingest(user_id, message, context=context, message_id=message_id)
    except (InvalidInput, MessageIdReused):
        # Both refusals write nothing. The service lives across examples, so a drawn message_id
        # may already be recorded for the user with another text: refusing that is correct.
        assert head(service) == before
        return
    assert result.status in {"recorded", "duplicate"}
    assert service.read_model_status().lag == 0
    assert service.read_model_status().quarantined == 0
    for entry in [e.to_dict() for e in service.history(user_id)]:
        for value in entry.values():
            if isinstance(value, str):
                assert not has_unstorable(value)


llm_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True), st.integers(), st.text(max_size=30)),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "fact",
                    "preference",
                    "category",
                    "confidence",
                    "strength",
                    "evidence",
                    "conflicts_with",
                    "facts",
                    "preferences",
                    "text",
                ]
            ),
            children,
            max_size=5,
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=examples(150), deadline=None)
@example(answer='["\\u001b"]', wrapper="{}")  # an item that is only an escape character: no item, no crash
@given(
    answer=st.one_of(st.text(max_size=300), llm_values.map(lambda v: __import__("json").dumps(v))),
    wrapper=st.sampled_from(["{}", "```json\n{}\n```", "好的：{} 以上", "{}\x00"]),
)
def test_fuzzed_llm_answers_parse_to_clean_items_or_a_clear_refusal(answer: str, wrapper: str) -> None:
    text = wrapper.replace("{}", answer, 1)
    for parse in (parse_facts, parse_preferences, parse_combined):
        try:
            parsed = parse(text)
        except UnusableOutput:
            continue
        facts, prefs = parsed if parse is parse_combined else (parsed, [])
        for item in [*facts, *prefs]:
            assert item.text.strip() and len(item.text) <= 500
            assert not has_unstorable(item.text)
            assert not re.search(r"\s{2,}", item.text)
            for extra in (getattr(item, "evidence", ""), getattr(item, "conflicts_with", None) or ""):
                assert not has_unstorable(extra)
            score = getattr(item, "confidence", getattr(item, "strength", 0.5))
            assert 0.0 <= score <= 1.0
