"""Reading a message the way the detector and the rule extractor both need: clauses and their kind.

A message is split into sentences (。！？.!? and new lines) and each sentence
into clauses (commas, semicolons and clause-joining conjunctions). Each clause
keeps the punctuation that ended it, the conjunction that opened it and the
number of its sentence, so the extractor can restate a sentence without
splitting what was said in one breath.

The helpers below classify a clause: small talk, a question, a question put
to the assistant, a statement about the speaker (first person, Chinese or
English) and an exchange with the listener ("我明白你的意思", "I'm sure you'll
manage") that says nothing about the speaker however many 我 it holds.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from factledger.infrastructure.offline.rule_data import rules

_DATA = rules("clauses")
RE = _DATA.patterns()


class Clause(NamedTuple):
    """One clause of a message and the punctuation that ended it ("" at the end)."""

    text: str
    terminator: str
    joiner: str = ""  # the conjunction split off before it ("但是", "and"), if any
    sentence: int = 0  # which sentence of the message it belongs to


def dialect(text: str) -> str:
    """Regional first person as the standard one: 俺 → 我, 咱家 → 我家 (咱们 stays "we")."""
    if not isinstance(text, str):
        return ""
    return text.replace("俺们", "我们").replace("俺", "我").replace("咱家", "我家")


def fold_cjk_spaces(text: str) -> str:
    """Chinese is written without spaces: a space of any kind between two Han characters (an ASCII
    space, the ideographic space U+3000, a no-break, thin or zero-width one) is dropped, so that it
    never splits a word or a value ("北 京" is 北京). Spaces next to Latin letters, digits or
    punctuation stay ("用 Python 写", "I live in Hangzhou"); a line break still ends a sentence."""
    if not isinstance(text, str):
        return ""
    return RE._SPACE_IN_HAN.sub("", text)


def _split_on(pattern: re.Pattern[str], text: str) -> list[tuple[str, str]]:
    """(joiner, part) pairs: the text cut at each conjunction, which opens the part after it."""
    pieces = pattern.split(text)
    return [("", pieces[0]), *zip((joiner.strip() for joiner in pieces[1::2]), pieces[2::2], strict=True)]


def split_clauses(text: str) -> list[Clause]:
    """Split a message on punctuation and clause-joining conjunctions, keeping each terminator."""
    text = unicodedata.normalize("NFKC", text or "")
    pieces = RE._CLAUSE_BREAK.split(text)
    clauses: list[Clause] = []
    sentence = 0
    # split() alternates text, separator, text, separator, …
    for i in range(0, len(pieces), 2):
        body, separator = pieces[i], (pieces[i + 1] if i + 1 < len(pieces) else "")
        terminator = separator.strip()
        parts = [
            (en_joiner or zh_joiner, zh_part)
            for en_joiner, en_part in _split_on(RE._EN_CONJUNCTIONS, body)
            for zh_joiner, zh_part in _split_on(RE._ZH_CONJUNCTIONS, en_part)
        ]
        kept = [(joiner, part.strip()) for joiner, part in parts if part.strip()]
        for j, (joiner, part) in enumerate(kept):
            clauses.append(Clause(part, terminator if j == len(kept) - 1 else "", joiner, sentence))
        if RE._SENTENCE_END.search(separator):
            sentence += 1
    return clauses


# -- Small talk and questions ----------------------------------------------------------------------


def is_small_talk(text: str) -> bool:
    """True when nothing but greetings, thanks and acknowledgements is left (or nothing at all)."""
    # punctuation, emoji and spaces go, so "thank you!" folds to "thankyou"
    folded = RE._NO_LETTER.sub("", unicodedata.normalize("NFKC", text or "").lower())
    return not folded or RE._SMALL_TALK.fullmatch(folded) is not None


def is_english(text: str) -> bool:
    return bool(RE._LATIN_LETTER.search(text)) and not RE._HAN_CHARACTER.search(text)


def is_question(clause: Clause) -> bool:
    """A question of any kind: it asks, so it states no fact."""
    text = clause.text.strip()
    if clause.terminator and clause.terminator[0] in "?？":
        return True
    if is_english(text):
        return False
    if RE._QUESTION_END.search(text):
        return True
    # a question word asks when nothing first-person is stated ("你住哪"), or with a
    # questioning end ("你喜欢什么风格的呢"); "我打算买几个蛋挞" states a plan
    return bool(RE._QUESTION_WORDS.search(text) and RE._ASKING_FORM.search(text))


def is_question_to_assistant(clause: Clause) -> bool:
    """A question whose subject is the assistant ("你能…吗？", "can you …?")."""
    return is_question(clause) and bool(RE._ADDRESSES_ASSISTANT.search(clause.text.strip()))


# -- Who a statement is about ----------------------------------------------------------------------


def zh_mentions_self(text: str) -> bool:
    """A Chinese clause in which the speaker talks about themself (我 as subject or owner)."""
    if not RE._ZH_FIRST_PERSON.search(text) or RE._ZH_SUGGESTION.search(text):
        return False
    return bool(RE._ZH_FIRST_PERSON.search(strip_exchange(text)))


EN_ELLIPSIS = _DATA.text("EN_ELLIPSIS")


def strip_exchange(text: str) -> str:
    """The clause without first-person frames that only comment on the exchange."""
    if is_english(text):
        return RE._EN_EXCHANGE.sub(" ", text.replace("’", "'"))
    return RE._ZH_OPINION.sub("", RE._ZH_EXCHANGE.sub("", RE._ZH_CHAT.sub("", text)))


def en_mentions_self(text: str) -> bool:
    """An English clause in which the speaker says something about themself."""
    text = text.replace("’", "'")
    if RE._EN_ELLIPSIS.search(text):
        return True
    if not RE._EN_SELF.search(text):
        return False
    return bool(RE._EN_SELF.search(RE._EN_EXCHANGE.sub(" ", text)))


__all__ = [
    "EN_ELLIPSIS",
    "Clause",
    "dialect",
    "en_mentions_self",
    "fold_cjk_spaces",
    "is_english",
    "is_question",
    "is_question_to_assistant",
    "is_small_talk",
    "split_clauses",
    "strip_exchange",
    "zh_mentions_self",
]


# -- Standing requests: how the assistant should answer from now on --------------------------------


def standing_request(text: str) -> str | None:
    """What a Chinese request for all later answers asks, as said ("以后推荐清淡的吧" → "推荐清淡的").

    A clause that opens with "from now on" (以后, 往后, 每次 …), with going
    back on a request (还是…吧), or with the occasion ("推荐菜谱的时候"),
    goes on with what to do (推荐, 用, 叫我, 写成 …), and asks: it ends like a
    request (吧, 就行, 就好) or is said to the assistant (给我, 跟我, 叫我).
    """
    if not isinstance(text, str) or is_english(text):
        return None
    said = text.strip().strip("。！!~～ ")
    m = None if not said or RE._SAID_OF_SOMEONE.match(said) else RE._STANDING_REQUEST.match(said)
    if m is None:
        return None
    rest = RE._REQUEST_END.sub("", said[m.end() :])
    if not RE._WORD_CHARACTER.search(rest) or RE._PUT_OFF.match(said[m.start("verb") - 1 : m.end() + 1]):
        return None  # "以后再说吧": putting something off, not a request
    if not (RE._REQUEST_END.search(said) or RE._TO_THE_ASSISTANT.search(said)):
        return None
    content = RE._FROM_NOW_ON.sub("", said)
    content = RE._GOING_BACK.sub("", content)
    return RE._ASKING_TAIL.sub("", content) or None
