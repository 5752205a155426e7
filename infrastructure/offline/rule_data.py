"""The offline rules' declarative parts, read from TOML files shipped in the package (ADR 0040).

Each rule module ``<module>.py`` keeps its functions and reads its lexicons, patterns and
tables from ``rules/<module>.toml`` with ``rules(<module>)``. A file has up to four kinds of
entry, each a top-level table keyed by the name the module gives the value:

- ``[patterns]``: regular expressions and sub-patterns (strings). ``{NAME}`` in a pattern is
  replaced by the pattern ``NAME`` of the same table (or one the module passes in, such as a
  pattern built from a lexicon), so a shared piece (``{_NUMBER}``, ``{ZH_ROLE_PATTERN}``) is
  written once. Quantifiers (``{2,6}``) are untouched: only upper-case names are placeholders.
- ``[words]``: word lists (arrays of strings).
- ``[rows]``: ordered rules and tables of rows (arrays of arrays, e.g. a pattern and the slot
  it names); placeholders are expanded in every string of a row.
- ``[tables.NAME]``: mappings (a surface word to its canonical form …).
- ``[[registries.NAME]]``: ordered named rules run by ``registry.py`` (each with its own examples).
- ``[flags]``: a pattern's flags by name (``_EN_PLAN = "IGNORECASE"``, ``|`` between several),
  used where it is compiled on its own (as a ``{NAME}`` inside another it takes that one's flags).
- ``[examples]`` / ``[near_misses]``: for a pattern ``NAME``, texts it must find / must not find
  (tests/test_rule_data.py checks every one against the module's compiled pattern).

A module reads its patterns through ``RE = rules(<module>).patterns()``: ``RE._ZH_PLAN`` is the
pattern ``_ZH_PLAN`` compiled with its flags, once, on first use (pieces the module builds itself
are passed in once: ``patterns(ZH_ROLE_PATTERN=ZH_ROLE_PATTERN)``) (a name the file lacks is an
``AttributeError`` naming the file; tests/test_rule_data.py checks every ``RE.NAME`` a module
writes against its file).

The files are read and the patterns compiled when a rule module is first imported, never by
``import factledger`` (the offline package is imported on first use). A malformed file is a
``RuleDataError`` naming the file, the table and the key.
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib import resources
from typing import Any

#: a placeholder for a named sub-pattern: ``{ROLE}``, ``{_NUMBER}`` (never a quantifier ``{2,6}``)
_PLACEHOLDER = re.compile(r"\{(_*[A-Z][A-Z0-9_]*)\}")
_KINDS = ("patterns", "flags", "words", "rows", "tables", "registries", "examples", "near_misses")


class RuleDataError(ValueError):
    """A rule data file that cannot be read as rules; the message names the file, table and key."""


class RuleData:
    """One module's data file, parsed; values are checked and expanded as they are asked for."""

    def __init__(self, file: str, document: dict[str, Any]) -> None:
        self.file = file
        unknown = sorted(set(document) - set(_KINDS))
        if unknown:
            raise RuleDataError(f"{file}: unknown table [{unknown[0]}] (expected one of {', '.join(_KINDS)})")
        self._document = document
        for kind in _KINDS:
            if not isinstance(document.get(kind, {}), dict):
                raise RuleDataError(f"{file}: [{kind}] must be a table")

    def _entry(self, kind: str, key: str) -> Any:
        table = self._document.get(kind, {})
        if key not in table:
            raise RuleDataError(f"{self.file}: [{kind}] has no key {key!r}")
        return table[key]

    def _fail(self, kind: str, key: str, expected: str, value: Any) -> RuleDataError:
        return RuleDataError(f"{self.file}: [{kind}] {key}: expected {expected}, got {type(value).__name__}")

    def expand(self, text: str, key: str, extra: dict[str, str], seen: tuple[str, ...] = ()) -> str:
        """``text`` (written under ``key``) with its ``{NAME}`` sub-patterns expanded."""

        def named(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in extra:
                return extra[name]
            if name in seen:
                raise RuleDataError(f"{self.file}: [patterns] {key}: {{{name}}} names itself")
            if name not in self._document.get("patterns", {}):
                raise RuleDataError(f"{self.file}: [patterns] {key}: unknown sub-pattern {{{name}}}")
            return self._text(name, extra, (*seen, name))

        return _PLACEHOLDER.sub(named, text)

    def text(self, key: str, **extra: str) -> str:
        """The pattern ``key`` of ``[patterns]``, its ``{NAME}``s expanded (``extra`` names the module's own)."""
        return self._text(key, extra, (key,))

    def _text(self, key: str, extra: dict[str, str], seen: tuple[str, ...]) -> str:
        value = self._entry("patterns", key)
        if not isinstance(value, str):
            raise self._fail("patterns", key, "a string", value)
        return self.expand(value, key, extra, seen)

    def regex(self, key: str, flags: int | re.RegexFlag | None = None, **extra: str) -> re.Pattern[str]:
        """The pattern ``key`` compiled (with its ``[flags]`` unless ``flags`` is given); an invalid
        expression names its file and key."""
        chosen = self.flags(key) if flags is None else flags
        return self.compiled(self.text(key, **extra), chosen, f"{self.file}: [patterns] {key}")

    def flags(self, key: str) -> re.RegexFlag:
        """The flags ``[flags]`` gives the pattern ``key`` (none when it names none)."""
        value = self._document.get("flags", {}).get(key, "")
        if not isinstance(value, str):
            raise self._fail("flags", key, "a string of flag names", value)
        found = re.RegexFlag(0)
        for name in filter(None, (part.strip() for part in value.split("|"))):
            if name not in _FLAG_NAMES:
                raise RuleDataError(f"{self.file}: [flags] {key}: unknown flag {name!r}")
            found |= re.RegexFlag[name]
        return found

    def patterns(self, **extra: str) -> Patterns:
        """Every pattern of ``[patterns]`` as an attribute, compiled on first use; ``extra`` names the
        module's own pieces (``ZH_ROLE_PATTERN=…``, built from a lexicon), as ``text`` takes them."""
        shadowed = sorted(set(extra) & set(self._document.get("patterns", {})))
        if shadowed:
            raise RuleDataError(f"{self.file}: [patterns] {shadowed[0]}: also passed in by the module")
        unknown = sorted(set(self._document.get("flags", {})) - set(self._document.get("patterns", {})))
        if unknown:
            raise RuleDataError(f"{self.file}: [flags] {unknown[0]}: no such pattern")
        for key in self._document.get("flags", {}):
            self.flags(key)  # a misspelt flag fails at import, not at first use
        return Patterns(self, extra)

    def compiled(self, text: str, flags: int | re.RegexFlag, where: str) -> re.Pattern[str]:
        """``text`` compiled; an invalid expression is an error naming ``where`` (the file, table and key)."""
        try:
            return re.compile(text, flags)
        except re.error as error:
            raise RuleDataError(f"{where}: not a regular expression ({error})") from None

    def entries(self, kind: str) -> dict[str, Any]:
        """The raw entries of one table (``patterns``, ``words`` …), as written, by name."""
        return dict(self._document.get(kind, {}))

    def checks(self, kind: str) -> dict[str, tuple[str, ...]]:
        """``[examples]`` or ``[near_misses]``: pattern name -> texts."""
        found = self._document.get(kind, {})
        for key, texts in found.items():
            if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
                raise self._fail(kind, key, "an array of strings", texts)
        return {key: tuple(texts) for key, texts in found.items()}

    def words(self, key: str) -> tuple[str, ...]:
        """The word list ``key`` of ``[words]``, in its order."""
        value = self._entry("words", key)
        if not isinstance(value, list) or not all(isinstance(word, str) for word in value):
            raise self._fail("words", key, "an array of strings", value)
        return tuple(value)

    def mapping(self, key: str) -> dict[str, str]:
        """The table ``[tables.key]``: strings to strings, in its order."""
        value = self._entry("tables", key)
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise self._fail("tables", key, "a table of strings", value)
        return dict(value)

    def table(self, key: str) -> dict[str, Any]:
        """The table ``[tables.key]``, arrays as tuples."""
        value = self._entry("tables", key)
        if not isinstance(value, dict):
            raise self._fail("tables", key, "a table", value)
        return {name: _frozen(item) for name, item in value.items()}

    def rows(self, key: str, **extra: str) -> tuple[Any, ...]:
        """The rows ``key`` of ``[rows]`` (arrays as tuples), ``{NAME}`` expanded in every string."""
        value = self._entry("rows", key)
        if not isinstance(value, list):
            raise self._fail("rows", key, "an array", value)
        return tuple(_frozen(self._expanded(row, key, extra)) for row in value)

    def _expanded(self, value: Any, key: str, extra: dict[str, str]) -> Any:
        if isinstance(value, str):
            return self.expand(value, key, extra)
        if isinstance(value, list):
            return [self._expanded(item, key, extra) for item in value]
        return value

    def compiled_rows(self, key: str, flags: int | re.RegexFlag = 0, **extra: str) -> tuple[tuple[Any, ...], ...]:
        """The rows ``key``, each ``[pattern, output…]``, with the pattern compiled."""
        found = []
        for row in self.rows(key, **extra):
            if not isinstance(row, tuple) or not row or not isinstance(row[0], str):
                raise self._fail("rows", key, "rows that start with a pattern", row)
            found.append((self.compiled(row[0], flags, f"{self.file}: [rows] {key}"), *row[1:]))
        return tuple(found)


_FLAG_NAMES = frozenset({"IGNORECASE", "MULTILINE", "DOTALL", "VERBOSE", "ASCII"})


class Patterns:
    """One data file's patterns by name, ``RE._ZH_PLAN``: each compiled with its flags when first
    asked for, then kept as an ordinary attribute (so later reads cost an attribute lookup)."""

    def __init__(self, data: RuleData, extra: dict[str, str]) -> None:
        self._data = data
        self._extra = extra

    def __getattr__(self, name: str) -> re.Pattern[str]:
        if name.startswith("__") or name in ("_data", "_extra"):
            raise AttributeError(name)
        try:
            pattern = self._data.regex(name, None, **self._extra)
        except RuleDataError as error:
            raise AttributeError(str(error)) from None
        setattr(self, name, pattern)
        return pattern


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return {name: _frozen(item) for name, item in value.items()}
    return value


def parse(file: str, text: str) -> RuleData:
    """``text`` as the data file ``file``; a TOML error names the file."""
    try:
        return RuleData(file, tomllib.loads(text))
    except tomllib.TOMLDecodeError as error:
        raise RuleDataError(f"{file}: not valid TOML ({error})") from None


@functools.cache
def rules(module: str) -> RuleData:
    """The data of the rule module ``module`` (``rules/<module>.toml``), read once per process."""
    place = resources.files(__package__).joinpath("rules", f"{module}.toml")
    return parse(f"infrastructure/offline/rules/{module}.toml", place.read_text(encoding="utf-8"))
