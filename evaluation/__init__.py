"""Score an extractor on a labelled file: detection and extraction, as eval/README.md defines them.

``dataset`` reads labelled files (and the shipped ``sample.jsonl``),
``matching`` decides whether a prediction says what a gold sentence says, and
``scoring`` runs an extractor over the lines and counts. Nothing is recorded
anywhere: ``factledger eval`` and ``factledger eval --sample`` use this.
"""

from __future__ import annotations

from factledger.evaluation.dataset import (
    GROUP_FIELDS,
    SAMPLE,
    DatasetError,
    LabelledLine,
    load_lines,
    load_sample,
    parse_line,
    parse_lines,
)
from factledger.evaluation.matching import MATCH_THRESHOLD, count_matches, similarity
from factledger.evaluation.scoring import Prediction, Report, Scores, evaluate, predict, predict_all, score

__all__ = [
    "GROUP_FIELDS",
    "MATCH_THRESHOLD",
    "SAMPLE",
    "DatasetError",
    "LabelledLine",
    "Prediction",
    "Report",
    "Scores",
    "count_matches",
    "evaluate",
    "load_lines",
    "load_sample",
    "parse_line",
    "parse_lines",
    "predict",
    "predict_all",
    "score",
    "similarity",
]
