"""Running an extractor over labelled lines and scoring detection and extraction.

The extractor is taken through the ``Extractor`` port, so the same code scores
the offline rules and an LLM. Detection is read from the extraction's
``signals`` (the spec's ``has_fact_signal`` / ``has_pref_signal``); an
extractor that reports no signals counts as flagging a line when it found
something in it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs

from factledger.application.ports import Extractor
from factledger.evaluation.dataset import LabelledLine
from factledger.evaluation.matching import count_matches


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
    """``predict`` for every line, in order; ``progress(1)`` after each."""
    predictions = []
    for line in lines:
        predictions.append(predict(extractor, line))
        if progress:
            progress(1)
    return predictions


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
    counts: Counter[str] = Counter()
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
