"""Named ledgers: ``replay`` into one, list them (``ledgers``), compare two (``diff``), ``promote`` one."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

import attrs

from factledger.application.errors import InvalidInput
from factledger.entrypoints.cli.import_processes import default_processes, warm_up
from factledger.entrypoints.cli.ingest import at_least_one
from factledger.entrypoints.cli.present import (
    NOTHING,
    count,
    human,
    out,
    print_json,
    progress,
    quoted,
    shown,
    styled,
    table,
)
from factledger.entrypoints.cli.replay_processes import ReplaySetup, replay_pool
from factledger.entrypoints.cli.session import opened

if TYPE_CHECKING:
    from factledger.application.replay import ReplayReport


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-decide the recorded messages with another extractor into another ledger (resumable)."""
    if args.dry_run:
        return _estimate_replay(args)
    processes = _replay_processes(args)
    report = _replay_here(args) if processes == 1 else _replay_in_processes(args, processes)
    if args.json:
        print_json(report.to_dict())
    else:
        state = "finished" if report.finished else "stopped early: run the same command again to resume"
        out.print(
            f"replayed {count(report.replayed, 'message')} into {report.into} with {report.extractor_id} "
            f"({report.already_there} already there), carried {count(report.corrections, 'operator correction')}"
            f" ({report.corrections_without_fact} with nothing to correct there); {state}"
        )
    return 0


def _estimate_replay(args: argparse.Namespace) -> int:
    with opened(args, check_embedder=False) as service:
        estimate = service.estimate_replay(args.extractor, rules=args.rules, prompts=args.prompts, users=args.user)
    if args.json:
        print_json(estimate.to_dict())
    else:
        out.print(
            f"{count(estimate.messages, 'message')}; {estimate.llm_messages} would reach the LLM in "
            f"{count(estimate.llm_calls, 'call')}, about {count(estimate.input_tokens, 'input token')} "
            f"({estimate.extractor_id})"
        )
    return 0


def _replay_processes(args: argparse.Namespace) -> int:
    """``--processes``, or the cores; 1 for the in-memory backend and for ``--limit`` (a count of
    messages in the source's order, which shares replaying at once have not)."""
    from factledger.infrastructure.config import Settings

    settings = Settings.load(prompts=args.prompts)
    if args.limit is not None:
        if args.processes not in (None, 1):
            raise InvalidInput(
                "--limit stops after a count of messages in the source's order: use it with --processes 1"
            )
        return 1
    if settings.backend == "memory":
        return 1
    processes = args.processes or default_processes()
    if settings.openai_api_key:  # the LLM calls in flight stay bounded by FACTLEDGER_BULK_WORKERS
        processes = min(processes, settings.bulk_workers)
    return processes


def _replay_arguments(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "into": args.into,
        "extractor": args.extractor,
        "rules": args.rules,
        "prompts": args.prompts,
        "users": args.user,
    }


def _replay_here(args: argparse.Namespace) -> ReplayReport:
    with opened(args, check_embedder=False) as service, progress(args, f"replaying into {args.into}") as bar:
        task = bar.add_task("replay", total=None)
        return service.replay(
            **_replay_arguments(args),
            limit=args.limit,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )


def _replay_in_processes(args: argparse.Namespace, processes: int) -> ReplayReport:
    """The replay on ``processes`` workers (ADR 0041), then, here, what no share did (nothing, when
    every worker finished): it projects the target and says where the ledger's position stands."""
    from factledger.infrastructure.bootstrap import database_uri
    from factledger.infrastructure.config import Settings

    counts: dict[int, tuple[int, int]] = {}
    shown_progress: list[Callable[[], None]] = []

    def on_progress(worker: int, done: int, total: int) -> None:
        counts[worker] = (done, total)
        for show in shown_progress:
            show()

    warm_up((), offline=True)  # what every forked worker would otherwise do itself (ADR 0045)
    pool, reports = replay_pool(processes, on_progress)  # first: before this process opens a connection
    try:
        with (
            opened(args, check_embedder=False) as service,
            progress(args, f"replaying into {args.into} on {processes} processes") as bar,
        ):
            task = bar.add_task("replay (each process reads every message)", total=None)
            shown_progress.append(
                lambda: bar.update(
                    task, completed=sum(d for d, _ in counts.values()), total=sum(t for _, t in counts.values())
                )
            )
            settings = Settings.load(prompts=args.prompts)
            overrides = {
                "prompts": args.prompts,
                "database_url": database_uri(settings),
                "inline_projection": False,
                "bulk_workers": max(1, settings.bulk_workers // processes),
            }
            pool.open(
                ReplaySetup(overrides, args.ledger, _replay_arguments(args), processes, logging.getLogger().level)
            )
            pool.finish()
            rest = service.replay(**_replay_arguments(args))
    finally:
        pool.close()
    return _merged(rest, reports)


def _merged(rest: ReplayReport, shares: list[dict[str, Any]]) -> ReplayReport:
    """The report of a replay on several processes: the shares' counts added to what the command did."""
    summed = (
        "replayed",
        "already_there",
        "skipped_users",
        "refused",
        "corrections",
        "corrections_without_fact",
        "events_projected",
    )
    totals = {name: getattr(rest, name) + sum(share[name] for share in shares) for name in summed}
    return attrs.evolve(rest, **totals)


def cmd_ledgers(args: argparse.Namespace) -> int:
    """Every ledger with its extractor and event count."""
    with opened(args, check_embedder=False) as service:
        rows = service.ledgers()
    if args.json:
        print_json(rows)
        return 0
    cells = [
        (
            shown(r["name"]),
            shown(r["schema"]),
            shown(r["extractor_id"] or "(as ingested)"),
            str(r["events"]),
            human(r["replay_position"]),
            NOTHING if r["created_at"] is None else f"{datetime.fromisoformat(r['created_at']):%Y-%m-%d %H:%M}",
        )
        for r in rows
    ]
    out.print(
        table(
            "ledgers",
            ("name", "schema", "extractor", "events", "replayed\nup to", "created"),
            cells,
            text={"extractor"},
            numbers={"events", "replayed\nup to"},
        )
    )
    return 0


def _item(item: Mapping[str, Any]) -> str:
    return f" {item['type']} {quoted(item['content'])} [{shown(item['category'])}]"


def cmd_diff(args: argparse.Namespace) -> int:
    """Ledger A against ledger B, per user: what only one holds and what changed."""
    args.ledger = args.a
    with opened(args, check_embedder=False) as service:
        report = service.diff(args.b, user_id=args.user).to_dict()
    if args.json:
        print_json(report)
        return 0
    rows = [
        (shown(row["user_id"]), str(row["only_in_a"]), str(row["only_in_b"]), str(row["changed"]), str(row["same"]))
        for row in report["summary"]
    ]
    out.print(
        table(
            f"{shown(report['a'])} (A) vs {shown(report['b'])} (B)",
            ("user", "only in A", "only in B", "changed", "same"),
            rows,
            text={"user"},
            numbers={"only in A", "only in B", "changed", "same"},
        )
    )
    for user in report["users"]:
        who = f"{shown(user['user_id'])}: "
        for item in user["only_in_a"]:
            out.print(styled(who, ("- A only", "red"), _item(item)))
        for item in user["only_in_b"]:
            out.print(styled(who, ("+ B only", "green"), _item(item)))
        for change in user["changed"]:
            what = ", ".join(f"{k} {human(a)} → {human(b)}" for k, (a, b) in change["changes"].items())
            out.print(styled(who, ("~ changed", "yellow"), f" {quoted(change['a']['content'])}: {what}"))
    return 0


def cmd_promote(args: argparse.Namespace) -> int:
    """Make a ledger the live one, atomically; the old live one is kept under another name."""
    with opened(args, check_embedder=False) as service:
        kept = service.promote(args.name, force=args.force)
    if args.json:
        print_json({"live": args.name, "previous_live": kept})
    else:
        out.print(f"{shown(args.name)} is now the live ledger; the previous one is kept as {shown(kept)}")
    return 0


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``replay``, ``ledgers``, ``diff`` and ``promote``."""
    p = sub.add_parser(
        "replay",
        parents=[common],
        help="re-decide recorded messages into another ledger",
        description="Feeds the recorded messages, in order, with their times, sessions and context, "
        "through another extractor (--extractor, --rules, or --prompts for the llm "
        "extractor) into the ledger NAME; the source is never written. "
        "Run again to resume after an interruption.",
    )
    p.add_argument("--into", required=True, metavar="NAME", help="target ledger (created if missing)")
    p.add_argument("--extractor", choices=["offline", "llm"], help="extractor (default: the active one)")
    p.add_argument(
        "--rules",
        metavar="PATH",
        help="a modified offline rule set (TOML; see factledger.infrastructure.rule_overrides)",
    )
    p.add_argument("--user", action="append", help="only this user (repeatable)")
    p.add_argument("--limit", type=int, help="stop after this many messages (resume later; one process)")
    p.add_argument(
        "--processes",
        type=at_least_one,
        metavar="N",
        help="worker processes replaying at once, each a share of the users (by a hash of the id), "
        "each user's messages in order in one of them (default: the number of cores; with an LLM at "
        "most FACTLEDGER_BULK_WORKERS; 1 replays in this process; ADR 0041)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="only say how many messages would reach the LLM and the tokens"
    )
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("ledgers", parents=[common], help="list ledgers with their extractor and event counts")
    p.set_defaults(func=cmd_ledgers)

    p = sub.add_parser("diff", parents=[common], help="compare two ledgers per user")
    p.add_argument("a", help="ledger A (e.g. live)")
    p.add_argument("b", help="ledger B")
    p.add_argument("--user", help="only this user")
    p.set_defaults(func=cmd_diff)

    p = sub.add_parser(
        "promote",
        parents=[common],
        help="make a replayed ledger the live one (atomically)",
        description="Refused when the ledger lost an operator's correction the live one has (a restated fact "
        "missing, or a fact marked wrong active again); --force promotes it anyway.",
    )
    p.add_argument("name")
    p.add_argument("--force", action="store_true", help="promote even if it lost operator corrections")
    p.set_defaults(func=cmd_promote)
