"""Reading a JSONL file of messages for ``ingest-file``: line by line, each bad line reported by number."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from factledger.application.errors import InvalidInput
from factledger.entrypoints.cli.session import parse_time
from factledger.infrastructure.secret import InstallationSecret

REQUIRED_KEYS = ("user_id", "message")

# A line longer than this cannot hold a message within the limits: it is reported, never read whole.
MAX_LINE_BYTES = 4 * 1024 * 1024


def open_lines(path: Path) -> tuple[BinaryIO, int | None]:
    """The file as bytes, and its number of lines (None for standard input, ``-``).

    Lines are read one at a time, so a file of any size streams, and a line
    that is not UTF-8 is reported by number like any other bad line.
    """
    if str(path) == "-":
        return sys.stdin.buffer, None
    try:
        total, last = 0, b"\n"
        with path.open("rb") as counting:
            while block := counting.read(1 << 20):
                total += block.count(b"\n")
                last = block[-1:]
        return path.open("rb"), total + (last != b"\n")
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: is a directory, not a JSONL file") from None
    except PermissionError:
        raise InvalidInput(f"{path}: permission denied") from None


# Editors on Windows start a UTF-8 file with it; it is not part of the first line's JSON.
UTF8_BOM = b"\xef\xbb\xbf"


def numbered_lines(stream: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of every line, the first without a UTF-8 byte order mark;
    None for a line longer than MAX_LINE_BYTES (skipped)."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if number == 1:
            raw = raw.removeprefix(UTF8_BOM)
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield number, None
            continue
        yield number, raw


def parse_message(raw: bytes | None, number: int) -> dict[str, Any] | None:
    """One line as a message record (``timestamp`` parsed); None for a blank line.

    Raises ``InvalidInput`` naming the line for anything unusable.
    """
    where = f"line {number}"
    if raw is None:
        raise InvalidInput(f"{where}: longer than {MAX_LINE_BYTES} bytes")
    if not raw.strip():
        return None
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        # Some messages end in "at" already ("Unterminated string starting at").
        at = "" if exc.msg.endswith(" at") else " at"
        raise InvalidInput(f"{where}: not valid JSON ({exc.msg}{at} column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput(f"{where}: JSON nested too deeply") from None
    if not isinstance(record, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if record.get(k) is None]
    if missing:
        raise InvalidInput(f"{where}: missing {', '.join(missing)}")
    record["timestamp"] = parse_time(record.get("timestamp"), where)
    return record


def file_source(path: Path, secret: InstallationSecret) -> str:
    """What names a file in its lines' message ids: its name and a keyed hash of its
    resolved path (ADR 0026), ``stdin`` for standard input.

    Two files of the same name in other folders are other sources, so their equal
    lines are other messages; the same file run again, from any working directory or
    through a link, is the same source. The path is hashed: ids are stored, and a
    folder's name may be personal.
    """
    if str(path) == "-":
        return "stdin"
    resolved = path.resolve()
    return f"{resolved.name[:100]}@{secret.hexdigest('file', os.fsencode(resolved), 12)}"


def line_message_id(source: str, number: int, raw: bytes, secret: InstallationSecret) -> str:
    """The message id of a line that has none: ``SOURCE:LINE:HASH``, the file's source
    (``file_source``, or what ``--source`` names), the line number and a hash of the line.

    Running the same file again (after a crash, or after lines were appended)
    skips what it recorded; a line that was edited is a new message. The hash
    is keyed (the installation secret): the id is stored, the line is personal.
    """
    digest = secret.hexdigest("line", raw.rstrip(b"\r\n"), 12)
    return f"{source}:{number}:{digest}"
