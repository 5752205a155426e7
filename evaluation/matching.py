"""Whether a predicted item says what a gold persona sentence says.

After normalising both texts (no whitespace or punctuation, no subject words,
lower case) a prediction matches a gold item when their character-bigram F1
(Chinese) or word F1 (English) is at least 0.5; items are paired one to one,
best pairs first.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence

MATCH_THRESHOLD = 0.5

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_ZH_SUBJECTS = re.compile(r"用户的|用户|我的|我")
_EN_SUBJECTS = re.compile(r"\b(?:the user's|the user|user's)\b")
_EN_DROP = frozenset({"i", "my"})
_PUNCT = re.compile(r"[\s\W_]+", re.UNICODE)


def _zh_units(text: str) -> Counter[str]:
    text = _ZH_SUBJECTS.sub("", unicodedata.normalize("NFKC", text).lower())
    text = _PUNCT.sub("", text)
    if len(text) == 1:
        return Counter([text])
    return Counter(text[i : i + 2] for i in range(len(text) - 1))


def _en_units(text: str, speaker: str | None) -> Counter[str]:
    text = unicodedata.normalize("NFKC", text).lower().replace("’", "'")
    text = _EN_SUBJECTS.sub(" ", text)
    if speaker:
        text = re.sub(rf"\b{re.escape(speaker.lower())}(?:'s)?\b", " ", text)
    words = [w.strip("'") for w in re.findall(r"[^\W_]+(?:'[^\W_]+)*", text)]
    return Counter(w for w in words if w and w not in _EN_DROP)


def similarity(prediction: str, gold: str, speaker: str | None = None) -> float:
    """Bigram F1 (Chinese) or word F1 (otherwise) of the two normalised texts."""
    if _CJK.search(gold) or _CJK.search(prediction):
        a, b = _zh_units(prediction), _zh_units(gold)
    else:
        a, b = _en_units(prediction, speaker), _en_units(gold, speaker)
    overlap = sum((a & b).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(a.values()), overlap / sum(b.values())
    return 2 * precision * recall / (precision + recall)


def count_matches(predictions: Sequence[str], gold: Sequence[str], speaker: str | None = None) -> int:
    """Pairs matched one to one, greedily by score, among pairs scoring ≥ MATCH_THRESHOLD."""
    pairs = sorted(
        ((similarity(p, g, speaker), i, j) for i, p in enumerate(predictions) for j, g in enumerate(gold)),
        key=lambda t: (-t[0], t[1], t[2]),
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    for score, i, j in pairs:
        if score < MATCH_THRESHOLD:
            break
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
    return len(used_p)
