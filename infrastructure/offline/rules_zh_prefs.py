"""Chinese rules for preferences about replies: style, format, language, time, tools.

These are always the user's, whatever subject a clause carried: only the user
tells the assistant how to answer ("老板姓张，平时喜欢简短的回复").
"""

from __future__ import annotations

import functools

from factledger.infrastructure.offline.clauses import standing_request
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.registry import Registries, simple
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import (
    VOCABULARY,
    Item,
    Subject,
    finding,
    named_rule,
    preference_item,
    third_person,
    tidy,
)
from factledger.infrastructure.offline.slots import pattern_test, rewritten

_DATA = rules("rules_zh_prefs")
RE = _DATA.patterns()

LANGUAGES = _DATA.text("LANGUAGES")
_CONTACT_PHRASE = _DATA.mapping("_CONTACT_PHRASE")
_UNIT_SIDE = _DATA.mapping("_UNIT_SIDE")
_ORDER_SAID = _DATA.mapping("_ORDER_SAID")
_PATTERN_TESTS = _DATA.compiled_rows("_PATTERN_TESTS")
_STANDING_CATEGORIES: tuple[tuple[str, tuple[str, ...]], ...] = _DATA.rows("_STANDING_CATEGORIES")
_HATING = _DATA.words("_HATING")
_REQUESTS = _DATA.words("_REQUESTS")
_CALLED_TIDY = _DATA.compiled_rows("_CALLED_TIDY")
_STANDING_TIDY = _DATA.compiled_rows("_STANDING_TIDY")


def _requested(obj: str) -> str:
    """The style a liking of ``obj`` names, in the words of the request for it
    (``[[registries.style]]``: "直接说重点" → 偏好简洁直接的回复风格), or ""."""
    return next((rule.template for rule in RULES.style.rules if rule.pattern.match(obj)), "")


_VOCABULARY = VOCABULARY.extended(
    predicates={
        **{name: pattern_test(pattern, where) for pattern, name, where in _PATTERN_TESTS},
        # examples asked for, or for good
        # "我用表格记账" is not a request; imperatives and replies-talk are (the caller decides)
        "request_like": lambda value, context: bool(context.get("request_like", True)),
        "hating": simple(lambda value: value in _HATING),
        # a style (简短, 直接 …) said of replies ("简短的回复", "简短的"), not of something else ("短发")
        "of_replies": simple(
            lambda obj: bool(RE._STYLE_WORDS.search(obj) and (RE._OF_REPLIES.search(obj) or _requested(obj)))
        ),
        "requested": simple(lambda value: bool(_requested(value))),
    },
    filters={
        "code_name": lambda value: {"golang": "Go"}.get(value.lower(), value),
        "unit_side": lambda value: _UNIT_SIDE.get(value, "公制"),
        "unit_named": lambda value: "" if value == _UNIT_SIDE.get(value, "公制") else f"（{value}）",
        "contact": lambda value: _CONTACT_PHRASE[value],
        "refusal": lambda value: "不希望" if value else "偏好",
        "within": lambda value: value or "以内",
        "requested": _requested,
    },
)
RULES = Registries(_DATA, _VOCABULARY)


#: the preference the first rule of a registry that fires gives: read from what the user does or asks
#: for, unless the rule says it is stated
_preference = functools.partial(finding, kind="preference", behaviour=True)


@named_rule("rules_zh_prefs.tool")
def tool_preference(subject: Subject, rest: str, said: str) -> Item | None:
    """'我平时用VSCode写代码' → 偏好使用VSCode; only the user's own habits, never one-off requests."""
    # "用Python写个脚本" is a task, not a habit: it needs 我 or a habitual adverb
    if subject.kind != "user" or not (subject.explicit or RE._HABITUAL.search(said)):
        return None
    return _preference(RULES.habit_tool, rest, said, {"said": said})


@named_rule("rules_zh_prefs.request")
def request_preference(subject: Subject, rest: str, said: str) -> Item | None:
    """Requests on how to reply: 简短点, 说重点, 用表格, 用中文回复, 晚上别打扰我 …"""
    # "我用表格记账" is not a request; imperatives and replies-talk are
    request_like = (
        subject.kind in ("assistant", "unknown") or not subject.explicit or bool(RE._REPLY_CONTEXT.search(rest))
    )
    # what to call the user (the name in quotes, a laugh after it: "叫我“老板”吧哈哈"), then the rest
    asked = {"said": said, "request_like": request_like}
    item = _preference(RULES.called, rewritten(rest, _CALLED_TIDY), said, {"said": said}) or next(
        filter(None, (_preference(RULES[name], rest, said, asked) for name in _REQUESTS)), None
    )
    if item:
        return item
    # "先给结论再展开" / "先把思路讲明白，结论放最后": what comes first in an answer
    order = dimensions(rest).get("order") if request_like else None
    if order:
        return preference_item(_ORDER_SAID[order], "communication_style", said, behaviour=True)
    standing = standing_request(rest) or standing_request(said)
    if standing and not RE._NOT_IN_POINTS.search(standing):
        return _standing_preference(standing, said)
    return _preference(RULES.style, rest, said, {"said": said}) if request_like else None


@named_rule("rules_zh_prefs.standing")
def _standing_preference(content: str, said: str) -> Item:
    """A request for all later answers that names no known dimension, kept in the user's words:
    "以后推荐清淡的吧" → 偏好推荐清淡的; "以后直接写成一段话就行" → 偏好直接写成一段话 (format)."""
    content = rewritten(third_person(tidy(content)), _STANDING_TIDY)
    language = RE._STANDING_LANGUAGE.fullmatch(content)
    if language:  # said like every reply-language preference
        return preference_item(f"偏好用{language.group('l')}回复", "language", said, behaviour=True)
    # one frame for every such request, so that two about the same thing are compared
    text = "偏好以后回答时" + content
    sides = dimensions(text)
    category = next(
        (category for category, named in _STANDING_CATEGORIES if any(name in sides for name in named)),
        "language" if RE._IN_WORDS.search(content) else "communication_style",
    )
    return preference_item(text, category, said, behaviour=True)


@named_rule("rules_zh_prefs.liked-reply")
def liked_reply_preference(rest: str, said: str) -> Item | None:
    """'习惯用VSCode' → 偏好使用VSCode (``[[registries.liked_reply]]``, on what is liked); '喜欢简短的回复'
    → 偏好简短的回复风格 (``[[registries.liked_style]]``, on the clause)."""
    m = RE.LIKE.match(rest)
    if not m:
        return None
    fired = RULES.liked_reply.first(tidy(m.group("obj")))
    if fired:
        negative = bool(m.group("neg")) or m.group("verb") in _HATING
        said_as = fired.rule.values["said_as"][negative]
        return preference_item(said_as + fired.text, fired.category, said).traced(fired.rule.id)
    return _preference(RULES.liked_style, rest, said, {"said": said}, behaviour=False)
