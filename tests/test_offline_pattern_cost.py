"""What one clause costs the offline rules (issue 25): a message of thousands of short clauses runs
the rules once per clause, so nothing per clause may look a string pattern up in ``re``'s cache
(512 entries, evicted by the rules' many more patterns: recompiling them was a fifth of a profile)
or read the whole message again for a clause it has already answered for."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from factledger.infrastructure.offline import changes, clauses, dimensions, signals
from factledger.infrastructure.offline.signals import SignalDetector

#: clauses of every kind the detector tells apart: first person, topics, requests, questions, English
MESSAGE = (
    "我在杭州工作，老板姓张，平时喜欢爬山。以后回答简短点，用中文回复。你住哪呢？我的猫叫咪咪吗？"
    "周末经常去钓鱼。I live in Leeds, my wife is a nurse, I prefer tea. Can you keep it brief? "
    "It's a moving war novel. Honesty is key."
)


def _compile_only() -> SimpleNamespace:
    """A stand-in for the ``re`` module that compiles but refuses a look-up by string."""

    def refused(*_: Any, **__: Any) -> Any:
        raise AssertionError("a string pattern looked up in re's cache on a clause")

    return SimpleNamespace(
        compile=re.compile,
        Pattern=re.Pattern,
        IGNORECASE=re.IGNORECASE,
        I=re.I,
        search=refused,
        match=refused,
        fullmatch=refused,
        findall=refused,
        finditer=refused,
        sub=refused,
        split=refused,
    )


def test_the_detector_reads_clauses_through_compiled_patterns_only(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = SignalDetector().detect(MESSAGE)  # compiles every table first
    monkeypatch.setattr(signals, "re", _compile_only())
    assert SignalDetector().detect(MESSAGE) == expected
    assert expected["fact_categories"] and expected["pref_categories"]


def test_reply_dimensions_and_the_script_test_use_compiled_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    asks = "以后回答简短点，控制在80字以内，用英文回复"
    expected = dimensions.dimensions(asks)
    monkeypatch.setattr(dimensions, "re", _compile_only())
    monkeypatch.setattr(clauses, "re", _compile_only())
    assert dimensions.dimensions(asks) == expected
    assert expected["length"] == "short" and expected["word_limit"] == "80"
    assert clauses.is_english("I live in Leeds") and not clauses.is_english("我住在Leeds")


def test_a_past_clause_said_again_reads_the_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    message = "以前喜欢猫，现在喜欢狗，" * 500
    getattr(changes.is_past_against_now, "cache_clear", lambda: None)()  # (a fresh cache, where there is one)
    reads = []
    real = changes.RE._ZH_NOW

    class Counting:
        def search(self, text: str) -> re.Match[str] | None:
            reads.append(len(text))
            return real.search(text)

    monkeypatch.setattr(changes.RE, "_ZH_NOW", Counting())
    answers = {changes.is_past_against_now("以前喜欢猫", message) for _ in range(500)}
    assert answers == {True} and len(reads) == 1


def test_clauses_that_tell_a_change_read_their_message_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each clause told as a change ("搬到…") is weighed against the facts known; what that asks of the
    whole message (a change told, a correction, a plan, its kinds) is worked out once, not per clause."""
    from factledger.infrastructure.offline import RuleExtractor, replacement

    message = "。搬到「其实搬到" * 200
    for cached in ("_marks", "_kinds", "_someone_else"):
        getattr(getattr(replacement, cached, None), "cache_clear", lambda: None)()
    reads = []
    real = replacement.RE._ZH_CHANGE

    class Counting:
        def search(self, text: str) -> re.Match[str] | None:
            reads.append(text)
            return real.search(text)

    monkeypatch.setattr(replacement.RE, "_ZH_CHANGE", Counting())
    # (known as said, so that no fact read already names what it replaces)
    RuleExtractor().extract(message, known_facts=["我住在北京", "我在腾讯工作", "I live in London"])
    assert len(reads) >= 1
    assert sum(len(r) >= len(message) - 1 for r in reads) == 1


@pytest.mark.parametrize("unit", ["1-年级!", "她上四年级了，"], ids=["figure-grade", "she-grade"])
def test_a_change_told_a_thousand_times_is_judged_as_often_as_once(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # every change the message told was judged against every item before it: a clause telling one
    # change, repeated, cost the square of its count (a property test drew "1-年级!" repeated)
    from factledger.infrastructure.offline.extractor import RuleExtractor
    from factledger.infrastructure.offline.judge import RuleJudge

    judged: list[int] = []
    real = RuleJudge.judge

    def counted(self: RuleJudge, old: str, new: str) -> Any:
        judged.append(1)
        return real(self, old, new)

    monkeypatch.setattr(RuleJudge, "judge", counted)
    extractor = RuleExtractor()
    known = ["我住在北京", "我今年30岁", "我女儿上三年级", "我喜欢喝咖啡", "我在腾讯工作", "I live in London"]
    extractor.extract(unit * 40, known_facts=known)
    forty = len(judged)
    judged.clear()
    extractor.extract(unit * 400, known_facts=known)
    assert len(judged) <= 12 * max(forty, 1), (forty, len(judged))
