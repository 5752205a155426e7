"""Contradictions the offline rules must see (issue 24, finding 4), with invented sentences.

* a space inside Chinese text splits no value: Chinese is written without spaces;
* a negated liking is the liking of the same thing with the other polarity, whatever the verb;
* a relative's one-value attributes (where they live, study, work; their school, year, employer)
  take a new value exactly as the user's own do: the subject is a parameter of the slot.

Each table has look-alikes that must change nothing.
"""

from __future__ import annotations

import pytest

from factledger.infrastructure.offline import RuleExtractor


def fact_texts(extractor: RuleExtractor, message: str, known: tuple[str, ...] = ()) -> list[str]:
    return [f.text for f in extractor.extract(message, known_facts=known).facts]


# -- a space inside Chinese --------------------------------------------------------------------


@pytest.mark.parametrize(
    "spaced",
    [
        "我住在北\u3000京",  # the ideographic space
        "我住在北 京",
        "我住在北\u00a0京",  # a no-break space
        "我住在北\u2009京",  # a thin space
        "我住在北\u200b京",  # a zero-width space
        "我 住在 北京",
    ],
)
def test_a_space_inside_chinese_splits_no_value(extractor: RuleExtractor, spaced: str) -> None:
    assert fact_texts(extractor, spaced) == ["用户住在北京"]
    # and said again with a space, it is the same value, not a new one that replaces it
    said_again = fact_texts(extractor, spaced, known=("用户住在北京",))
    assert said_again == ["用户住在北京"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("I live in New York", ["The user lives in New York"]),  # spaces between Latin words stay
        ("我平时用 VS Code 写代码", []),  # a name in Latin letters keeps its space
        ("我住在北京\n我女儿叫小米", ["用户住在北京", "用户的女儿叫小米"]),  # a line break still ends a sentence
    ],
)
def test_spaces_that_mean_something_stay(extractor: RuleExtractor, message: str, expected: list[str]) -> None:
    extraction = extractor.extract(message)
    assert [f.text for f in extraction.facts] == expected
    if not expected:
        assert [p.text for p in extraction.preferences] == ["偏好使用VS Code"]
