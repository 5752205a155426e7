"""JSON-ready means JSON-ready: every ``to_dict()`` and ``export()`` goes through plain ``json.dumps``.

The result types are discovered, not listed: every attrs class with a
``to_dict`` in the application package (and the HTTP layer's own), built
with a value of each field's type, so a new result cannot be forgotten.
Each must turn into JSON types only: times as ISO 8601 with their offset,
UUIDs as strings, tuples as lists, enums as their values.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import pkgutil
import types
import typing
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import attrs
import pytest
from scripted import ScriptedExtractor

import factledger.application
from factledger.application.service import LedgerService

# A time with an offset that is not UTC: the offset must survive.
AT = datetime(2025, 5, 4, 3, 2, 1, 123456, tzinfo=timezone(timedelta(hours=8)))
UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")
# What an ``Any`` field gets: the kinds of value events and rows really carry.
ANYTHING: dict[str, Any] = {"at": AT, "id": UUID, "evidence": ("a", "b"), "n": 1, "none": None}


def _packages() -> list[str]:
    names = [m.name for m in pkgutil.walk_packages(factledger.application.__path__, "factledger.application.")]
    return [*names, "factledger.entrypoints.http.ledgers"]


def result_types() -> list[type]:
    """Every attrs class defined in those modules that has a ``to_dict``."""
    found: dict[str, type] = {}
    for name in _packages():
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if (
                inspect.isclass(cls)
                and cls.__module__ == module.__name__
                and attrs.has(cls)
                and callable(getattr(cls, "to_dict", None))
            ):
                found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [found[k] for k in sorted(found)]


def example(kind: Any) -> Any:
    """A representative value of a type annotation (every optional part filled in)."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if kind is Any or kind is object:
        return dict(ANYTHING)
    if origin in (typing.Union, types.UnionType):
        return example(next(a for a in args if a is not type(None)))
    if origin is typing.Literal:
        return args[0]
    if origin is tuple:
        return (example(args[0]),) if len(args) == 2 and args[1] is Ellipsis else tuple(example(a) for a in args)
    if origin in (list, Sequence):
        return [example(args[0])]
    if origin in (frozenset, set):
        return origin({example(args[0])})
    if origin in (dict, Mapping):
        return {"key": example(args[1])}
    return _simple(kind)


def _simple(kind: Any) -> Any:
    simple: dict[Any, Any] = {str: "text", int: 2, float: 0.5, bool: True, datetime: AT, uuid.UUID: UUID}
    if kind in simple:
        return simple[kind]
    if inspect.isclass(kind) and issubclass(kind, enum.Enum):
        return next(iter(kind))
    if inspect.isclass(kind) and attrs.has(kind):
        return build(kind)
    raise AssertionError(f"the test cannot build a {kind!r}: teach example() about it")


def build(cls: type, **given: Any) -> Any:
    hints = typing.get_type_hints(cls)
    return cls(**{f.name: given.get(f.name, example(hints[f.name])) for f in attrs.fields(cls) if f.init})


KINDS = ("fact", "preference")


def dicts_of(cls: type) -> list[Any]:
    """What ``to_dict`` gives, once per kind of item where it depends on one
    (``Explanation.kind``, ``Observation.to_dict(kind)``)."""
    names = {f.name for f in attrs.fields(cls)}
    values = [build(cls, kind=kind) for kind in KINDS] if "kind" in names else [build(cls)]
    if "kind" in inspect.signature(cls.to_dict).parameters:
        return [v.to_dict(kind) for v in values for kind in KINDS]
    return [v.to_dict() for v in values]


def assert_plain_json(data: Any) -> None:
    """``json.dumps`` with no help takes it, and reading it back gives it unchanged (no tuples)."""
    text = json.dumps(data)
    assert json.loads(text) == data, "a value is not a JSON type (a tuple, a set?)"


RESULT_TYPES = result_types()


def test_the_results_are_discovered() -> None:
    names = {cls.__name__ for cls in RESULT_TYPES}
    assert {"Explanation", "Profile", "MemoryContext", "HistoryEntry", "ReplayReport", "LedgerInfo"} <= names
    assert {"Tombstone", "ApiKey", "RecallHit", "Outcome", "MoveReport", "Diff"} <= names


@pytest.mark.parametrize("cls", RESULT_TYPES, ids=lambda cls: cls.__qualname__)
def test_every_result_serialises_with_plain_json(cls: type) -> None:
    for data in dicts_of(cls):
        assert_plain_json(data)
        if datetime in _own_types(cls):  # its times are shown, with their offset
            assert AT.isoformat() in json.dumps(data), data


def _own_types(cls: type) -> list[Any]:
    """The types of a class's own fields, unions and containers opened."""
    seen: list[Any] = []

    def walk(kind: Any) -> None:
        args = typing.get_args(kind)
        for a in args:
            walk(a)
        if not args:
            seen.append(kind)

    for hint in typing.get_type_hints(cls).values():
        walk(hint)
    return seen


# ---- the same, on what a real ledger returns ----------------------------------------------------

SCRIPT = {
    "a": ([("用户住在杭州", "location", 0.8)], [("偏好简短的回复风格", "communication_style", 0.6, "短")]),
    "b": ([("用户住在杭州", "location", 0.8)], [("偏好简短的回复风格", "communication_style", 0.9, "很短")]),
    "c": ([("用户住在上海", "location", 0.9)], []),
}


def test_what_a_ledger_returns_serialises_with_plain_json(open_service: Callable[..., LedgerService]) -> None:
    service = open_service(extractor=ScriptedExtractor(SCRIPT))
    said = datetime(2025, 5, 4, 3, 2, 1, tzinfo=UTC)
    for i, message in enumerate("abc"):
        assert_plain_json(service.ingest("u", message, session_id="s", timestamp=said + timedelta(hours=i)).to_dict())
    service.restate("u", "用户的老板姓张", "relationship", actor="ops", at=said)
    results: list[Any] = [
        service.profile("u"),
        service.profile("u", as_of=said + timedelta(hours=1)),
        service.memory_context("u", "住在哪里"),
        service.history("u"),
        *service.recall("u", "住在哪里"),
    ]
    export = service.export("u")
    assert_plain_json(export)
    for item in [*export["facts"], *export["preferences"]]:
        results.append(service.why("u", item["id"]))
    for result in results:
        assert_plain_json(result.to_dict())
    life = next(f for f in export["facts"] if f["text"] == "用户住在杭州")
    assert life["observed"]["at"] == said.isoformat() and life["observed"]["message"]["at"] == said.isoformat()
    assert datetime.fromisoformat(life["invalidated"]["at"]).utcoffset() is not None
    assert [c["at"] for c in life["confirmations"]] == [(said + timedelta(hours=1)).isoformat()]


def test_a_recall_hit_has_its_json_keys_as_attributes(service: LedgerService) -> None:
    """``RecallHit`` answered ``.record.content`` where its JSON says ``content``."""
    service.ingest("u", "我在杭州工作", message_id="m1")
    hits = service.recall("u", "杭州", top_k=5)
    assert {h.type for h in hits} == {"fact", "message"}
    for hit in hits:
        as_json = hit.to_dict()
        for key in ("id", "type", "content", "category", "importance", "said_at", "metadata"):
            assert getattr(hit, key) == as_json[key], key
