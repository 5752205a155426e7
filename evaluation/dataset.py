"""Labelled files: JSON Lines of user turns with the persona sentences they reveal.

One turn a line: ``id``, ``utterance`` (Chinese lines also
``utterance_unsegmented``, which is what is fed), ``context``
(``context_unsegmented`` where present) and ``gold_persona``
(``gold_persona_unsegmented``): the persona sentences the turn reveals; empty
means none. ``sample.jsonl``, shipped with the package, is a small file in
this format (``load_sample``).
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import attrs

from factledger.application.errors import InvalidInput
from factledger.domain.values import Turn

#: line fields that split a report into groups when present (KvPI's attribute)
GROUP_FIELDS = ("kvpi_domain",)
#: the labelled file shipped with the package
SAMPLE = "sample.jsonl"


class DatasetError(InvalidInput):
    """A labelled file that cannot be read; the message names the file and line."""


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


def parse_lines(content: str, source: str) -> list[LabelledLine]:
    """Every labelled line of ``content`` (read from ``source``); blank lines are skipped, a bad one raises."""
    lines: list[LabelledLine] = []
    for number, raw in enumerate(content.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{source}: line {number}"
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        lines.append(parse_line(record, where))
    if not lines:
        raise DatasetError(f"{source}: no labelled lines")
    return lines


def load_lines(path: str | Path) -> list[LabelledLine]:
    """Every labelled line of the file ``path``; raises DatasetError naming the file and line."""
    path = Path(path)
    try:
        content = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, not a file") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text ({exc.reason})") from None
    return parse_lines(content, str(path))


def load_sample() -> list[LabelledLine]:
    """The small labelled file shipped with factledger (Chinese and English, invented sentences)."""
    content = resources.files(__package__).joinpath(SAMPLE).read_text(encoding="utf-8")
    return parse_lines(content, SAMPLE)
