"""Everything the commands print: consoles, JSON, progress bars, tables and human values.

User text never drives the terminal: the consoles read no markup or emoji
codes (``[/x]`` or ``:smile:`` print as typed), and ``shown`` turns control
characters, ANSI escapes, zero-width and bidirectional format characters and
unpaired surrogates into visible escapes (``\\x1b``, ``\\u200b``). Every value
a user or an extractor produced goes through ``shown`` (or ``human``, which
calls it) before it is printed.

Nothing runs past the terminal's width (``COLUMNS`` if set) and nothing is
cut: tables wrap their text columns, and every other line is cut into lines
that fit, continuation lines indented (``wrapped``); Chinese, which has no
spaces to break at, folds between characters, two columns each. Piped without
``COLUMNS``, a line stays one line (for grep); tables fit 80 columns.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs
from rich.cells import cell_len, get_character_cell_size
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from factledger.domain.language import main_language
from factledger.domain.reasons import entry_reason
from factledger.domain.values import is_invisible
from factledger.entrypoints.cli.files import json_text

if TYPE_CHECKING:  # the parser is built without the application (fast start: tests/test_fast_start.py)
    from factledger.application.decisions import Outcome
    from factledger.application.results import HistoryEntry

__all__ = [
    "NOTHING",
    "Reading",
    "count",
    "describe_event",
    "err",
    "event_descriptions",
    "human",
    "message_line",
    "out",
    "outcome_line",
    "print_json",
    "profile_table",
    "progress",
    "quoted",
    "short",
    "shown",
    "styled",
    "table",
    "when",
    "wrapped",
]

NOTHING = "—"  # what a missing value prints as, never "None"


def _escaped(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def shown(value: Any) -> str:
    """``value`` as text that is safe to print: every control, format (zero-width, bidi)
    or separator character and unpaired surrogate escaped (``is_invisible``)."""
    text = str(value)
    if text.isprintable():  # the common case: nothing to escape, no pass over the characters
        return text
    return "".join(_escaped(char) if is_invisible(char) else char for char in text)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain parts and (text, style) pairs; the parts are printed literally."""
    return Text.assemble(*parts)


# ---- lines that fit the terminal -----------------------------------------------------------

# A continuation line is indented this much more than its line, unless that leaves
# fewer than MIN_ROOM columns for the text.
HANG = 4
MIN_ROOM = 20
# Punctuation that closes a clause is not carried to the start of a line alone.
_CLOSING = frozenset("，。、；：！？）」』》〉】,.;:!?)")


def _line_ends(plain: str, width: int, hang: int) -> list[int]:
    """Offsets at which ``plain`` (one line) is cut so that the first piece fits ``width``
    cells and each later one, after ``hang`` spaces, fits too.

    A cut falls after a space, unless the word after it is too long for any line
    (it is folded where the line is full rather than moved whole), or between two
    characters where one is wide (Chinese has no spaces to break at), else
    anywhere. Linear: prefix sums give any piece's width and where each word
    ends, and a cut never moves characters a cut has moved already.
    """
    cells = [0]
    for char in plain:
        cells.append(cells[-1] + get_character_cell_size(char))
    word_end = [len(plain)] * (len(plain) + 1)  # the next space at or after each offset
    for i in range(len(plain) - 1, -1, -1):
        word_end[i] = i if plain[i] == " " else word_end[i + 1]
    ends: list[int] = []
    start, room, after_space = 0, width, -1
    for i, char in enumerate(plain):
        if char == " ":  # a space never overflows: it is dropped at the end of a line
            after_space = i + 1
            continue
        while cells[i + 1] - cells[start] > room and i > start:
            wide = cells[i + 1] - cells[i] > 1 or cells[i] - cells[i - 1] > 1
            movable = after_space > start and cells[word_end[after_space]] - cells[after_space] <= width - hang
            cut = after_space if movable and not wide else i
            if cut == i and char in _CLOSING and i - 1 > start:
                cut = i - 1
            ends.append(cut)
            start, room = cut, width - hang
    return ends


def wrapped(line: str | Text, width: int, hang: int | None = None) -> Text:
    """``line`` cut into lines of at most ``width`` cells (``\\n`` in it starts a new one); a
    continuation line is indented ``hang`` spaces (default: the line's own indent + ``HANG``)."""
    text = Text(line) if isinstance(line, str) else line
    pieces: list[Text] = []
    for own in text.split("\n", allow_blank=True):
        plain = own.plain
        indent = len(plain) - len(plain.lstrip(" ")) + HANG if hang is None else hang
        indent = indent if width - indent >= MIN_ROOM else 0
        lines = own.divide(_line_ends(plain, width, indent)) if cell_len(plain) > width else [own]
        for n, piece in enumerate(lines):
            piece.rstrip()
            pieces.append(Text(" " * indent) + piece if n else piece)
    return Text("\n").join(pieces)


class _FittingConsole(Console):
    """A console whose text never runs past the terminal's width (``COLUMNS`` if set).

    On a terminal, or with ``COLUMNS`` set, strings and ``Text`` are cut into
    lines that fit (``wrapped``), continuation lines indented. Piped without
    ``COLUMNS`` there is no width to fit, and each line stays whole, for grep.
    Tables and other renderables fit by themselves, their titles wrapped too (80
    columns when piped).
    ``soft_wrap=True`` prints a line whole (an API key, to be copied in one piece).
    """

    @property
    def has_width(self) -> bool:
        """Whether there is a width to fit: a terminal's, or one ``COLUMNS`` gives."""
        return self.is_terminal or os.environ.get("COLUMNS", "").isdigit()

    def print(self, *objects: Any, hang: int | None = None, **options: Any) -> None:
        """``Console.print``; ``hang``: how far continuation lines are indented (``wrapped``)."""
        if "soft_wrap" not in options and self.has_width:
            if all(isinstance(o, (str, Text)) for o in objects):
                line = Text(options.pop("sep", " ")).join(Text(o) if isinstance(o, str) else o for o in objects)
                objects = (wrapped(line, self.width, hang),)  # fits already: soft_wrap keeps rich from cutting it
            else:  # a table: its title wraps too, and a line it cannot fit runs on rather than being cut
                options.update(soft_wrap=False, crop=False)
        super().print(*objects, **options)


# No markup, emoji codes or highlighting is read from what is printed. soft_wrap: rich
# itself never cuts a line (ours are cut by ``wrapped``; tables fit by themselves).
out = _FittingConsole(highlight=False, markup=False, emoji=False, soft_wrap=True)
err = _FittingConsole(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


# ---- values for people ------------------------------------------------------------------


def human(value: Any) -> str:
    """A value as people read it: — for None, yes/no, two decimals, times to the second, escaped text."""
    if value is None:
        return NOTHING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, datetime):
        return when(value)
    if isinstance(value, (list, tuple)):
        return ", ".join(human(v) for v in value) or NOTHING
    return shown(value)


def when(moment: datetime | str | None) -> str:
    """A time to the second (— when there is none); ISO 8601 text (from ``to_dict()``) too."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return NOTHING if moment is None else f"{moment:%Y-%m-%d %H:%M:%S}"


def count(n: int, noun: str) -> str:
    """``1 fact``, ``2 facts``, ``0 preferences``."""
    return f"{n} {noun if n == 1 else noun + 's'}"


def short(item_id: Any) -> str:
    """The first 8 characters of an id, which is how ids are typed back (a unique prefix)."""
    return NOTHING if item_id is None else shown(item_id)[:8]


def quoted(text: Any) -> str:
    """User text in quotation marks, escaped."""
    return f"“{shown(text)}”"


def message_line(message: Mapping[str, Any] | None) -> str:
    """A recorded message with its session, time and id (``why``, ``demo``)."""
    if not message:
        return "(no message: set by an operator)"
    return (
        f"{quoted(message['text'])} (session {human(message.get('session_id'))}, {when(message.get('at'))}, "
        f"message {short(message['message_id'])})"
    )


def outcome_line(item: Outcome) -> Text:
    """What happened to one extracted item (``ingest``, ``demo``)."""
    replaces = f" (replaces {quoted(item.superseded_text)} {short(item.superseded_id)})" if item.superseded_text else ""
    return styled(
        f"  {item.kind:<10} {short(item.id)}  {shown(item.text)}  [{shown(item.category)}] → ",
        (item.action, "green"),
        replaces,
    )


# ---- JSON and progress ----------------------------------------------------------------------


def print_json(data: Any) -> None:
    """``data`` as indented JSON on stdout (text kept as UTF-8): JSON-ready data (``to_dict()``)
    only, by the same ``json_text`` as the files the CLI writes."""
    sys.stdout.write(json_text(data) + "\n")


@contextmanager
def progress(args: argparse.Namespace, label: str) -> Iterator[Progress]:
    """A progress bar on stderr; silent with ``-q``, ``--json`` or when stderr is not a terminal."""
    bar = Progress(
        TextColumn(label, markup=False, style="bold"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=args.quiet or args.json or not err.is_terminal,
    )
    with bar:
        yield bar


# ---- tables ----------------------------------------------------------------------------------


def _widest(cells: Iterable[object]) -> int:
    return max((cell_len(line) for cell in cells for line in str(cell).splitlines()), default=0)


def table(
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[str | Text]],
    *,
    text: Collection[str] = (),
    numbers: Collection[str] = (),
) -> Table:
    """A table whose cells wrap, never truncate: every column folds rather than cutting with "…".

    ``text`` columns (what users said) get a fixed width, what the others
    leave at their natural width but at least a third of the terminal, so a
    long Chinese fact is not squeezed by the short columns next to it (rich
    shrinks the widest column first; a min_width then grows it back past the
    terminal's edge). ``numbers`` are right-aligned.
    """
    rows = [tuple(row) for row in rows]
    natural = [_widest([name, *(row[i] for row in rows)]) for i, name in enumerate(columns)]
    others = sum(width for name, width in zip(columns, natural, strict=True) if name not in text)
    frame = 3 * len(columns) + 1  # a border and two spaces of padding per column, and the last border
    room = max(out.width // 3, (out.width - frame - others) // max(1, sum(name in text for name in columns)))
    grid = Table(title=title)
    for name, width in zip(columns, natural, strict=True):
        grid.add_column(
            name,
            overflow="fold",
            no_wrap=False,
            justify="right" if name in numbers else "left",
            width=min(width, room) if name in text else None,
        )
    for row in rows:
        grid.add_row(*row)
    return grid


def profile_table(profile: Mapping[str, Any]) -> Table:
    """A profile (``Profile.to_dict()``) as one row per fact and preference (``profile``, ``demo``)."""
    rows = [
        ("fact", shown(category), shown(f["fact"]), human(float(f["confidence"])), str(f["times_mentioned"]))
        for category, facts in profile["facts"].items()
        for f in facts
    ]
    rows += [
        ("preference", shown(category), shown(p["preference"]), human(float(p["strength"])), "")
        for category, prefs in profile["preferences"].items()
        for p in prefs
    ]
    return table(
        f"profile of {shown(profile['user_id'])}: {count(profile['facts_count'], 'fact')}, "
        f"{count(profile['preferences_count'], 'preference')}",
        ("kind", "category", "text", "confidence / strength", "mentions"),
        rows,
        text={"text"},
        numbers={"confidence / strength", "mentions"},
    )


# ---- events ------------------------------------------------------------------------------------


class _Fields:
    """An event's fields as people read them (``human``), ids shortened with ``id``."""

    def __init__(self, fields: Mapping[str, Any], reading: Reading | None = None) -> None:
        self.raw = fields
        self.reading = reading or Reading()

    def __getitem__(self, name: str) -> str:
        return human(self.raw.get(name))

    def id(self, name: str) -> str:
        return short(self.raw.get(name))

    def reason(self) -> str:
        """Why it stopped holding, in the language of the memories it is read with."""
        return human(entry_reason(self.raw, self.reading.language, self.reading.texts))


@attrs.frozen
class Reading:
    """What a history is read with: the language its memories are in (reasons are shown in it) and
    the texts of its items by id (a reason names the item it is about)."""

    language: str = "zh"
    texts: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def of(cls, entries: Iterable[HistoryEntry]) -> Reading:
        said = [e.fields for e in entries if isinstance(e.fields.get("text"), str)]
        items = {str(f.get("fact_id") or f.get("preference_id")): f["text"] for f in said if "message_id" in f}
        return cls(main_language("\n".join(f["text"] for f in said)), items)


def _extraction(f: _Fields) -> str:
    extraction = f.raw.get("extraction") or {}
    return (
        f"extraction by {human(extraction.get('extractor_id'))}: "
        f"{count(len(extraction.get('facts') or []), 'fact')}, "
        f"{count(len(extraction.get('preferences') or []), 'preference')}"
    )


def _invalidation(f: _Fields) -> str:
    by = f" superseded by {f.id('superseded_by')}" if f.raw.get("superseded_by") else ""
    judge = f"; judge {f['judge_id']}: {f['raw_answer']}" if f.raw.get("judge_id") else ""
    actor = f"; by {f['actor']}" if f.raw.get("actor") else ""
    return f"fact {f.id('fact_id')} invalidated ({f['relation']}): {f.reason()}{by}{judge}{actor}"


@functools.cache
def event_descriptions() -> Mapping[str, Callable[[_Fields], str]]:
    """One line per kind of event (``history``, ``demo``), by the event's class name; every value in
    it is escaped. Built when first needed: the aggregate imports the event library."""
    from factledger.domain.memory import UserMemory

    descriptions: dict[type, Callable[[_Fields], str]] = {
        UserMemory.Started: lambda f: f"memory of {f['user_id']} started",
        UserMemory.MessageIngested: lambda f: f"message {f.id('message_id')} (session {f['session_id']}): {f['text']}",
        UserMemory.ExtractionRecorded: _extraction,
        UserMemory.ExtractionFailed: lambda f: f"extraction failed ({f['extractor_id']}): {f['error']}",
        UserMemory.FactObserved: lambda f: (
            f"fact {f.id('fact_id')} observed: {f['text']} [{f['category']}], confidence {f['confidence']}"
        ),
        UserMemory.FactConfirmed: lambda f: (
            f"fact {f.id('fact_id')} confirmed: {count(f.raw['times_mentioned'], 'mention')}, "
            f"similarity {f['similarity']}"
        ),
        UserMemory.FactContested: lambda f: (
            f"fact {f.id('fact_id')} contested by {quoted(f.raw['challenger_text'])} ({f['relation']}): kept"
        ),
        UserMemory.FactInvalidated: _invalidation,
        UserMemory.PreferenceObserved: lambda f: (
            f"preference {f.id('preference_id')} observed: {f['text']} [{f['category']}], strength {f['strength']}"
        ),
        UserMemory.PreferenceReinforced: lambda f: (
            f"preference {f.id('preference_id')} reinforced: strength {f['old_strength']} → {f['new_strength']}"
        ),
        UserMemory.PreferenceSuperseded: lambda f: (
            f"preference {f.id('preference_id')} superseded by {f.id('superseded_by')}: {f.reason()}"
        ),
        UserMemory.FactMentioned: lambda f: f"fact {f.id('fact_id')} said again at {f['said_at']}, while it held",
        UserMemory.PreferenceMentioned: lambda f: (
            f"preference {f.id('preference_id')} said again at {f['said_at']}, while it held"
        ),
    }
    # History entries name their event's class.
    return {kind.__name__: describe for kind, describe in descriptions.items()}


def describe_event(entry: HistoryEntry, reading: Reading | None = None) -> str:
    """One line saying what an event recorded (its class name for a kind this version does not know),
    read with ``reading`` (``Reading.of`` the history it is part of)."""
    describe = event_descriptions().get(entry.event)
    return describe(_Fields(entry.fields, reading)) if describe else shown(entry.event)
