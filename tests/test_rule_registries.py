"""Registries of named rules (issue 27 item 1): each rule's own examples and near-misses, and the engine."""

from __future__ import annotations

import importlib
import re
from importlib import resources
from typing import Any

import pytest

from factledger.infrastructure.offline.registry import Registry, Vocabulary, registry, simple
from factledger.infrastructure.offline.rule_data import RuleDataError, parse, rules

OFFLINE = "factledger.infrastructure.offline"
MODULES = sorted(
    entry.name.removesuffix(".toml")
    for entry in resources.files(OFFLINE).joinpath("rules").iterdir()
    if entry.name.endswith(".toml")
)


def _registries() -> list[tuple[str, Registry]]:
    found = []
    for module in MODULES:
        code = importlib.import_module(f"{OFFLINE}.{module}")
        found += [(module, value) for value in vars(code).values() if isinstance(value, Registry)]
    return found


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
    code = importlib.import_module(f"{OFFLINE}.{module}")
    built = {value.name for value in vars(code).values() if isinstance(value, Registry)}
    assert written == built


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


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("id = 'x'\npattern = '('", "not a regular expression"),
        ("id = 'x'\npattern = 'a'\nwhen = ['nosuch(v)']", "unknown predicate"),
        ("id = 'x'\npattern = '(?P<v>a)'\ntemplate = '{v|nosuch}'", "unknown filter"),
        ("id = 'x'\npattern = 'a'\ntemplate = '{v}'", "names the group 'v'"),
        ("id = 'x'\npattern = 'a'\nhow = 'find'", "how must be"),
        ("id = 'x'\npattern = 'a'\nflags = 'q'", "flags are letters"),
        ("id = 'x'\npattern = 'a'\ncategory = '@nosuch(v)'", "unknown chooser"),
        ("pattern = 'a'", "needs a string id"),
    ],
)
def test_a_malformed_rule_is_an_error_naming_the_file_registry_and_rule(rule: str, message: str) -> None:
    with pytest.raises(RuleDataError, match=re.escape(message)) as raised:
        _registry(f"[[registries.r]]\n{rule}\n")
    assert str(raised.value).startswith("t.toml: [registries.r]")
