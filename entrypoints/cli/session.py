"""What every command needs besides printing: the ledger to work on, times, and the note for an unknown user."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from factledger.application.errors import InvalidInput
from factledger.entrypoints.cli.present import err

if TYPE_CHECKING:
    from factledger.application.service import LedgerService


@contextmanager
def opened(args: argparse.Namespace, *, check_embedder: bool = True, **overrides: Any) -> Iterator[LedgerService]:
    """The ledger the options name (``--ledger``, ``--prompts``, the environment), closed afterwards.

    ``check_embedder=False`` for commands that never touch the read model's
    vectors: they work whatever embedder built it. Says on stderr (unless
    ``-q``) which database and extractor are in use.
    """
    # Imported here, when a command opens its ledger: the parser and ``--help`` never pay for
    # psycopg, asyncio or the offline rules (tests/test_fast_start.py).
    from factledger.infrastructure.bootstrap import describe_components, open_ledger
    from factledger.infrastructure.config import Settings

    settings = Settings.load(prompts=getattr(args, "prompts", None), **overrides)
    service = open_ledger(
        settings, check_embedder=check_embedder, ledger=getattr(args, "ledger", None), warn_if_offline=False
    )
    try:
        if not args.quiet:
            parts = describe_components(service)
            where = "DATABASE_URL" if settings.database_url else f"embedded PostgreSQL in {settings.home}"
            mode = "offline rules (no OPENAI_API_KEY)" if parts["extractor"].startswith("offline") else "LLM"
            err.print(
                f"factledger: {where}; extractor {parts['extractor']} — {mode}; embedder {parts['embedder']}",
                style="dim",
            )
        yield service
    finally:
        service.close()


def note_if_unknown(args: argparse.Namespace, known: bool) -> bool:
    """Say on stderr (unless ``-q``) that nothing is recorded for ``args.user``; returns ``known``.

    A user nothing was ever recorded for is an empty answer, exit 0, as on every
    surface (ADR 0036); someone typing a user id may have mistyped it, so the
    note says so plainly, beside the answer (``--json`` has ``"known": false``).
    """
    if not known and not args.quiet:
        err.print(f"nothing is recorded for user {args.user!r}", style="yellow")
    return known


def parse_time(value: Any, where: str) -> datetime | None:
    """An ISO 8601 string or epoch seconds as an aware time (UTC when no zone is given)."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"{where}: timestamp {value!r} is out of range for epoch seconds") from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{where}: timestamp {value!r} is not ISO 8601 or epoch seconds") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise InvalidInput(f"{where}: timestamp must be a string or a number, got {type(value).__name__}")
