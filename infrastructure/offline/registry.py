"""Registries of named rules: ordered rules read from a module's data file, run by one small engine.

Issue 27 item 1: a stage of the offline extractor is a registry, not a long function. A rule is data
in ``rules/<module>.toml``::

    [[registries.work]]
    id = "rules_zh_facts.work.position"          # recorded in the trace when the rule fires
    pattern = '^在(?P<v>.+?)(?P<verb>做|当)(?P<w>.+?)$'
    when = ["job(w) | organisation(v)"]          # each line must hold; " | " is or, "!" is not
    reject = { v = '^(?:什么|啥)' }               # a group that must not match (require: must match)
    template = "用户在{v|tidy}{verb}{w|tidy}"    # groups, each through named filters; a missing group is ""
    category = "work"                            # or "@chooser(v)": a named function of a group
    examples = [["在腾讯做产品经理", "用户在腾讯做产品经理"]]
    near_misses = ["在家做饭"]

Python keeps only the named predicates, filters, readers and choosers (a ``Vocabulary`` the module
passes in), which may look at a ``context`` mapping the caller gives (the message, the known facts …):
a reader is a filter that does (``{v|known_value}``: the known fact's value for ``v``). ``first`` gives
the first rule that fires on a text, ``every`` each rule that fires once, ``findall`` every place of
the text where a rule fires (each rule's every match, in the order they stand in the text), for a
stage that walks a text against the known facts rather than reading it once. Patterns are compiled
once, when the registry is first used; ``{NAME}`` sub-patterns come from ``[patterns]``. Every other
key of a rule (``slot``, ``kind`` …) is kept in ``Rule.values`` for the caller.

A rule that compares two statements also names a pattern for the other one::

    [[registries.relation]]
    id = "judge.renamed"
    pattern = '^偏好被称呼为(?P<b>.+)$'
    known = '^偏好被称呼为(?P<b>.+)$'             # matched (as ``how``) against context["known"]
    when = ["!same(b|canonical, known.b|canonical)"]
    template = "update: called {known.b} → {b}"

``known`` is tried on each text of ``context["known"]`` (a sequence) in turn; the rule fires with the
first that matches and lets the conditions hold. Conditions and the template read that match's groups
as ``known.NAME``; a test of two or more arguments compares them (``same``: equal once through their
filters; a vocabulary may add ``comparisons``, of as many arguments as their functions take). A template's ``{known.NAME}`` that no group of ``known`` names
is left for the caller to fill.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NoReturn

import attrs

from factledger.infrastructure.offline.rule_data import RuleData, RuleDataError

Context = Mapping[str, Any]
Predicate = Callable[[str, Context], bool]
Filter = Callable[[str], str]
Reader = Callable[[str, Context], str]
Chooser = Callable[[str, Context], str]
Comparison = Callable[..., bool]
#: a test of a condition line, with the values of its arguments (one: a predicate; more: a comparison)
Test = Callable[[tuple[str, ...], Context], bool]

#: a condition's test, ``[!]name(arg|filter…[, arg|filter…])`` (an arg a group or ``known.group``), or a
#: category's chooser, ``name(group)``
_TEST = re.compile(r"^(?P<neg>!)?(?P<name>[a-z_][a-z0-9_]*)\((?P<args>[^()]*)\)$")
_ARG = re.compile(r"^(?P<group>(?:known\.)?[a-z_][a-z0-9_]*)?(?P<filters>(?:\|[a-z_][a-z0-9_]*)*)$")
_SLOT = re.compile(r"\{(?P<group>(?:known\.)?[a-z_][a-z0-9_]*)(?P<filters>(?:\|[a-z_][a-z0-9_]*)*)\}")
_SAME: dict[str, Comparison] = {"same": lambda a, b: a == b}
_RULE_KEYS = {"id", "pattern", "known", "how", "flags", "when", "reject", "require", "template", "category"}
_CHECK_KEYS = {"examples", "near_misses"}
_FLAGS = {"i": re.IGNORECASE, "s": re.DOTALL, "x": re.VERBOSE}


@attrs.frozen
class Vocabulary:
    """The named Python pieces a module's rules may use: predicates, filters, readers (filters that
    also read the context), choosers and comparisons of two values (besides ``same``)."""

    predicates: Mapping[str, Predicate] = attrs.field(factory=dict)
    filters: Mapping[str, Filter] = attrs.field(factory=dict)
    choosers: Mapping[str, Chooser] = attrs.field(factory=dict)
    readers: Mapping[str, Reader] = attrs.field(factory=dict)
    comparisons: Mapping[str, Comparison] = attrs.field(factory=dict)

    def extended(self, **more: Mapping[str, Any]) -> Vocabulary:
        """This vocabulary with more entries (``predicates=…``, ``filters=…``, ``readers=…``, ``choosers=…``)."""
        kinds = attrs.fields_dict(Vocabulary)
        return Vocabulary(**{kind: {**getattr(self, kind), **more.get(kind, {})} for kind in kinds})

    def changes(self, names: str) -> tuple[Reader, ...] | None:
        """The filters and readers named in ``names`` ("|a|b"), each as a reader; None when one is unknown."""
        found: list[Reader] = []
        for name in filter(None, names.split("|")):
            if name in self.readers:
                found.append(self.readers[name])
            elif name in self.filters:
                found.append(_ignoring_context(self.filters[name]))
            else:
                return None
        return tuple(found)


def _ignoring_context(change: Filter) -> Reader:
    return lambda value, context: change(value)


def _changed(value: str, changes: tuple[Reader, ...], context: Context) -> str:
    for change in changes:
        value = change(value, context)
    return value


def simple(test: Callable[[str], bool]) -> Predicate:
    """A predicate of the value alone, for the vocabulary."""
    return lambda value, context: test(value)


#: an argument of a test: the group it names ("": the whole match; "known.v": the known fact's) and its filters
_Arg = tuple[str, tuple[Reader, ...]]


@attrs.frozen
class Found:
    """What a rule's patterns found: its match of the text and, for a rule with ``known``, of a known fact."""

    match: re.Match[str]
    known: re.Match[str] | None = None

    def group(self, name: str) -> str:
        """A group of the match ("": the whole match), or ``known.NAME`` of the known fact's."""
        if name.startswith("known."):
            return (self.known.group(name[6:]) or "") if self.known else ""
        return (self.match.group(name) or "") if name else self.match.group(0)


@attrs.frozen
class Condition:
    """One ``when`` line: alternatives, each ``[!]name(arg|filter…)`` (a comparison has two or more);
    holds when any alternative holds. ``name()`` tests the whole match."""

    alternatives: tuple[tuple[bool, Test, tuple[_Arg, ...]], ...]

    def holds(self, found: Found, context: Context) -> bool:
        for negated, test, args in self.alternatives:
            values = tuple(_changed(found.group(group), changes, context) for group, changes in args)
            if test(values, context) != negated:
                return True
        return False


@attrs.frozen
class Rule:
    """One named rule: a pattern, its conditions, its output and its examples."""

    id: str
    pattern: re.Pattern[str]
    known: re.Pattern[str] | None
    how: str
    conditions: tuple[Condition, ...]
    rejects: tuple[tuple[str, re.Pattern[str]], ...]
    requires: tuple[tuple[str, re.Pattern[str]], ...]
    template: str
    category: str
    values: Mapping[str, Any]
    examples: tuple[tuple[Any, ...], ...]
    near_misses: tuple[str, ...]
    vocabulary: Vocabulary = attrs.field(repr=False)

    def fire(self, text: str, context: Context | None = None) -> Fired | None:
        """This rule's finding in ``text``, or None when its pattern or a condition fails."""
        found = getattr(self.pattern, self.how)(text)
        return None if found is None else self._fired(found, context or {})

    def fire_all(self, text: str, context: Context | None = None) -> Iterator[Fired]:
        """This rule's findings at every place of ``text`` (each match of its pattern, searched as
        ``re.finditer`` does whatever its ``how``) where its conditions hold, first to last."""
        for found in self.pattern.finditer(text):
            fired = self._fired(found, context or {})
            if fired is not None:
                yield fired

    def _fired(self, match: re.Match[str], context: Context) -> Fired | None:
        if self.known is None:
            return self._fired_with(Found(match), context)
        knowns = (getattr(self.known, self.how)(fact) for fact in context.get("known") or ())
        return next((f for k in knowns if k and (f := self._fired_with(Found(match, k), context))), None)

    def _fired_with(self, found: Found, context: Context) -> Fired | None:
        if not self._allowed(found, context):
            return None
        text = self._rendered(self.template, found, context)
        return Fired(self, found.match, text, self._category(found.match, context), found.known)

    def _allowed(self, found: Found, context: Context) -> bool:
        if any(pattern.search(found.group(group)) for group, pattern in self.rejects):
            return False
        if not all(pattern.search(found.group(group)) for group, pattern in self.requires):
            return False
        return all(condition.holds(found, context) for condition in self.conditions)

    def render(self, template: str, found: re.Match[str], context: Context | None = None) -> str:
        """``template`` with each ``{group|filter…}`` replaced by the group, through its filters
        and readers (which also read ``context``)."""
        return self._rendered(template, Found(found), context or {})

    def _rendered(self, template: str, found: Found, context: Context) -> str:
        def slot(piece: re.Match[str]) -> str:
            if piece.group("group").startswith("known.") and piece.group("group") not in _filled_by(self):
                return piece.group(0)  # {known.NAME} that no known group names: the caller's to fill
            changes = self.vocabulary.changes(piece.group("filters")) or ()
            return _changed(found.group(piece.group("group")), changes, context)

        return _SLOT.sub(slot, template)

    def _category(self, found: re.Match[str], context: Context) -> str:
        call = _TEST.match(self.category[1:]) if self.category.startswith("@") else None
        if call is None:
            return self.category
        return self.vocabulary.choosers[call.group("name")](found.group(call.group("args")) or "", context)


@attrs.frozen
class Fired:
    """A rule that fired: the rule, its match, its rendered output and category (and its match of the
    known fact, for a rule with ``known``)."""

    rule: Rule
    match: re.Match[str]
    text: str
    category: str
    known: re.Match[str] | None = None


@attrs.frozen
class Registry:
    """An ordered registry of named rules; the first that fires decides, unless the caller asks for all."""

    name: str
    rules: tuple[Rule, ...]

    def first(self, text: str, context: Context | None = None) -> Fired | None:
        """The first rule, in order, that fires on ``text``."""
        return next(self.every(text, context), None)

    def every(self, text: str, context: Context | None = None) -> Iterator[Fired]:
        """Every rule that fires on ``text``, in order."""
        for rule in self.rules:
            fired = rule.fire(text, context)
            if fired is not None:
                yield fired

    def findall(self, text: str, context: Context | None = None) -> list[Fired]:
        """Every place of ``text`` where a rule fires: each rule's every match (``Rule.fire_all``),
        ordered by where it starts, then by the rules' order; a walk over a text in data."""
        found = [
            (fired.match.start(), n, fired)
            for n, rule in enumerate(self.rules)
            for fired in rule.fire_all(text, context)
        ]
        return [fired for _, _, fired in sorted(found, key=lambda entry: entry[:2])]


def registry(data: RuleData, name: str, vocabulary: Vocabulary, **extra: str) -> Registry:
    """The registry ``[[registries.name]]`` of ``data``, compiled and checked against ``vocabulary``."""
    rows = data.entries("registries").get(name)
    if not isinstance(rows, list) or not rows:
        raise RuleDataError(f"{data.file}: [registries] has no rules named {name!r}")
    return Registry(name, tuple(_rule(data, name, row, vocabulary, extra) for row in rows))


class Registries(dict[str, Registry]):
    """Every registry of a module's data file by name, ``RULES.work`` for ``[[registries.work]]``
    (as ``RE`` reads its patterns), each built and checked when the module is imported."""

    def __init__(self, data: RuleData, vocabulary: Vocabulary, **extra: str) -> None:
        super().__init__((name, registry(data, name, vocabulary, **extra)) for name in data.entries("registries"))
        if any(hasattr(dict, name) for name in self):  # RULES.items would be the dict's, not the rules
            raise RuleDataError(f"{data.file}: a registry named as a dict's attribute ({', '.join(self)})")

    def __getattr__(self, name: str) -> Registry:
        if name not in self:
            raise AttributeError(f"no registry named {name!r}")
        return self[name]


def _rule(data: RuleData, name: str, row: Any, vocabulary: Vocabulary, extra: dict[str, str]) -> Rule:
    where = f"{data.file}: [registries.{name}] {row.get('id', '?') if isinstance(row, dict) else '?'}"
    if not isinstance(row, dict) or not isinstance(row.get("id"), str) or not isinstance(row.get("pattern"), str):
        raise RuleDataError(f"{where}: a rule needs a string id and pattern")
    how = row.get("how", "match")
    if how not in ("match", "search", "fullmatch"):
        raise RuleDataError(f"{where}: how must be match, search or fullmatch, not {how!r}")
    if any(flag not in _FLAGS for flag in row.get("flags", "")):
        _fail(where, f"flags are letters of {''.join(_FLAGS)}, not {row['flags']!r}")
    flags = 0
    for flag in row.get("flags", ""):
        flags |= _FLAGS[flag]
    if not isinstance(row.get("known", ""), str):
        _fail(where, "known must be a pattern")
    rule = Rule(
        id=row["id"],
        pattern=data.compiled(data.expand(row["pattern"], name, extra), flags, where),
        known=data.compiled(data.expand(row["known"], name, extra), flags, where) if "known" in row else None,
        how=how,
        conditions=tuple(_condition(where, line, vocabulary) for line in row.get("when", [])),
        rejects=_group_patterns(data, where, name, row.get("reject", {}), extra),
        requires=_group_patterns(data, where, name, row.get("require", {}), extra),
        template=row.get("template", ""),
        category=row.get("category", ""),
        values={key: value for key, value in row.items() if key not in _RULE_KEYS | _CHECK_KEYS},
        examples=tuple(tuple(example) for example in row.get("examples", [])),
        near_misses=tuple(row.get("near_misses", [])),
        vocabulary=vocabulary,
    )
    _check_names(where, rule)
    return rule


def _fail(where: str, why: str) -> NoReturn:
    raise RuleDataError(f"{where}: {why}")


def _condition(where: str, line: Any, vocabulary: Vocabulary) -> Condition:
    if not isinstance(line, str):
        _fail(where, f"a when line must be a string, not {line!r}")
    return Condition(tuple(_alternative(where, piece.strip(), vocabulary) for piece in line.split(" | ")))


def _alternative(where: str, piece: str, vocabulary: Vocabulary) -> tuple[bool, Test, tuple[_Arg, ...]]:
    call = _TEST.match(piece)
    args = [_ARG.match(arg.strip()) for arg in call.group("args").split(",")] if call else []
    name = call.group("name") if call else ""
    tests = vocabulary.predicates if len(args) == 1 else {**_SAME, **vocabulary.comparisons}
    if call is None or None in args or name not in tests or not (len(args) == 1 or _takes(tests[name], len(args))):
        _fail(where, f"unknown predicate or malformed test {piece!r}")
    parsed: list[_Arg] = []
    for arg in filter(None, args):
        changes = vocabulary.changes(arg.group("filters"))
        if changes is None:
            _fail(where, f"unknown filter in {piece!r}")
        parsed.append((arg.group("group") or "", changes))
    if len(args) == 1:
        predicate = vocabulary.predicates[name]
        return bool(call.group("neg")), lambda values, context: predicate(values[0], context), tuple(parsed)
    comparison = tests[name]
    return bool(call.group("neg")), lambda values, context: comparison(*values), tuple(parsed)


def _takes(test: Callable[..., object], count: int) -> bool:
    """Whether a comparison compares ``count`` values (a builtin that does not say: two)."""
    try:
        inspect.signature(test).bind(*range(count))
    except TypeError:
        return False
    except ValueError:
        return count == 2
    return True


def _group_patterns(
    data: RuleData, where: str, name: str, table: Any, extra: dict[str, str]
) -> tuple[tuple[str, re.Pattern[str]], ...]:
    if not isinstance(table, dict) or not all(isinstance(value, str) for value in table.values()):
        _fail(where, "reject and require must map group names to patterns")
    return tuple((group, data.compiled(data.expand(text, name, extra), 0, where)) for group, text in table.items())


def _filled_by(rule: Rule) -> set[str]:
    """The names a rule's matches fill: its pattern's groups, and ``known.NAME`` for its known pattern's."""
    return set(rule.pattern.groupindex) | {f"known.{group}" for group in getattr(rule.known, "groupindex", ())}


def _check_names(where: str, rule: Rule) -> None:
    """Every group, filter and chooser a rule names exists, so a typo fails when the data is read."""
    groups = _filled_by(rule)
    # a template's {known.NAME} that no group of ``known`` names is the caller's to fill
    named = [slot.group("group") for slot in _SLOT.finditer(rule.template) if slot.group(1)[:6] != "known."]
    named += [group for group, _ in (*rule.rejects, *rule.requires)]
    named += [group for condition in rule.conditions for _, _, args in condition.alternatives for group, _ in args]
    filters = [slot.group("filters") for slot in _SLOT.finditer(rule.template)]
    if rule.category.startswith("@"):
        call = _TEST.match(rule.category[1:])
        if call is None or call.group("neg") or call.group("name") not in rule.vocabulary.choosers:
            _fail(where, f"unknown chooser {rule.category!r}")
        named.append(call.group("args"))
    for group in filter(None, named):
        if group not in groups:
            _fail(where, f"names the group {group!r}, which its pattern does not have")
    for names in filters:
        if rule.vocabulary.changes(names) is None:
            _fail(where, f"unknown filter in {names!r}")
