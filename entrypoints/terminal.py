"""Printing to a terminal what users wrote, without letting it drive the terminal.

The consoles never read markup or emoji codes, so ``[/x]`` or ``:smile:`` in a
message are printed as typed; ``shown`` turns control characters, ANSI escape
sequences, bidirectional overrides and unpaired surrogates into visible
escapes (``\\x1b``), so no id or text can recolour, move or hide output.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.text import Text

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


def console(stderr: bool = False) -> Console:
    # soft_wrap: a long line stays one line (for grep and pipes); tables still fit the width.
    return Console(stderr=stderr, highlight=False, markup=False, emoji=False, soft_wrap=True)
