"""A modified offline rule set, as data: a TOML file that adjusts an extractor's output.

Lets a user try a change to the rules (drop a kind of item, file something
under another category, change a confidence, add a pattern) and replay
history with it, without touching code. The file's name and content hash
become part of the extractor id, so events say which rule set decided.

    name = "work-places"
    [[drop]]            # remove items: kind, category and/or a regex on the text
    kind = "fact"
    category = "relationship"
    [[recategorise]]    # matching items (pattern, kind, from_category) get `category`
    pattern = "在.+工作"
    from_category = "location"
    category = "work"
    [[adjust]]          # set the confidence (facts) or strength (preferences)
    kind = "fact"
    category = "location"
    score = 0.7
    [[add]]             # a new rule on the message text; {name} fills from the match
    pattern = "我养了(?P<pet>\\w+)"
    fact = "用户养了{pet}"
    category = "other"
    score = 0.9
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from factledger.application.errors import ConfigError
from factledger.application.ports import Extractor, HearsWhenSaid, ReadsKnownPreferences
from factledger.domain.values import ExtractedFact, ExtractedPreference, Extraction, Turn

SECTIONS = {"drop", "recategorise", "adjust", "add"}


class RulesError(ConfigError):
    """The rules file cannot be used; the message says where and why."""


def _score(where: str, value: Any) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise RulesError(f"{where}: score must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= score <= 1.0:
        raise RulesError(f"{where}: score must be a number in [0, 1], got {value!r}")
    return score


def _regex(where: str, pattern: Any) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(str(pattern))
    except re.error as exc:
        raise RulesError(f"{where}: bad pattern {pattern!r}: {exc}") from None


@attrs.frozen
class _Match:
    kind: str | None
    category: str | None
    pattern: re.Pattern[str] | None

    def matches(self, kind: str, category: str, text: str) -> bool:
        return (
            (self.kind is None or self.kind == kind)
            and (self.category is None or self.category == category)
            and (self.pattern is None or bool(self.pattern.search(text)))
        )


class RuleOverrides:
    """Parsed rules file."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        try:
            raw = path.read_bytes()
            data = tomllib.loads(raw.decode("utf-8"))
        except FileNotFoundError:
            raise RulesError(f"rules file {path} does not exist") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise RulesError(f"rules file {path} is not valid TOML: {exc}") from None
        unknown = set(data) - SECTIONS - {"name"}
        if unknown:
            raise RulesError(f"rules file {path}: unknown sections {', '.join(sorted(unknown))}")
        self.name = str(data.get("name") or path.stem)
        self.digest = hashlib.sha256(raw).hexdigest()[:8]
        self.drop = [self._match(f"{path} [[drop]] #{i + 1}", r) for i, r in enumerate(data.get("drop", []))]
        self.recategorise = [
            (
                self._match(f"{path} [[recategorise]] #{i + 1}", r, category_key="from_category"),
                self._required(path, "recategorise", i, r, "category"),
            )
            for i, r in enumerate(data.get("recategorise", []))
        ]
        self.adjust = [
            (
                self._match(f"{path} [[adjust]] #{i + 1}", r),
                _score(f"{path} [[adjust]] #{i + 1}", self._required(path, "adjust", i, r, "score")),
            )
            for i, r in enumerate(data.get("adjust", []))
        ]
        self.add = []
        for i, r in enumerate(data.get("add", [])):
            where = f"{path} [[add]] #{i + 1}"
            pattern = _regex(where, self._required(path, "add", i, r, "pattern"))
            if ("fact" in r) == ("preference" in r):
                raise RulesError(f"{where}: give exactly one of 'fact' or 'preference'")
            template = str(r.get("fact", r.get("preference")))
            # Every {name} must be a group of the pattern, or the replay would stop half way.
            fields = {f for _, f, _, _ in string.Formatter().parse(template) if f}
            missing = fields - set(pattern.groupindex)  # type: ignore[union-attr]
            if missing:
                raise RulesError(f"{where}: {{{', '.join(sorted(missing))}}} is not a named group of the pattern")
            if "score" in r:
                _score(where, r["score"])
            self.add.append((pattern, r))

    @staticmethod
    def _required(path: Path, section: str, index: int, rule: dict[str, Any], key: str) -> Any:
        if key not in rule:
            raise RulesError(f"{path} [[{section}]] #{index + 1}: missing '{key}'")
        return rule[key]

    @staticmethod
    def _match(where: str, rule: dict[str, Any], category_key: str = "category") -> _Match:
        kind = rule.get("kind")
        if kind not in (None, "fact", "preference"):
            raise RulesError(f"{where}: kind must be 'fact' or 'preference', got {kind!r}")
        return _Match(kind, rule.get(category_key), _regex(where, rule.get("pattern")))


class OverriddenExtractor:
    """Any extractor, with a rules file applied to what it finds."""

    def __init__(self, inner: Extractor, rules: RuleOverrides) -> None:
        self.inner = inner
        self.rules = rules

    @property
    def extractor_id(self) -> str:
        return f"{self.inner.extractor_id}+rules:{self.rules.name}@{self.rules.digest}"

    def __getattr__(self, name: str) -> Any:
        # What the wrapped extractor offers beyond the port (e.g. ``estimate_cost``
        # for replay dry runs) stays available; the rules change only the result.
        if name in ("estimate_cost", "names_replaced_facts"):
            return getattr(self.inner, name)
        raise AttributeError(name)

    def extract(self, message: str, context: Sequence[Turn] = (), known_facts: Sequence[str] = ()) -> Extraction:
        return self._overridden(message, self.inner.extract(message, context, known_facts))

    def extract_knowing_preferences(
        self, message: str, context: Sequence[Turn], known_facts: Sequence[str], known_preferences: Sequence[str]
    ) -> Extraction:
        """``ReadsKnownPreferences`` whenever the wrapped extractor is."""
        if not isinstance(self.inner, ReadsKnownPreferences):
            return self.extract(message, context, known_facts)
        found = self.inner.extract_knowing_preferences(message, context, known_facts, known_preferences)
        return self._overridden(message, found)

    def extract_said_at(
        self,
        message: str,
        context: Sequence[Turn],
        known_facts: Sequence[str],
        known_preferences: Sequence[str],
        said_at: datetime | None,
    ) -> Extraction:
        """``HearsWhenSaid`` whenever the wrapped extractor is."""
        if not isinstance(self.inner, HearsWhenSaid):
            return self.extract_knowing_preferences(message, context, known_facts, known_preferences)
        found = self.inner.extract_said_at(message, context, known_facts, known_preferences, said_at)
        return self._overridden(message, found)

    def _overridden(self, message: str, found: Extraction) -> Extraction:
        facts = [self._fact(f) for f in found.facts if not self._dropped("fact", f.category, f.text)]
        prefs = [self._preference(p) for p in found.preferences if not self._dropped("preference", p.category, p.text)]
        for pattern, rule in self.rules.add:
            m = pattern.search(message)  # type: ignore[union-attr]
            if not m:
                continue
            values = {k: v for k, v in m.groupdict().items() if v is not None}
            if "fact" in rule:
                fact = ExtractedFact(
                    rule["fact"].format(**values), rule.get("category", "other"), rule.get("score", 0.9)
                )
                if all(f.text != fact.text for f in facts):
                    facts.append(fact)
            else:
                pref = ExtractedPreference(
                    rule["preference"].format(**values),
                    rule.get("category", "other"),
                    rule.get("score", 0.8),
                    f"用户说'{m.group(0)}'",
                )
                if all(p.text != pref.text for p in prefs):
                    prefs.append(pref)
        return attrs.evolve(found, extractor_id=self.extractor_id, facts=facts, preferences=prefs)

    def _dropped(self, kind: str, category: str, text: str) -> bool:
        return any(m.matches(kind, category, text) for m in self.rules.drop)

    def _fact(self, fact: ExtractedFact) -> ExtractedFact:
        for match, category in self.rules.recategorise:
            if match.matches("fact", fact.category, fact.text):
                fact = attrs.evolve(fact, category=category)
        for match, score in self.rules.adjust:
            if match.matches("fact", fact.category, fact.text):
                fact = attrs.evolve(fact, confidence=score)
        return fact

    def _preference(self, pref: ExtractedPreference) -> ExtractedPreference:
        for match, category in self.rules.recategorise:
            if match.matches("preference", pref.category, pref.text):
                pref = attrs.evolve(pref, category=category)
        for match, score in self.rules.adjust:
            if match.matches("preference", pref.category, pref.text):
                pref = attrs.evolve(pref, strength=score)
        return pref
