"""The slots' predicate rules (issue 27 item 2): each reads its own examples into its slot and value.

These rules render no template, so the generated test of ``examples`` has nothing to compare; their
``slot_examples`` say what the rule itself reads: ``[predicate, slot, value]``."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.infrastructure.offline import slots
from factledger.infrastructure.offline.registry import Registries, Registry, Vocabulary
from factledger.infrastructure.offline.rule_data import RuleDataError, parse
from factledger.infrastructure.offline.slots import slots_of

PREDICATES: tuple[Registry, ...] = tuple(value for value in slots.RULES.values() if value.name.endswith("_predicates"))
CASES = [
    (rule, example) for found in PREDICATES for rule in found.rules for example in rule.values.get("slot_examples", ())
]


def test_the_predicate_registries_are_found() -> None:
    assert {found.name for found in PREDICATES} == {"zh_predicates", "en_predicates"}
    assert len(CASES) > 50


def test_every_predicate_rule_has_a_slot_example() -> None:
    untested = [rule.id for found in PREDICATES for rule in found.rules if not rule.values.get("slot_examples")]
    assert untested == []


@pytest.mark.parametrize(("rule", "example"), CASES, ids=lambda v: getattr(v, "id", None))
def test_each_predicate_rule_reads_its_slot_examples(rule: Any, example: list[str]) -> None:
    predicate, slot, value = example
    fired = rule.fire(predicate)
    assert fired is not None, f"{rule.id} should fire on {predicate!r}"
    assert rule.render(rule.values["slot"], fired.match) == slot
    assert fired.match.group("v") == value


def test_a_slot_example_can_fail() -> None:
    rule = next(rule for found in PREDICATES for rule in found.rules if rule.id == "slots.zh.residence")
    fired = rule.fire("住在成都")
    assert fired is not None
    assert fired.match.group("v") != "杭州"
    assert rule.fire("喜欢成都") is None


def test_a_whole_fact_gives_the_slot_of_its_predicate() -> None:
    assert ("residence", "成都") in slots_of("用户住在成都")


def test_registries_are_read_by_name_and_a_name_a_dict_has_is_refused() -> None:
    words = Vocabulary()
    rules_ = Registries(parse("t.toml", '[[registries.work]]\nid = "t.work"\npattern = "x"\n'), words)
    assert rules_.work is rules_["work"]
    assert rules_.work.first("x") is not None
    with pytest.raises(AttributeError):
        _ = rules_.play
    with pytest.raises(RuleDataError, match=r"t\.toml"):
        Registries(parse("t.toml", '[[registries.items]]\nid = "t.items"\npattern = "x"\n'), words)
