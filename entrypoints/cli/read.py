"""Reading a user's memory: ``profile``, ``recall``, ``history`` and ``context``.

A user nothing was ever recorded for is no error (ADR 0036): the empty answer,
exit 0, with a note on stderr (an unknown id at a prompt may be a typing
mistake); ``profile --json`` and ``context --json`` say ``"known": false``.
An item the user does not have (``why``) is still an error (exit 3).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from factledger.domain.kinds import Clock
from factledger.entrypoints.cli.present import (
    Reading,
    count,
    describe_event,
    err,
    out,
    print_json,
    profile_table,
    quoted,
    short,
    shown,
    table,
    when,
)
from factledger.entrypoints.cli.session import note_if_unknown, opened, parse_time

if TYPE_CHECKING:
    from factledger.application.results import Profile


def cmd_profile(args: argparse.Namespace) -> int:
    """A page of a user's active facts and preferences, most important first (as of a time,
    from the events, with ``--as-of``), and how many there are."""
    as_of = parse_time(args.as_of, "--as-of") if args.as_of else None
    with opened(args, check_embedder=False) as service:
        profile = service.profile(args.user, as_of=as_of, clock=_clock(args), limit=args.limit, offset=args.offset)
    note_if_unknown(args, profile.known)
    if args.json:
        print_json(profile.to_dict())
        return 0
    out.print(profile_table(profile.to_dict()))
    if profile.offset or profile.has_more:
        out.print(page_note(profile))
    return 0


def page_note(profile: Profile) -> str:
    """Which part of the profile is shown: ``showing 50 of 828 facts and 20 of 31 preferences``."""

    def part(shown_here: int, total: int, noun: str) -> str:
        if not shown_here:
            return f"none of {count(total, noun)}"
        span = f"{profile.offset + 1}–{profile.offset + shown_here}" if profile.offset else str(shown_here)
        return f"{span} of {total} {noun if total == 1 else noun + 's'}"

    facts = part(len(profile.facts), profile.facts_total, "fact")
    preferences = part(len(profile.preferences), profile.preferences_total, "preference")
    more = " (--offset/--limit for more)" if profile.has_more else ""
    return f"showing {facts} and {preferences}, most important first{more}"


def cmd_recall(args: argparse.Namespace) -> int:
    """The user's memories most similar to a query."""
    types = [t.strip() for t in args.types.split(",")] if args.types else None
    with opened(args) as service:
        hits = service.recall(args.user, args.query, types=types, top_k=args.top_k, min_similarity=args.min_similarity)
        known = bool(hits) or note_if_unknown(args, service.knows(args.user))  # asked only when none was found
    if args.json:
        print_json([h.to_dict() for h in hits])
        return 0
    if not hits and known:
        out.print(f"no memory of {shown(args.user)} is similar to {quoted(args.query)}")
        return 0
    rows = [
        (
            "—" if hit.similarity is None else f"{hit.similarity:.3f}",  # a message: found by its words
            hit.record.type,
            shown(hit.record.category),
            shown(hit.record.content),
            short(hit.record.id),
        )
        for hit in hits
    ]
    out.print(
        table(
            f"recall for {shown(args.user)}: {quoted(args.query)}",
            ("similarity", "type", "category", "content", "id"),
            rows,
            text={"content"},
            numbers={"similarity"},
        )
    )
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """Every event recorded for the user, oldest first, one line each."""
    since = parse_time(args.since, "--since") if args.since else None
    until = parse_time(args.until, "--until") if args.until else None
    with opened(args, check_embedder=False) as service:
        page = service.history(args.user, since=since, until=until, kind=args.kind, clock=_clock(args))
        note_if_unknown(args, page.known)
    if args.json:
        print_json([entry.to_dict() for entry in page])
        return 0
    if not page.entries and page.known:
        out.print(f"no event of {shown(args.user)} matches")
    reading = Reading.of(page)
    for entry in page:
        at = entry.recorded_at if args.recorded else entry.said_at or entry.recorded_at
        head = f"{entry.version:>4}  {when(at)}  "
        out.print(head + describe_event(entry, reading), hang=len(head))  # a long event continues under its text
    return 0


def _clock(args: argparse.Namespace) -> Clock:
    return "recorded" if args.recorded else "said"


RECORDED_HELP = "use the time the ledger recorded each event, not the time it was said (ADR 0014)"


def cmd_context(args: argparse.Namespace) -> int:
    """What an assistant should know about the user to answer a query: a block for its system prompt."""
    with opened(args) as service:
        memory = service.memory_context(args.user, args.query, top_k=args.top_k, language=args.language)
    note_if_unknown(args, memory.profile.known)
    if args.json:
        print_json(memory.to_dict())
        return 0
    text = memory.text
    if not text and memory.profile.known and not args.quiet:
        err.print(f"nothing active is known about {shown(args.user)}", style="yellow")
    for line in text.splitlines():
        out.print(shown(line))  # line by line: shown() would escape the newlines
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``profile``, ``recall``, ``history`` and ``context``."""
    p = sub.add_parser(
        "profile",
        parents=[common],
        help="a user's active facts and preferences by category",
        description="A page of the user's active facts and preferences, most important first (facts by "
        "importance, preferences by strength, then by when first said): by default the first 50 facts "
        "and 20 preferences; the output says how many there are.",
    )
    p.add_argument("user")
    p.add_argument("--limit", type=int, metavar="N", help="show N facts and N preferences (default 50 and 20)")
    p.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N most important of each (default 0)")
    p.add_argument(
        "--as-of",
        metavar="TIME",
        help="the profile as it was at TIME (ISO 8601): what had been said by then, from the events",
    )
    p.add_argument("--recorded", action="store_true", help=RECORDED_HELP)
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("recall", parents=[common], help="memories most similar to a query")
    p.add_argument("user")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=5, help="how many (default 5)")
    p.add_argument("--types", help="fact, preference, message (comma-separated; default all three)")
    p.add_argument(
        "--min-similarity",
        type=float,
        default=None,
        help="drop hits below this cosine similarity (default: the embedder's threshold for 'related')",
    )
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("history", parents=[common], help="every event recorded for a user")
    p.add_argument("user")
    p.add_argument("--since", metavar="TIME", help="only events said at or after TIME (ISO 8601)")
    p.add_argument("--until", metavar="TIME", help="only events said at or before TIME (ISO 8601)")
    p.add_argument("--kind", choices=["message", "fact", "preference"], help="only events of this kind")
    p.add_argument("--recorded", action="store_true", help=RECORDED_HELP)
    p.set_defaults(func=cmd_history)

    p = sub.add_parser(
        "context",
        parents=[common],
        help="what to tell an LLM about a user before it answers QUERY",
        description="Prints the block to put in an assistant's system prompt: the user's profile, "
        "then the memories relevant to QUERY it does not already list. --json adds the "
        "profile and the recalled items.",
    )
    p.add_argument("user")
    p.add_argument("query", help="what the user is asking now")
    p.add_argument("--top-k", type=int, default=5, help="how many memories to recall for the query (default 5)")
    p.add_argument(
        "--language",
        choices=["auto", "zh", "en"],
        default="auto",
        help="language of the headings (default auto: the language of what it shows)",
    )
    p.set_defaults(func=cmd_context)
