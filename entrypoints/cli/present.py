"""Everything the commands print: consoles, JSON, progress bars, tables and human values.

User text never drives the terminal: the consoles read no markup or emoji
codes (``[/x]`` or ``:smile:`` print as typed), and ``shown`` turns control
characters, ANSI escapes, bidirectional overrides and unpaired surrogates into
visible escapes (``\\x1b``). Every value a user or an extractor produced goes
through ``shown`` (or ``human``, which calls it) before it is printed.

Tables wrap instead of truncating: text columns fold (Chinese has no spaces
to break at), so a fact is printed whole at any terminal width.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from factledger.application.decisions import Outcome
from factledger.application.results import HistoryEntry
from factledger.domain.memory import UserMemory
from factledger.entrypoints.cli.files import json_text

__all__ = [
    "EVENT_DESCRIPTIONS",
    "NOTHING",
    "count",
    "describe_event",
    "err",
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
]

NOTHING = "—"  # what a missing value prints as, never "None"

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(value: Any) -> str:
    """``value`` as text that is safe to print: every control character escaped."""
    return _UNSAFE.sub(_escape, str(value))


def styled(*parts: str | tuple[str, str]) -> Text:
    """Text from plain parts and (text, style) pairs; the parts are printed literally."""
    return Text.assemble(*parts)


# No markup, emoji codes or highlighting is read from what is printed. soft_wrap: a
# long line stays one line (for grep and pipes); tables still fit the width.
out = Console(highlight=False, markup=False, emoji=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


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

    def __init__(self, fields: Mapping[str, Any]) -> None:
        self.raw = fields

    def __getitem__(self, name: str) -> str:
        return human(self.raw.get(name))

    def id(self, name: str) -> str:
        return short(self.raw.get(name))


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
    return f"fact {f.id('fact_id')} invalidated ({f['relation']}): {f['reason']}{by}{judge}{actor}"


#: One line per kind of event (``history``, ``demo``); every value in it is escaped.
EVENT_DESCRIPTIONS: Mapping[type, Callable[[_Fields], str]] = {
    UserMemory.Started: lambda f: f"memory of {f['user_id']} started",
    UserMemory.MessageIngested: lambda f: f"message {f.id('message_id')} (session {f['session_id']}): {f['text']}",
    UserMemory.ExtractionRecorded: _extraction,
    UserMemory.ExtractionFailed: lambda f: f"extraction failed ({f['extractor_id']}): {f['error']}",
    UserMemory.FactObserved: lambda f: (
        f"fact {f.id('fact_id')} observed: {f['text']} [{f['category']}], confidence {f['confidence']}"
    ),
    UserMemory.FactConfirmed: lambda f: (
        f"fact {f.id('fact_id')} confirmed: {count(f.raw['times_mentioned'], 'mention')}, similarity {f['similarity']}"
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
        f"preference {f.id('preference_id')} superseded by {f.id('superseded_by')}: {f['reason']}"
    ),
    UserMemory.FactMentioned: lambda f: f"fact {f.id('fact_id')} said again at {f['said_at']}, while it held",
    UserMemory.PreferenceMentioned: lambda f: (
        f"preference {f.id('preference_id')} said again at {f['said_at']}, while it held"
    ),
}
# History entries name their event's class.
_BY_NAME = {kind.__name__: describe for kind, describe in EVENT_DESCRIPTIONS.items()}


def describe_event(entry: HistoryEntry) -> str:
    """One line saying what an event recorded (its class name for a kind this version does not know)."""
    describe = _BY_NAME.get(entry.event)
    return describe(_Fields(entry.fields)) if describe else shown(entry.event)
