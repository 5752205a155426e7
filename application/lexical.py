"""The words recall matches on, made here for every store alike (ADR 0030).

``terms(text)`` turns a text into the terms the lexical index holds, in the
order they occur (their positions give term frequencies): words in lower case
with a light English stemmer (plural -s, -ing, -ed: "hikes", "hiking" and
"hiked" meet "hike") and without the most common function words; Chinese,
which is written without spaces, as overlapping character bigrams (a lone
character as itself). Bigrams need no dictionary and match any word of two
characters or more wherever it sits.

``bm25`` scores one user's candidates the way the PostgreSQL view's SQL does,
for the in-memory view and the tests: the same formula on both backends.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

K1 = 1.2
B = 0.75
# The longest term kept (a pasted hash or URL is not a word anyone asks about); PostgreSQL caps a
# tsvector lexeme at 2 KB anyway.
MAX_TERM_CHARS = 40
# A tsvector keeps positions 1..16383; a text longer than that in terms is counted up to there.
MAX_POSITION = 16383

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_HAN}]+|[^\W_{_HAN}]+")
_HAN_RUN = re.compile(rf"[{_HAN}]")
# Function words that nearly every turn has: they only add noise to a question's score.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "having",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "yours",
        "we",
        "us",
        "our",
        "ours",
        "he",
        "him",
        "his",
        "she",
        "her",
        "hers",
        "it",
        "its",
        "they",
        "them",
        "their",
        "theirs",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "there",
        "here",
        "then",
        "than",
        "so",
        "not",
        "no",
        "nor",
        "too",
        "very",
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "just",
        "also",
        "about",
        "into",
        "over",
        "out",
        "up",
        "down",
        "off",
        "again",
        "once",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "only",
        "own",
        "same",
        "s",
        "t",
        "d",
        "ll",
        "m",
        "re",
        "ve",
        "y",
        "oh",
        "yeah",
        "yes",
        "ok",
        "okay",
        "really",
        "like",
        "just",
        "get",
        "got",
        "gonna",
        "wanna",
    ]
)


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A light suffix stripper: enough to meet inflections, never a dictionary."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix in ("s", "es") and word.endswith(("ss", "us", "is")):
                return word
            stem = word[: -len(suffix)] + keep
            # "running" → "run", "hoped" → "hop" then compared as stems on both sides alike
            if suffix in ("ing", "ed") and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes", "oes")):
                stem = word[:-1]
            return _drop_final_e(stem)
    return _drop_final_e(word)


def _drop_final_e(stem: str) -> str:
    # "hike" and "hiking" both become "hik": the same stem on both sides of a match.
    return stem[:-1] if len(stem) >= 4 and stem.endswith("e") and stem[-2] != "e" else stem


def terms(text: str) -> list[str]:
    """The text's terms in the order they occur (repeats kept: they are term frequencies)."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if _HAN_RUN.match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out += map(
                    token.__getitem__, _BIGRAMS[len(token)] if len(token) < len(_BIGRAMS) else _bigrams(len(token))
                )
        elif token not in STOPWORDS and len(token) <= MAX_TERM_CHARS:
            out.append(_stem(token))
    return out


def _bigrams(length: int) -> list[slice]:
    return [slice(i, i + 2) for i in range(length - 1)]


# The bigram slices of a Chinese run of each length up to 64 (a run's terms without a loop here).
_BIGRAMS = [_bigrams(n) for n in range(64)]


def query_terms(text: str) -> list[str]:
    """The distinct terms of a question, in order."""
    return list(dict.fromkeys(terms(text)))


def term_counts(text: str) -> tuple[dict[str, int], int]:
    """Each term's frequency and the text's length in terms, as the tsvector of ``term_positions``
    counts them (the same figures on both backends)."""
    positions = term_positions(text)
    return {t: len(p) for t, p in positions.items()}, sum(len(p) for p in positions.values())


def bm25(
    query: Sequence[str],
    documents: Mapping[str, tuple[Mapping[str, int], int]],
    *,
    corpus_size: int | None = None,
    average_length: float | None = None,
) -> dict[str, float]:
    """Okapi BM25 of each document (id → (term counts, length)) that shares a term with ``query``.

    ``corpus_size`` and ``average_length`` describe every document searched (by default, these);
    a term's document frequency counts the documents given, which must be all that hold it.
    """
    n = corpus_size if corpus_size is not None else len(documents)
    lengths = [length for _, length in documents.values()]
    avgdl = average_length if average_length is not None else (sum(lengths) / len(lengths) if lengths else 0.0)
    df = Counter(t for counts, _ in documents.values() for t in set(query) if t in counts)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    scores: dict[str, float] = {}
    for key, (counts, length) in documents.items():
        norm = K1 * (1 - B + B * length / avgdl) if avgdl else K1
        score = sum(idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in idf if t in counts)
        if score > 0:
            scores[key] = score
    return scores


def fuse(rankings: Iterable[tuple[Sequence[str], float]], k: int = 60) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: each id's sum of weight / (k + rank) over the (ranking,
    weight) pairs it is in."""
    fused: dict[str, float] = {}
    for ranking, weight in rankings:
        for rank, key in enumerate(ranking, 1):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank)
    return fused


# A tsvector keeps at most 256 positions of one lexeme.
MAX_POSITIONS_PER_TERM = 256


def term_positions(text: str) -> dict[str, list[int]]:
    """Each term's positions (1-based, ascending, as a tsvector holds them)."""
    found = terms(text)
    if len(found) > MAX_POSITION:
        del found[MAX_POSITION:]
    # Most texts a rebuild projects (a chat turn) say each term once: one comprehension, no loop.
    positions = {term: [at] for at, term in enumerate(found, 1)}
    if len(positions) == len(found):
        return positions
    positions = {}
    for at, term in enumerate(found, 1):
        held = positions.get(term)
        if held is None:
            positions[term] = [at]
        elif len(held) < MAX_POSITIONS_PER_TERM:
            held.append(at)
    return positions
