"""Dimensions of how a user wants replies: which pole of each a preference takes.

The offline judge compares two preferences of one category by what they ask
for. "偏好简短的回复风格" and "Prefers detailed answers" sit on one dimension
(length) at opposite poles: the newer one replaces the older. "偏好正式的回复风格"
and "偏好简短的回复风格" sit on two different dimensions: both stay.

Each dimension has two poles, or (code and reply language) a value named in
the text. A pole word after a refusal (不要/别/少/avoid/no …) counts for the
other pole: "别用术语" asks for plain words, "no emoji" for plain text.
"""

from __future__ import annotations

import re
import unicodedata

from factledger.infrastructure.offline.rule_data import rules

_DATA = rules("dimensions")
RE = _DATA.patterns()

_CODE_LANGUAGES = _DATA.mapping("_CODE_LANGUAGES")
_REPLY_LANGUAGES = _DATA.mapping("_REPLY_LANGUAGES")


#: each dimension's two poles, each with the other and its words, compiled once: ``dimensions`` reads
#: every clause of a message that may ask something of replies (issue 25: per clause, a string pattern
#: is a look-up in ``re``'s cache)
_POLES = tuple(
    (name, ((first, second, re.compile(first_words, re.I)), (second, first, re.compile(second_words, re.I))))
    for name, ((first, first_words), (second, second_words)) in _DATA.rows("_POLES")
)


def dimensions(text: str) -> dict[str, str]:
    """{dimension: pole or value} for everything the preference text asks of replies."""
    text = unicodedata.normalize("NFKC", text or "")
    found: dict[str, str] = {}
    for name, sides in _POLES:
        for pole, other, words in sides:  # each pole with the other, which a refusal of its words asks for
            m = words.search(text)
            if m:
                before = text[: m.start()]
                refused = bool(RE._REFUSAL.search(before)) and not RE._REFUSING_WORD.match(m.group(0))
                found[name] = other if refused or RE._EXCESS.search(before) else pole
                break
    # how many characters an answer may run to: "控制在80字以内" → 80 ("放宽到200字左右")
    limit = RE._ZH_WORD_LIMIT.search(text) or RE._EN_WORD_LIMIT.search(text)
    if limit and RE._LIMITING.search(text):
        found["word_limit"] = limit.group("n")
    # the programming language code examples are asked in ("偏好用Rust写代码示例" → rust), else the reply's
    m = RE._CODE_LANGUAGE.search(text) if RE._CODE_CONTEXT.search(text) else None
    if m:
        language = _CODE_LANGUAGES[m.group("l").lower()]
        found["code_language"] = f"not {language}" if RE._REFUSAL.search(text[: m.start()]) else language
    else:
        m = RE._REPLY_LANGUAGE.search(text) or RE._REPLY_WORDS.search(text)
        if m and RE._SPEAKING.search(text):
            language = _REPLY_LANGUAGES.get(m.group(0).lower(), m.group(0))
            found["reply_language"] = f"not {language}" if RE._REFUSAL.search(text[: m.start()]) else language
    return found


__all__ = ["dimensions"]
