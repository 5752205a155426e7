"""The offline rules' data files (ADR 0040): the loader's checks, every shipped file read by its
module, and each pattern's own examples and near-misses, generated from the data."""

from __future__ import annotations

import importlib
import re
from importlib import resources

import pytest

from factledger.infrastructure.offline.rule_data import RuleDataError, parse, rules

OFFLINE = "factledger.infrastructure.offline"
MODULES = sorted(
    entry.name.removesuffix(".toml")
    for entry in resources.files(OFFLINE).joinpath("rules").iterdir()
    if entry.name.endswith(".toml")
)


@pytest.mark.parametrize(
    ("text", "read", "message"),
    [
        ("[patterns]\nA = 'x'\nA = 'y'\n", lambda data: data, r"bad\.toml: not valid TOML"),
        ("[lexicon]\nA = ['x']\n", lambda data: data, r"bad\.toml: unknown table \[lexicon\]"),
        ("patterns = 1\n", lambda data: data, r"bad\.toml: \[patterns\] must be a table"),
        ("[patterns]\nA = 1\n", lambda data: data.text("A"), r"bad\.toml: \[patterns\] A: expected a string, got int"),
        ("[patterns]\nA = 'x'\n", lambda data: data.text("B"), r"bad\.toml: \[patterns\] has no key 'B'"),
        ("[patterns]\nA = 'x{ROLE}'\n", lambda data: data.text("A"), r"\[patterns\] A: unknown sub-pattern \{ROLE\}"),
        ("[patterns]\nA = 'x{B}'\nB = '{A}'\n", lambda data: data.text("A"), r"\[patterns\] B: \{A\} names itself"),
        ("[patterns]\nA = '(x'\n", lambda data: data.regex("A"), r"\[patterns\] A: not a regular expression"),
        ("[words]\nW = ['x', 2]\n", lambda data: data.words("W"), r"\[words\] W: expected an array of strings"),
        ("[tables.T]\nx = 1\n", lambda data: data.mapping("T"), r"\[tables\] T: expected a table of strings"),
        ("[rows]\nR = [[1, 'x']]\n", lambda data: data.compiled_rows("R"), r"\[rows\] R: expected rows that start"),
        (
            "[examples]\nA = 'x'\n",
            lambda data: data.checks("examples"),
            r"\[examples\] A: expected an array of strings",
        ),
    ],
)
def test_a_malformed_data_file_is_an_error_naming_the_file_table_and_key(text, read, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RuleDataError, match=message):
        read(parse("bad.toml", text))


def test_named_sub_patterns_expand_and_quantifiers_stay() -> None:
    text = "[patterns]\nNUM = '\\d{1,3}'\nAGE = '(?P<v>{NUM})岁'\n"
    data = parse("ok.toml", text + "[rows]\nR = [['^{AGE}$', 'age'], ['{ROLE}的', 'role']]\n")
    assert data.text("AGE") == r"(?P<v>\d{1,3})岁"
    assert data.regex("AGE").fullmatch("30岁")
    [(age, slot), (role, _)] = data.compiled_rows("R", ROLE="老板|老婆")
    assert age.pattern == r"^(?P<v>\d{1,3})岁$" and slot == "age"
    assert role.pattern == "老板|老婆的"


@pytest.mark.parametrize("module", MODULES)
def test_every_data_file_is_read_by_its_module_and_each_entry_is_used(module: str) -> None:
    code = importlib.import_module(f"{OFFLINE}.{module}")  # reads and compiles its data on import
    source = resources.files(OFFLINE).joinpath(f"{module}.py").read_text(encoding="utf-8")
    data = rules(module)
    named = [key for kind in ("patterns", "words", "rows", "tables") for key in data.entries(kind)]
    used_as_value = [key for key in named if f'"{key}"' in source]
    read_as_pattern = set(re.findall(r"\bRE\.(_*[A-Z][A-Z0-9_]*)\b", source))  # RE = _DATA.patterns()
    pieces = str([data.entries(kind) for kind in ("patterns", "rows", "registries")])  # registries name pieces too
    used_as_piece = set(re.findall(r"\{(_*[A-Z][A-Z0-9_]*)\}", pieces))
    used = {*used_as_value, *read_as_pattern, *used_as_piece}
    assert [key for key in named if key not in used] == []
    assert all(hasattr(code, key) for key in used_as_value)
    # every RE.NAME the module reads is a pattern of its file, and compiles with its [flags]
    assert all(isinstance(getattr(code.RE, name), re.Pattern) for name in read_as_pattern)


def test_patterns_are_read_by_name_with_their_flags_and_a_missing_name_says_so() -> None:
    data = parse("ok.toml", "[patterns]\nA = 'ab'\nB = 'x{A}'\n[flags]\nA = 'IGNORECASE'\n")
    patterns = data.patterns()
    assert patterns.A.search("xAB") and patterns.A is patterns.A
    assert not patterns.B.search("xAB") and patterns.B.search("xab")  # as a piece, B's own flags
    with pytest.raises(AttributeError, match=r"ok\.toml: \[patterns\] has no key 'C'"):
        _ = patterns.C
    with pytest.raises(RuleDataError, match=r"\[flags\] A: unknown flag 'LOUD'"):
        parse("bad.toml", "[patterns]\nA = 'a'\n[flags]\nA = 'LOUD'\n").patterns()
    with pytest.raises(RuleDataError, match=r"\[flags\] Z: no such pattern"):
        parse("bad.toml", "[patterns]\nA = 'a'\n[flags]\nZ = 'IGNORECASE'\n").patterns()


def test_patterns_expand_the_pieces_a_module_passes_in_once() -> None:
    data = parse("ok.toml", "[patterns]\nA = '^(?:{ROLE})的'\nB = 'b'\n[flags]\nA = 'IGNORECASE'\n")
    patterns = data.patterns(ROLE="Mom|老婆")
    assert patterns.A.match("mom的") and not patterns.A.match("dad的") and patterns.B.match("b")
    with pytest.raises(AttributeError, match=r"unknown sub-pattern \{ROLE\}"):
        _ = data.patterns().A
    with pytest.raises(RuleDataError, match=r"\[patterns\] B: also passed in by the module"):
        data.patterns(B="x")


def _checks(kind: str) -> list[tuple[str, str, str]]:
    return [
        (module, name, text)
        for module in MODULES
        for name, texts in rules(module).checks(kind).items()
        for text in texts
    ]


def _pattern(module: str, name: str) -> re.Pattern[str]:
    code = importlib.import_module(f"{OFFLINE}.{module}")
    value = getattr(code, name) if hasattr(code, name) else getattr(code.RE, name)
    return value if isinstance(value, re.Pattern) else re.compile(value)


@pytest.mark.parametrize(("module", "name", "text"), _checks("examples"))
def test_each_pattern_finds_its_examples(module: str, name: str, text: str) -> None:
    assert _pattern(module, name).search(text), f"{module}.{name} should find {text!r}"


@pytest.mark.parametrize(("module", "name", "text"), _checks("near_misses"))
def test_each_pattern_leaves_its_near_misses(module: str, name: str, text: str) -> None:
    assert not _pattern(module, name).search(text), f"{module}.{name} should not find {text!r}"
