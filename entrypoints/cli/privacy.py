"""A person's rights: ``export`` (all of their memory) and ``forget`` / ``forgotten``."""

from __future__ import annotations

import argparse
import getpass
import sys

from factledger.application.errors import InvalidInput
from factledger.entrypoints.cli.files import json_text, write_private_file
from factledger.entrypoints.cli.present import count, out, print_json, shown, styled
from factledger.entrypoints.cli.session import opened


def _default_actor() -> str:
    try:
        return f"{getpass.getuser()} (cli)"
    except (KeyError, OSError):
        return "operator (cli)"


def _confirmed(args: argparse.Namespace) -> bool:
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise InvalidInput("forget deletes for good: pass --yes to confirm (stdin is not a terminal to ask on)")
    answer: str = input(f"Forget user {shown(args.user)} in every ledger, for good? Type the user id to confirm: ")
    return answer == str(args.user)


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete every trace of the user's words in every ledger; print the tombstone."""
    if not _confirmed(args):
        out.print("not confirmed; nothing was deleted")
        return 1
    with opened(args, check_embedder=False) as service:
        tombstone = service.forget(args.user, actor=args.actor or _default_actor())
    if args.json:
        print_json(tombstone.to_dict())
        return 0
    removed = ", ".join(f"{name.replace('_', ' ')} {n}" for name, n in tombstone.counts.items() if n)
    out.print(styled(("forgotten", "green"), f" {shown(args.user)} in every ledger: {removed or 'nothing was stored'}"))
    out.print(f"tombstone {tombstone.user_key[:16]}… at {tombstone.forgotten_at:%Y-%m-%d %H:%M:%S %Z}")
    return 0


def cmd_forgotten(args: argparse.Namespace) -> int:
    """List the tombstones (or say whether one user id was forgotten)."""
    with opened(args, check_embedder=False) as service:
        tombstones = service.tombstones(args.user)
    if args.json:
        print_json([t.to_dict() for t in tombstones])
        return 0
    if not tombstones:
        out.print(f"{shown(args.user)} was never forgotten" if args.user else "no user was forgotten")
        return 0
    for t in tombstones:
        records = count(sum(t.counts.values()), "record")
        out.print(f"{t.forgotten_at:%Y-%m-%d %H:%M:%S %Z}  {t.user_key[:16]}…  by {shown(t.actor)}  ({records})")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """Write the user's whole memory as JSON (stdout, or a file only its owner can read, written whole)."""
    with opened(args, check_embedder=False) as service:
        data = service.export(args.user)
    if args.output is None:
        print_json(data)
        return 0
    path = write_private_file(args.output, json_text(data) + "\n", "--output")
    if args.json:
        print_json({"output": str(path), "messages": len(data["messages"]), "facts": len(data["facts"])})
    else:
        out.print(
            f"wrote {count(len(data['messages']), 'message')}, {count(len(data['facts']), 'fact')} and "
            f"{count(len(data['preferences']), 'preference')} of {shown(args.user)} to {shown(str(path))}"
        )
    return 0


def cmd_new_key(args: argparse.Namespace) -> int:
    """Print a fresh key for FACTLEDGER_ENCRYPTION_KEY (it is not stored anywhere)."""
    from factledger.infrastructure.encryption import new_key  # psycopg: only for this command

    key = new_key()
    if args.json:
        print_json({"encryption_key": key})
    else:
        out.print(key)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "forget",
        parents=[common],
        help="delete every trace of a user in every ledger (leaves a tombstone)",
        description="Deletes the user's events, snapshots, read-model rows, cached vectors, cached LLM "
        "answers and call log in every ledger of the database (live, replayed, previous_*), in one "
        "transaction. A tombstone stays: a keyed hash of the user id, the time, the actor and counts. "
        "The user id may be used again afterwards and starts an empty memory.",
    )
    p.add_argument("user")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--actor", help="who asked for it (recorded in the tombstone; default: your login)")
    p.set_defaults(func=cmd_forget)

    p = sub.add_parser(
        "forgotten",
        parents=[common],
        help="list the tombstones of forgotten users",
        description="Lists when users were forgotten and by whom (no user ids are kept: --user checks one).",
    )
    p.add_argument("--user", help="only whether this user id was forgotten")
    p.set_defaults(func=cmd_forgotten)

    p = sub.add_parser(
        "export",
        parents=[common],
        help="a user's whole memory as JSON (for an access request)",
        description="Every message, fact and preference of the user, each with its whole history, as JSON.",
    )
    p.add_argument("user")
    p.add_argument(
        "--output",
        "-o",
        help="write to this file instead of stdout: mode 0600, all at once (a temporary file renamed over it)",
    )
    p.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "new-key",
        parents=[common],
        help="print a new key for FACTLEDGER_ENCRYPTION_KEY",
        description="Prints a random 256-bit AES key (base64). Set it as FACTLEDGER_ENCRYPTION_KEY before the "
        "first start of a new database to encrypt event payloads at rest; keep it safe: without it the "
        "events cannot be read.",
    )
    p.set_defaults(func=cmd_new_key)
