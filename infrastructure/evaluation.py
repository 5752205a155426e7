"""Score an extractor on a labelled file: detection and extraction, as eval/README.md defines them.

A labelled file is JSON Lines, one user turn a line: ``id``, ``utterance``
(Chinese lines also ``utterance_unsegmented``, which is what is fed), ``context``
(``context_unsegmented`` where present) and ``gold_persona`` (``gold_persona_unsegmented``):
the persona sentences the dataset ties to that turn; empty means none.

The extractor is taken through the ``Extractor`` port, so the same code scores
the offline rules and an LLM. Detection is read from the extraction's
``signals`` (the spec's ``has_fact_signal`` / ``has_pref_signal``); an
extractor that reports no signals counts as flagging a line when it found
something in it.

Matching (eval/README.md): after normalising both texts (no whitespace or
punctuation, no subject words, lower case) a prediction matches a gold item when
their character-bigram F1 (Chinese) or word F1 (English) is at least 0.5; items
are paired one to one, best pairs first.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
from factledger.application.errors import InvalidInput
from factledger.application.ports import Extractor
from factledger.domain.values import Turn

MATCH_THRESHOLD = 0.5
#: line fields that split a report into groups when present (KvPI's attribute)
GROUP_FIELDS = ("kvpi_domain",)


class DatasetError(InvalidInput):
    """A labelled file that cannot be read; the message names the file and line."""


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------


@attrs.frozen
class LabelledLine:
    """One user turn of a labelled file, with what the extractor is fed and the gold answer."""

    id: str
    text: str
    context: tuple[Turn, ...] = ()
    gold: tuple[str, ...] = ()
    speaker: str | None = None  # LoCoMo: the speaker's name, dropped before matching
    group: str | None = None  # KvPI: gender / location / constellation


def _strings(value: Any, where: str, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{where}: '{field}' must be a list of strings")
    return tuple(v for v in value if v.strip())


def parse_line(record: Any, where: str) -> LabelledLine:
    """Build a ``LabelledLine`` from one decoded JSON line; raises DatasetError naming ``where``."""
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected a JSON object, got {type(record).__name__}")
    text = record.get("utterance_unsegmented") or record.get("utterance")
    if not isinstance(text, str) or not text.strip():
        raise DatasetError(f"{where}: no 'utterance' text")
    raw_context = record.get("context_unsegmented") or record.get("context") or []
    if not isinstance(raw_context, list):
        raise DatasetError(f"{where}: 'context' must be a list of turns")
    try:
        context = tuple(Turn.from_dict(turn) for turn in raw_context)
    except ValueError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    gold_field = "gold_persona_unsegmented" if "gold_persona_unsegmented" in record else "gold_persona"
    group = next((str(record[f]) for f in GROUP_FIELDS if record.get(f)), None)
    speaker = record.get("speaker") if isinstance(record.get("speaker"), str) else None
    return LabelledLine(
        id=str(record.get("id") or where),
        text=text,
        context=context,
        gold=_strings(record.get(gold_field), where, gold_field),
        speaker=speaker,
        group=group,
    )


def load_lines(path: str | Path) -> list[LabelledLine]:
    """Every labelled line of ``path``; blank lines are skipped, a bad one raises DatasetError."""
    path = Path(path)
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason})") from None
    lines: list[LabelledLine] = []
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}: line {number}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        lines.append(parse_line(record, where))
    if not lines:
        raise DatasetError(f"{path}: no labelled lines")
    return lines


# --------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------


@attrs.frozen
class Prediction:
    """What the extractor said about one line: the ``--predictions`` record."""

    id: str
    signal: bool
    facts: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()

    @property
    def items(self) -> tuple[str, ...]:
        return self.facts + self.preferences

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "signal": self.signal, "facts": list(self.facts), "preferences": list(self.preferences)}


def predict(extractor: Extractor, line: LabelledLine) -> Prediction:
    """Run the extractor on one line (nothing is recorded anywhere)."""
    extraction = extractor.extract(line.text, context=line.context)
    facts = tuple(f.text for f in extraction.facts)
    preferences = tuple(p.text for p in extraction.preferences)
    signals = extraction.signals or {}
    if "has_fact_signal" in signals or "has_pref_signal" in signals:
        signal = bool(signals.get("has_fact_signal") or signals.get("has_pref_signal"))
    else:
        # an extractor without a separate detector: it "flags" what it found something in
        signal = bool(facts or preferences)
    return Prediction(id=line.id, signal=signal, facts=facts, preferences=preferences)


def predict_all(
    extractor: Extractor, lines: Sequence[LabelledLine], progress: Callable[[int], None] | None = None
) -> list[Prediction]:
    predictions = []
    for line in lines:
        predictions.append(predict(extractor, line))
        if progress:
            progress(1)
    return predictions


# --------------------------------------------------------------------------
# Matching
# --------------------------------------------------------------------------

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
    return Counter(text[i:i + 2] for i in range(len(text) - 1))


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


# --------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


@attrs.frozen
class Scores:
    """Counts and rates for one set of lines (a file or one group of it)."""

    lines: int
    gold_lines: int
    flagged: int
    flagged_gold: int
    predicted: int
    gold_items: int
    matched: int

    @property
    def detection_precision(self) -> float | None:
        return _ratio(self.flagged_gold, self.flagged)

    @property
    def detection_recall(self) -> float | None:
        return _ratio(self.flagged_gold, self.gold_lines)

    @property
    def flagged_share(self) -> float | None:
        return _ratio(self.flagged, self.lines)

    @property
    def extraction_precision(self) -> float | None:
        return _ratio(self.matched, self.predicted)

    @property
    def extraction_recall(self) -> float | None:
        return _ratio(self.matched, self.gold_items)

    @property
    def extraction_f1(self) -> float | None:
        p, r = self.extraction_precision, self.extraction_recall
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "detection": {
                "lines_with_gold": self.gold_lines,
                "flagged": self.flagged,
                "flagged_with_gold": self.flagged_gold,
                "precision": self.detection_precision,
                "recall": self.detection_recall,
                "flagged_share": self.flagged_share,
            },
            "extraction": {
                "predicted": self.predicted,
                "gold": self.gold_items,
                "matched": self.matched,
                "precision": self.extraction_precision,
                "recall": self.extraction_recall,
                "f1": self.extraction_f1,
            },
        }


def score(lines: Iterable[LabelledLine], predictions: Iterable[Prediction]) -> Scores:
    """Detection and extraction counts over paired lines and predictions."""
    counts = Counter()
    for line, prediction in zip(lines, predictions, strict=True):
        has_gold = bool(line.gold)
        counts["lines"] += 1
        counts["gold_lines"] += has_gold
        counts["flagged"] += prediction.signal
        counts["flagged_gold"] += prediction.signal and has_gold
        counts["predicted"] += len(prediction.items)
        counts["gold_items"] += len(line.gold)
        counts["matched"] += count_matches(prediction.items, line.gold, line.speaker)
    return Scores(**{f.name: counts[f.name] for f in attrs.fields(Scores)})


@attrs.frozen
class Report:
    """A file's scores, overall and by group (KvPI's domains), with the extractor that made them."""

    extractor_id: str
    overall: Scores
    groups: dict[str, Scores] = attrs.field(factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "extractor_id": self.extractor_id,
            **self.overall.as_dict(),
            "by_group": {name: s.as_dict() for name, s in self.groups.items()},
        }


def evaluate(lines: Sequence[LabelledLine], predictions: Sequence[Prediction], extractor_id: str) -> Report:
    """Score a whole file: overall, and per group where lines carry one."""
    groups: dict[str, tuple[list[LabelledLine], list[Prediction]]] = {}
    for line, prediction in zip(lines, predictions, strict=True):
        if line.group is not None:
            bucket = groups.setdefault(line.group, ([], []))
            bucket[0].append(line)
            bucket[1].append(prediction)
    return Report(
        extractor_id=extractor_id,
        overall=score(lines, predictions),
        groups={name: score(ls, ps) for name, (ls, ps) in sorted(groups.items())},
    )


__all__ = [
    "MATCH_THRESHOLD",
    "DatasetError",
    "LabelledLine",
    "Prediction",
    "Report",
    "Scores",
    "count_matches",
    "evaluate",
    "load_lines",
    "parse_line",
    "predict",
    "predict_all",
    "score",
    "similarity",
]
