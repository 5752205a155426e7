"""Files the CLI writes (``export -o``, ``eval --predictions``): whole, private, or not at all.

A file is written next to its destination under a temporary name (mode
0600), synced to disk, then renamed over the destination: a reader sees the
old file or the new one, never half of one, and a failure (a full disk, a
value that is not JSON) leaves no file and no partial file behind. The
content is made before the temporary file is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

from factledger.application.errors import InvalidInput

__all__ = ["json_text", "write_private_file"]

PRIVATE = 0o600


def json_text(data: Any, indent: int | None = 2) -> str:
    """``data`` as JSON text, by the standard library alone: what ``to_dict()`` gives is JSON-ready,
    and anything that is not raises ``TypeError`` here instead of being written half-way."""
    return json.dumps(data, ensure_ascii=False, indent=indent)


def write_private_file(path: str | Path, content: str, option: str) -> Path:
    """Put ``content`` at ``path`` atomically, readable by its owner only; returns the path written.

    ``option`` names the command-line option in errors (``-o``). A symbolic
    link is followed, so the file it points to is replaced and the link kept.
    """
    target = Path(path).resolve()
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        raise InvalidInput(f"{option} {path}: not a regular file (leave {option} out to print on stdout)")
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise InvalidInput(f"{option} {path}: cannot write there ({exc.strerror})") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            os.fchmod(handle.fileno(), PRIVATE)  # mkstemp's mode already; said, not assumed
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise InvalidInput(f"{option} {path}: cannot write ({exc.strerror})") from None
        raise
    _sync_directory(target.parent)
    return target


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (where the platform allows a directory to be synced)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
