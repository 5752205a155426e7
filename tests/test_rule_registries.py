"""Registries of named rules (issue 27 item 1): each rule's own examples and near-misses, and the engine."""

from __future__ import annotations

import importlib
import re
from importlib import resources
from typing import Any

import pytest

from factledger.infrastructure.offline.registry import Registry, Vocabulary, registry, simple
from factledger.infrastructure.offline.rule_data import RuleDataError, parse, rules
from factledger.infrastructure.offline.slots import Registries

OFFLINE = "factledger.infrastructure.offline"
MODULES = sorted(
    entry.name.removesuffix(".toml")
    for entry in resources.files(OFFLINE).joinpath("rules").iterdir()
    if entry.name.endswith(".toml")
)


def _built(module: str) -> list[Registry]:
    """The registries a module builds: bound to a name, or in its ``Registries`` (``RULES.name``)."""
    values = list(vars(importlib.import_module(f"{OFFLINE}.{module}")).values())
    values += [value for found in values if isinstance(found, Registries) for value in found.values()]
    return [value for value in values if isinstance(value, Registry)]


def _registries() -> list[tuple[str, Registry]]:
    return [(module, value) for module in MODULES for value in _built(module)]


def _rules(field: str) -> list[tuple[str, Any, Any]]:
    return [
        (rules_.name, rule, case)
        for _, rules_ in _registries()
        for rule in rules_.rules
        for case in getattr(rule, field)
    ]


@pytest.mark.parametrize("module", MODULES)
def test_every_registry_in_a_data_file_is_built_by_its_module(module: str) -> None:
    written = set(rules(module).entries("registries"))
    assert written == {value.name for value in _built(module)}


def test_rule_ids_are_unique_and_name_their_module() -> None:
    ids = [(module, rule.id) for module, found in _registries() for rule in found.rules]
    assert len({rule_id for _, rule_id in ids}) == len(ids)
    assert all(rule_id.startswith(f"{module}.") for module, rule_id in ids)


@pytest.mark.parametrize(("name", "rule", "example"), _rules("examples"), ids=lambda v: getattr(v, "id", None))
def test_each_rule_gives_its_examples(name: str, rule: Any, example: tuple[Any, ...]) -> None:
    # an example may carry the known facts it is read against, or the whole context (the message …)
    text, gives, *given = example
    context = given[0] if given and isinstance(given[0], dict) else {"known": tuple(given[0]) if given else ()}
    fired = rule.fire(text, context)
    assert fired is not None, f"{rule.id} should fire on {text!r}"
    assert fired.text == gives


@pytest.mark.parametrize(("name", "rule", "text"), _rules("near_misses"), ids=lambda v: getattr(v, "id", None))
def test_no_rule_fires_on_its_near_misses(name: str, rule: Any, text: str) -> None:
    assert rule.fire(text) is None, f"{rule.id} should not fire on {text!r}"


def test_every_rule_with_a_template_has_an_example() -> None:
    untested = [rule.id for _, found in _registries() for rule in found.rules if rule.template and not rule.examples]
    assert untested == []


_WORDS = Vocabulary(predicates={"long": simple(lambda v: len(v) > 2)}, filters={"upper": str.upper})


def _registry(text: str) -> Registry:
    return registry(parse("t.toml", text), "r", _WORDS)


def test_the_first_rule_that_fires_decides_and_conditions_and_rejects_hold() -> None:
    found = _registry(
        """
        [[registries.r]]
        id = "t.long"
        pattern = '^a (?P<v>\\w+)$'
        when = ["long(v)"]
        reject = { v = '^no' }
        template = "A {v|upper}"
        category = "x"
        [[registries.r]]
        id = "t.any"
        pattern = '^a (?P<v>\\w+)(?P<w> more)?$'
        template = "any {v}{w}"
        category = "y"
        """
    )
    assert (found.first("a cat").text, found.first("a cat").category) == ("A CAT", "x")
    assert found.first("a ox").rule.id == "t.any"  # too short for the first
    assert found.first("a nope").text == "any nope"  # rejected by the first
    assert found.first("b cat") is None
    assert [fired.rule.id for fired in found.every("a cat")] == ["t.long", "t.any"]


_READING = _WORDS.extended(
    predicates={"known": lambda value, context: value in context.get("known", ())},
    readers={"known_after": lambda value, context: context.get("after", {}).get(value, "?")},
)


def test_a_reader_is_a_filter_that_reads_the_context_in_templates_and_conditions() -> None:
    found = registry(
        parse(
            "t.toml",
            """
            [[registries.r]]
            id = "t.renamed"
            pattern = '^(?P<v>\\w+) now$'
            when = ["known(v|known_after)"]
            template = "{v} → {v|known_after|upper}"
            """,
        ),
        "r",
        _READING,
    )
    context = {"known": ("dog",), "after": {"cat": "dog", "ox": "yak"}}
    assert found.first("cat now", context).text == "cat → DOG"
    assert found.first("ox now", context) is None  # "yak" is not known
    assert found.first("cat now", {"known": ("dog",)}) is None  # nothing read: "?"
    assert found.first("cat now") is None  # no context at all


def test_findall_gives_every_place_where_a_rule_fires_in_text_order() -> None:
    found = registry(
        parse(
            "t.toml",
            """
            [[registries.r]]
            id = "t.number"
            pattern = '(?P<n>\\d+)(?P<u>[a-z]+)'
            how = "match"
            when = ["known(u)"]
            template = "{n} {u}"
            [[registries.r]]
            id = "t.word"
            pattern = '\\b(?P<w>[a-z]{4,})\\b'
            template = "{w|upper}"
            """,
        ),
        "r",
        _READING,
    )
    text = "walk 3km then 2mi and 5km home"
    fired = found.findall(text, {"known": ("km",)})
    # every match of each rule, not only the first; a match whose condition fails is left out (2mi)
    assert [(f.rule.id, f.text, f.match.start()) for f in fired] == [
        ("t.word", "WALK", 0),
        ("t.number", "3 km", 5),
        ("t.word", "THEN", 9),
        ("t.number", "5 km", 22),
        ("t.word", "HOME", 26),
    ]
    assert [f.text for f in found.rules[0].fire_all(text, {"known": ("mi",)})] == ["2 mi"]
    assert found.first(text, {"known": ("km",)}).rule.id == "t.word"  # match at 0 fails for t.number
    assert found.findall("", {}) == []


def test_a_rule_with_known_compares_its_groups_with_those_of_a_known_fact() -> None:
    found = registry(
        parse(
            "t.toml",
            """
            [[registries.r]]
            id = "t.renamed"
            pattern = '^called (?P<v>\\w+)$'
            known = '^called (?P<v>\\w+)(?P<how> often)?$'
            when = ["!same(v|upper, known.v|upper)", "long(known.v)"]
            template = "{known.v}{known.how} → {v}"
            [[registries.r]]
            id = "t.caller"
            pattern = '^called (?P<v>\\w+)$'
            template = "{known.v} → {v}"
            """,
        ),
        "r",
        _WORDS,
    )
    # the first known fact that matches and lets the conditions hold; its groups fill the template
    context = {"known": ("named Bob", "called Tim", "called Alice often", "called Carol")}
    fired = found.first("called Tim", context)
    assert (fired.rule.id, fired.text, fired.known.group(0)) == ("t.renamed", "Alice often → Tim", "called Alice often")
    assert found.first("called ALICE", {"known": ("called alice",)}).rule.id == "t.caller"  # the same once upper
    assert found.first("called Tim", {"known": ("called Al",)}).text == "{known.v} → Tim"  # too short: not read
    assert found.first("called Tim").text == "{known.v} → Tim"  # a rule without known leaves it to the caller
    assert found.rules[0].render("{known.other} {v}", found.rules[0].pattern.match("called X")) == "{known.other} X"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("id = 'x'\npattern = '('", "not a regular expression"),
        ("id = 'x'\npattern = 'a'\nwhen = ['nosuch(v)']", "unknown predicate"),
        ("id = 'x'\npattern = '(?P<v>a)'\ntemplate = '{v|nosuch}'", "unknown filter"),
        ("id = 'x'\npattern = '(?P<v>a)'\nwhen = ['long(v|upper|nosuch)']", "unknown filter"),
        ("id = 'x'\npattern = 'a'\ntemplate = '{v}'", "names the group 'v'"),
        ("id = 'x'\npattern = 'a'\nhow = 'find'", "how must be"),
        ("id = 'x'\npattern = 'a'\nflags = 'q'", "flags are letters"),
        ("id = 'x'\npattern = 'a'\ncategory = '@nosuch(v)'", "unknown chooser"),
        ("pattern = 'a'", "needs a string id"),
        ("id = 'x'\npattern = '(?P<v>a)'\nwhen = ['same(v, known.v)']", "names the group 'known.v'"),
        ("id = 'x'\npattern = '(?P<v>a)'\nknown = '(?P<w>a)'\nwhen = ['same(v, known.v)']", "group 'known.v'"),
        ("id = 'x'\npattern = '(?P<v>a)'\nwhen = ['nosuch(v, v)']", "unknown predicate"),
        ("id = 'x'\npattern = '(?P<v>a)'\nwhen = ['same(v, v, v)']", "unknown predicate"),
        ("id = 'x'\npattern = '(?P<v>a)'\nwhen = ['same(v|nosuch, v)']", "unknown filter"),
        ("id = 'x'\npattern = 'a'\nknown = 1", "known must be a pattern"),
    ],
)
def test_a_malformed_rule_is_an_error_naming_the_file_registry_and_rule(rule: str, message: str) -> None:
    with pytest.raises(RuleDataError, match=re.escape(message)) as raised:
        _registry(f"[[registries.r]]\n{rule}\n")
    assert str(raised.value).startswith("t.toml: [registries.r]")


def test_a_comparison_compares_as_many_values_as_its_function_takes() -> None:
    words = Vocabulary(comparisons={"between": lambda low, value, high: low < value < high})
    found = registry(
        parse(
            "t.toml",
            """
            [[registries.r]]
            id = "t.between"
            pattern = '^(?P<v>\\w) in (?P<a>\\w)-(?P<b>\\w)$'
            when = ["between(a, v, b)"]
            template = "{v}"
            """,
        ),
        "r",
        words,
    )
    assert found.first("c in a-e") is not None
    assert found.first("x in a-e") is None
    two = "[[registries.r]]\nid = 'x'\npattern = '(?P<v>a)'\nwhen = ['between(v, v)']\n"
    with pytest.raises(RuleDataError, match="malformed test"):
        registry(parse("t.toml", two), "r", words)
