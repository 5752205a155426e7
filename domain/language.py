"""Which language a text is mostly in: Chinese or English (ADR 0029).

The memories are written in the user's language, and what is shown to an assistant about them
(``memory_context``'s headings) follows it; both ask this one question of a text.
"""

from __future__ import annotations

import re
import unicodedata

_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def main_language(text: str) -> str:
    """``zh`` or ``en``: the language most of ``text`` is in, a Han character against a Latin word
    ("我喜欢用VS Code写Python" is Chinese, "call me 小王 please" English); no letters at all: Chinese."""
    folded = unicodedata.normalize("NFKC", text or "")
    han = len(_HAN.findall(folded))
    words = len(_LATIN_WORD.findall(folded))
    # a character against a word: Latin words inside Chinese are mostly names and terms (VS Code,
    # Python), so a sentence's grammar, which is most of it, decides
    return "en" if words > han else "zh"
