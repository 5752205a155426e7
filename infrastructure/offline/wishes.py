"""Wishes about how the assistant should answer: the spec's preferences, read in either language.

How the user wants to be answered is what the spec's preferences are for (communication_style,
format, language …). A clause is such a wish when it holds three things (each a pair of patterns in
rules/wishes.toml):

* a word of wishing or asking (希望, 别, 能不能, 以后 …; I'd like, please, don't, keep it …) or a
  liking said of answers (不喜欢回复太长, I hate long answers);
* the answers themselves (回答, 你说 …; answers, replies, you …) or what only an answer holds (例子,
  表格, 术语, emoji; examples, bullet points, jargon), asked of the assistant;
* a side of one dimension of answers (``dimensions``: length, layout, reply language, examples …).

It is no wish about answers when it is a question (save a polite request for all later answers:
"能不能以后回答短一点？"), when someone else is its subject or owns the answers (我老板不喜欢回复太长,
my boss wants shorter answers), when it asks one thing now (给我详细解释一下这段代码, give me a
detailed explanation of X), or when what is wished is no answer (希望明天不下雨, I'd like a long
holiday). The preference says the side preferred, however the wish was put ("不要给我太长的回复" →
偏好简短的回复风格), in the words the other reply rules use, so the judge sees two wishes on one
dimension as one that changed.
"""

from __future__ import annotations

import re

from factledger.infrastructure.offline.clauses import Clause, is_english, is_question
from factledger.infrastructure.offline.dimensions import dimensions
from factledger.infrastructure.offline.rule_data import rules
from factledger.infrastructure.offline.rules_common import Item, named_rule, preference_item
from factledger.infrastructure.offline.slots import EN_ROLE_PATTERN, ZH_ROLE_PATTERN

_DATA = rules("wishes")
RE = _DATA.patterns(ZH_ROLE_PATTERN=ZH_ROLE_PATTERN, EN_ROLE_PATTERN=EN_ROLE_PATTERN)

# -- what makes a clause a wish about answers --------------------------------------------------


# -- what the preference says, by dimension and side ---------------------------------------------

_ORDER = _DATA.words("_ORDER")
#: ``dimension.side = [two strings]`` tables as written: {dimension: {side: (text, category)}}, or (words, finer side)
_ZH_SAYS: dict[str, dict[str, tuple[str, str]]] = _DATA.table("_ZH_SAYS")
_EN_SAYS: dict[str, dict[str, tuple[str, str]]] = _DATA.table("_EN_SAYS")
_FINER_SIDES: dict[str, dict[str, tuple[str, str]]] = _DATA.table("_FINER_SIDES")
_LANGUAGE_NAMES = _DATA.mapping("_LANGUAGE_NAMES")
_CODE_NAMES = _DATA.mapping("_CODE_NAMES")


@named_rule("wishes.answer")
def answer_wish(clause: Clause, someone_else: bool = False) -> Item | None:
    """The preference a wish about answers states, or None (see the module's words)."""
    said = clause.text.strip()
    if not said or someone_else or not _is_wish(clause, said):
        return None
    sides = dimensions(said)
    found = next((d for d in _ORDER if d in sides), None)
    if found is None:
        return None
    text, category = _says(found, sides[found], said)
    if not text:
        return None
    return preference_item(text, category, said, behaviour=not RE._STATED.search(said))


def said_of_someone_else(text: str) -> bool:
    """Whether a clause's wish or answers are someone else's ("老师希望…", "我老板不喜欢…", "his answers …"):
    then no rule reads a preference of the user's in it."""
    return bool((RE._EN_SOMEONE if is_english(text) else RE._ZH_SOMEONE).search(text.strip()))


def _is_wish(clause: Clause, said: str) -> bool:
    english = is_english(said)
    wish, answers, parts = (
        (RE._EN_WISH, RE._EN_ANSWERS, RE._EN_ANSWER_PARTS)
        if english
        else (RE._ZH_WISH, RE._ZH_ANSWERS, RE._ZH_ANSWER_PARTS)
    )
    if not wish.search(said) or said_of_someone_else(said):
        return False
    imperative = (RE._EN_IMPERATIVE if english else RE._ZH_IMPERATIVE).match(said)
    # the answers named, or what only they hold asked of the assistant by a request
    asked_of_me = imperative or RE._STATED.search(said) or RE._TO_ME.search(said)
    if not (answers.search(said) or (parts.search(said) and asked_of_me)) or RE._FOR_SOMEONE.search(said):
        return False
    standing = (RE._EN_STANDING if english else RE._ZH_STANDING).search(said)
    if (RE._EN_ONE_TASK if english else RE._ZH_ONE_TASK).search(said) and not standing:
        return False  # one thing asked for now
    if is_question(clause):
        polite = (RE._EN_POLITE if english else RE._ZH_POLITE).search(said)
        manner = (RE._EN_MANNER if english else RE._ZH_MANNER).search(said)
        return bool(polite and (standing or manner))
    return True


def _says(dimension: str, side: str, said: str) -> tuple[str, str]:
    """(preference text, category) for one side of one dimension, in the language of ``said``."""
    english = is_english(said)
    says = (_EN_SAYS if english else _ZH_SAYS).get(dimension, {})
    if "named" in says:  # a side that is a value named in the text (a language, a number)
        refused, value = side.startswith("not "), side.removeprefix("not ")
        text, category = says["refused" if refused else "named"]
        return text.format(name=_name(dimension, value, said, english)), category
    if dimension == "layout" and side == "structured":  # in the user's word for it, as the request rules say it
        m = (RE._EN_STRUCTURE if english else RE._ZH_STRUCTURE).search(said)
        form = m.group(0).lower() if m else ""
        text, category = says["structured_named" if m else "structured"]
        return text.format(name=form + ("s" if english and not form.endswith("s") else "")), category
    words, finer = _FINER_SIDES.get(dimension, {}).get(side, ("", side))
    return says.get(finer if words and re.search(words, said, re.IGNORECASE) else side, ("", ""))


def _name(dimension: str, value: str, said: str, english: bool) -> str:
    """How a preference names the value it asks for: a language by its name (in Chinese, as said), a number as is."""
    if dimension == "code_language":
        return _CODE_NAMES.get(value, value[:1].upper() + value[1:])
    if dimension == "reply_language" and english:
        return _LANGUAGE_NAMES.get(value, value.capitalize())
    named = RE._ZH_LANGUAGE_SAID.search(said) if dimension == "reply_language" else None
    return named.group(0) if named else value


__all__ = ["answer_wish", "said_of_someone_else"]
