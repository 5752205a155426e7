"""Reading what an LLM answered, whatever shape it came in.

Models wrap JSON in code fences or prose, leave trailing commas, answer one
object where an array was asked, invent categories, write numbers as strings
or out of range, and sometimes answer nothing usable at all. Everything here
turns such answers into clean items or raises ``UnusableOutput`` (which the
extractor retries, then reports as an ``ExtractionFailure``); nothing crashes.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, NamedTuple

from factledger.domain.values import (
    MAX_TEXT_LENGTH,
    ExtractedFact,
    ExtractedPreference,
    Relation,
    storable_text,
    unit_interval,
)

# More items than this from one message is a runaway answer, not a user.
MAX_ITEMS = 20

_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_NULL_WORDS = {"", "null", "none", "无", "没有", "n/a", "na"}


class UnusableOutput(ValueError):
    """The answer holds no JSON factledger can read."""


def _closing(text: str, start: int) -> int | None:
    """Index just past the bracket that closes ``text[start]``, skipping strings."""
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _loads(candidate: str) -> Any:
    """json.loads, then with trailing commas removed, then Python-literal syntax."""
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        pass
    repaired = _TRAILING_COMMA.sub(r"\1", candidate)
    try:
        return json.loads(repaired)
    except json.JSONDecodeError:
        pass
    # Single quotes, True/False/None: a Python literal. null/true/false become
    # Python's names first; strings are rarely affected and only in this last try.
    pythonic = re.sub(r"\bnull\b", "None", repaired)
    pythonic = re.sub(r"\btrue\b", "True", pythonic)
    pythonic = re.sub(r"\bfalse\b", "False", pythonic)
    try:
        value = ast.literal_eval(pythonic)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise UnusableOutput("not JSON") from None
    if not isinstance(value, (list, dict)):
        raise UnusableOutput("not a JSON array or object")
    return value


def find_json(text: str) -> Any:
    """The first JSON array or object in ``text`` (inside code fences or prose)."""
    if not isinstance(text, str) or not text.strip():
        raise UnusableOutput("empty answer")
    # Fenced blocks first: a model that fences its answer means the fence.
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        stripped = source.strip()
        if stripped[:1] in ("[", "{"):
            try:
                return _loads(stripped)
            except UnusableOutput:
                pass
        tries = 0
        for match in re.finditer(r"[\[{]", source):
            end = _closing(source, match.start())
            if end is None:
                continue
            try:
                return _loads(source[match.start() : end])
            except UnusableOutput:
                tries += 1
                if tries > 20:
                    break
    raise UnusableOutput("no JSON array or object in the answer")


def _as_items(value: Any, keys: tuple[str, ...]) -> list[Any]:
    """A list of items: unwrap ``{"facts": [...]}``, wrap a single object."""
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        for key in keys:
            items = value.get(key)
            if isinstance(items, list):
                return items
        return [value]
    raise UnusableOutput(f"expected a JSON array, got {type(value).__name__}")


def _text(item: Any, keys: tuple[str, ...]) -> str | None:
    """The item's text, whitespace folded and bounded; None when empty."""
    # A bare string in the array is the text itself.
    value = next((item[k] for k in keys if item.get(k) not in (None, "")), None) if isinstance(item, dict) else item
    if value is None or isinstance(value, (dict, list, bool)):
        return None
    text = " ".join(storable_text(str(value)).split())
    return text[:MAX_TEXT_LENGTH] or None


def _number(value: Any, default: float = 0.5) -> float:
    """A number in [0, 1] from 0.9, "0.9", "90%" or 90 (clamped)."""
    if value is None or isinstance(value, bool):
        return default
    if isinstance(value, str):
        text = value.strip()
        if text.endswith("%"):
            try:
                return unit_interval(float(text[:-1]) / 100)
            except ValueError:
                return default
        try:
            value = float(text)
        except ValueError:
            return default
    return unit_interval(value)


def _optional_text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, bool)):
        return None
    if isinstance(value, list):
        value = "; ".join(str(v) for v in value if v)
    text = " ".join(storable_text(str(value)).split())
    return None if text.lower() in _NULL_WORDS else text[:MAX_TEXT_LENGTH]


FACT_TEXT_KEYS = ("fact", "text", "content", "事实")


def named_facts(value: Any) -> list[str]:
    """The known facts a ``conflicts_with`` names, in order: a list (what the combined prompt asks
    for), or one text (what the seed prompt asks for, and what combined answers recorded before the
    list was asked for hold); null words, empty entries and repeats name nothing more."""
    return named_known(value, FACT_TEXT_KEYS)


def named_known(value: Any, keys: tuple[str, ...]) -> list[str]:
    """The known items a list of names names (``conflicts_with``, ``retracted``, ``replaces``): a
    list, one text, or items as objects with their text under ``keys``; absent or null names none."""
    items = value if isinstance(value, list) else [value]
    names = [_text(i, keys) if isinstance(i, dict) else _optional_text(i) for i in items]
    return list(dict.fromkeys(n for n in names if n and n.lower() not in _NULL_WORDS))


PREF_TEXT_KEYS = ("preference", "text", "content", "偏好")


# Keys a model uses to say an item is a plan, a wish, a question or someone else's: not the user's fact now.
HYPOTHETICAL_KEYS = ("hypothetical", "is_hypothetical", "plan", "is_plan")


def _marked_hypothetical(data: dict[str, Any]) -> bool:
    return any(data.get(key) is True or str(data.get(key)).lower() == "true" for key in HYPOTHETICAL_KEYS)


def facts_from(items: list[Any]) -> list[ExtractedFact]:
    """The facts of an answer's items; an item marked hypothetical (a plan, an "if") is left out."""
    facts: list[ExtractedFact] = []
    for item in items:
        text = _text(item, FACT_TEXT_KEYS)
        if text is None:
            continue
        data = item if isinstance(item, dict) else {}
        if _marked_hypothetical(data):
            continue
        names = named_facts(data.get("conflicts_with"))
        facts.append(
            ExtractedFact(
                text,
                category=data.get("category", "other"),  # unknown → other (domain)
                confidence=_number(data.get("confidence")),
                conflicts_with=names[0] if names else None,
                also_conflicts_with=names[1:],
            )
        )
    return facts[:MAX_ITEMS]


def preferences_from(items: list[Any]) -> list[ExtractedPreference]:
    prefs: list[ExtractedPreference] = []
    for item in items:
        text = _text(item, PREF_TEXT_KEYS)
        if text is None:
            continue
        data = item if isinstance(item, dict) else {}
        prefs.append(
            ExtractedPreference(
                text,
                category=data.get("category", "other"),
                strength=_number(data.get("strength")),
                evidence=_optional_text(data.get("evidence")) or "",
                replaces=named_known(data.get("replaces"), PREF_TEXT_KEYS),
            )
        )
    return prefs[:MAX_ITEMS]


def parse_facts(text: str) -> list[ExtractedFact]:
    """The facts of a FACT_PROMPT answer (an array, ideally)."""
    return facts_from(_as_items(find_json(text), ("facts", "items", "results", "data")))


def parse_preferences(text: str) -> list[ExtractedPreference]:
    """The preferences of a PREF_PROMPT answer (an array, ideally)."""
    return preferences_from(_as_items(find_json(text), ("preferences", "items", "results", "data")))


class CombinedAnswer(NamedTuple):
    """What a combined answer says: new facts, preferences, and the known facts it retracts."""

    facts: list[ExtractedFact]
    preferences: list[ExtractedPreference]
    retracted: list[str]


def parse_combined(text: str) -> tuple[list[ExtractedFact], list[ExtractedPreference]]:
    """Facts and preferences of a combined answer (``parse_combined_answer`` without what it retracts)."""
    answer = parse_combined_answer(text)
    return answer.facts, answer.preferences


def parse_combined_answer(text: str) -> CombinedAnswer:
    """A combined answer: ``{"facts": [...], "preferences": [...], "retracted": [...]}``.

    ``retracted`` may be absent or null (none), one text, or a list of texts or
    of objects with the fact's text. A bare array (or a lone item) is sorted by
    its keys: items with a ``preference`` key are preferences, the rest facts.
    """
    value = find_json(text)
    if isinstance(value, dict) and ("facts" in value or "preferences" in value or "retracted" in value):
        facts = value.get("facts") or []
        prefs = value.get("preferences") or []
        facts = facts if isinstance(facts, list) else [facts]
        prefs = prefs if isinstance(prefs, list) else [prefs]
        retracted = named_known(value.get("retracted"), FACT_TEXT_KEYS)[:MAX_ITEMS]
        return CombinedAnswer(facts_from(facts), preferences_from(prefs), retracted)
    items = _as_items(value, ("items", "results", "data"))
    prefs = [i for i in items if isinstance(i, dict) and "preference" in i]
    facts = [i for i in items if not (isinstance(i, dict) and "preference" in i)]
    return CombinedAnswer(facts_from(facts), preferences_from(prefs), [])


# The spec's _check_relation order, then the same words in Chinese for models
# that answer in the prompt's language.
_RELATION_WORDS: tuple[tuple[Relation, tuple[str, ...]], ...] = (
    (Relation.UPDATE, ("update",)),
    (Relation.CONFLICT, ("conflict",)),
    (Relation.DUPLICATE, ("duplicate",)),
)
_RELATION_WORDS_ZH: tuple[tuple[Relation, tuple[str, ...]], ...] = (
    (Relation.UPDATE, ("更新",)),
    (Relation.CONFLICT, ("冲突", "矛盾")),
    (Relation.DUPLICATE, ("重复",)),
)


def parse_relation(answer: str) -> Relation:
    """The spec's check order on the lower-cased answer: update, conflict, duplicate, else different."""
    text = (answer or "").strip().lower()
    for table in (_RELATION_WORDS, _RELATION_WORDS_ZH):
        if table is _RELATION_WORDS_ZH and "different" in text:
            return Relation.DIFFERENT
        for relation, words in table:
            if any(word in text for word in words):
                return relation
    return Relation.DIFFERENT
