"""Partitions of users over several ledgers: ``partitions list | add | assign | move`` (ADR 0018)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from factledger.entrypoints.cli.present import count, out, print_json, shown, styled

# The partitions, the settings and the ledgers are imported when a command runs: the parser is
# built without them (fast start, tests/test_fast_start.py).
if TYPE_CHECKING:
    from factledger.infrastructure.partitions import PostgresPartitions


@contextmanager
def _router(args: argparse.Namespace) -> Iterator[PostgresPartitions]:
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.partitions import PostgresPartitions

    store = PostgresPartitions(Settings.load(prompts=getattr(args, "prompts", None)))
    try:
        yield store
    finally:
        store.close()


def _where(entry: dict[str, Any]) -> str:
    server = entry["database_url"] or "router's server"
    return f"{server}, schema {entry['schema']}"


def cmd_list(args: argparse.Namespace) -> int:
    """Each partition: where, its slices, its events, whether it answers."""
    from factledger.application.partitioned import ranges_text

    with _router(args) as store:
        described = store.describe()
    if args.json:
        print_json(described)
        return 0
    for entry in described["partitions"]:
        state = ("reachable", "green") if entry["reachable"] else ("UNREACHABLE", "red")
        events = "?" if entry["events"] is None else count(entry["events"], "event")
        slices = ranges_text([tuple(span) for span in entry["slices"]])
        line = f"{shown(entry['name'])}  slices {slices}  {events}  moved/pinned users {entry['users_by_override']}"
        out.print(styled(f"{line}  ", state, f"  ({shown(_where(entry))})"))
        if entry.get("error"):
            out.print(f"    {shown(entry['error'])}")
    if described["unrouted_slices"]:
        out.print(styled(("unrouted slices:", "red"), f" {ranges_text(_spans(described['unrouted_slices']))}"))
    if described["moves_in_progress"]:
        out.print(f"{count(described['moves_in_progress'], 'move')} interrupted: run `partitions move` again")
    return 0


def _spans(slices: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for s in slices:
        if spans and spans[-1][1] == s - 1:
            spans[-1] = (spans[-1][0], s)
        else:
            spans.append((s, s))
    return spans


def cmd_add(args: argparse.Namespace) -> int:
    """Register a partition (its ledger is created now)."""
    with _router(args) as store:
        info = store.add(args.name, args.database_url, args.schema)
    if args.json:
        print_json({"name": info.name, "schema": info.schema, "database_url": info.database_url is not None})
    else:
        where = "its own server" if info.database_url else "the router's server"
        out.print(f"added partition {shown(info.name)}: schema {shown(info.schema)} on {where}; no slices yet")
    return 0


def cmd_assign(args: argparse.Namespace) -> int:
    """Route a slice range to a partition; users already stored elsewhere for it stay where they are."""
    from factledger.application.partitioned import parse_slices

    lo, hi = parse_slices(args.slices)
    with _router(args) as store:
        pinned = store.assign(args.name, lo, hi)
    if args.json:
        print_json({"name": args.name, "slices": [lo, hi], "pinned": pinned})
    else:
        kept = ", ".join(f"{count(n, 'user')} in {shown(name)}" for name, n in pinned.items() if n)
        out.print(
            f"slices {lo}-{hi} now route to {shown(args.name)}"
            + (f"; pinned where they are: {kept} (move them with `partitions move`)" if kept else "")
        )
    return 0


def cmd_move(args: argparse.Namespace) -> int:
    """Move one user's memory to another partition (their writes wait while it runs)."""
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.partitions import open_partitioned

    with open_partitioned(Settings.load(prompts=getattr(args, "prompts", None))) as ledger:
        report = ledger.move_user(args.user, args.to)
    if args.json:
        print_json(report.to_dict())
    elif report.source == report.target and not report.events:
        out.print(f"{shown(args.user)} is in partition {shown(args.to)} already")
    else:
        out.print(
            f"moved {shown(args.user)} from {shown(report.source)} to {shown(report.target)}: "
            f"{count(report.events, 'event')}; the source keeps only a tombstone"
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    group = sub.add_parser(
        "partitions",
        parents=[common],
        help="spread users over several ledgers or servers (list, add, assign, move)",
        description="Users are hashed into 256 slices; slice ranges route to partitions, each a whole ledger "
        "in a schema of its own, on this server or another. The routing table lives in this installation's "
        "database and schema.",
    )
    cmds = group.add_subparsers(dest="partitions_command", required=True, metavar="ACTION")

    p = cmds.add_parser("list", parents=[common], help="partitions, their slices and events, reachable or not")
    p.set_defaults(func=cmd_list)

    p = cmds.add_parser("add", parents=[common], help="register a partition (created now)")
    p.add_argument("name")
    p.add_argument("--database-url", help="its own PostgreSQL server (default: the router's server)")
    p.add_argument("--schema", help="its schema (default: p_NAME)")
    p.set_defaults(func=cmd_add)

    p = cmds.add_parser("assign", parents=[common], help="route a slice range (LO-HI, 0..255) to a partition")
    p.add_argument("name")
    p.add_argument("--slices", required=True, metavar="LO-HI")
    p.set_defaults(func=cmd_assign)

    p = cmds.add_parser("move", parents=[common], help="move a user to another partition")
    p.add_argument("user")
    p.add_argument("--to", required=True, metavar="NAME")
    p.set_defaults(func=cmd_move)
