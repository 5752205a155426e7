"""The read model: ``projection status|rebuild|follow|quarantine``."""

from __future__ import annotations

import argparse
import signal
import threading
from typing import TYPE_CHECKING

from factledger.entrypoints.cli.present import count, err, out, print_json, progress, shown, when
from factledger.entrypoints.cli.session import opened

if TYPE_CHECKING:
    from factledger.application.service import LedgerService


def _status(args: argparse.Namespace, service: LedgerService) -> None:
    status = service.read_model_status()
    if args.json:
        print_json(status.to_dict())
        return
    out.print(f"position {status.position} of {status.head} (lag {status.lag}); embedder {status.embedder_id}")
    if status.quarantined:
        err.print(
            f"{count(status.quarantined, 'event')} quarantined: see `factledger projection quarantine`", style="yellow"
        )


def _quarantine(args: argparse.Namespace, service: LedgerService) -> None:
    entries = service.quarantined_events()
    if args.json:
        print_json(entries)
        return
    if not entries:
        out.print("no event is quarantined")
    for q in entries:
        out.print(
            f"{q['notification_id']:>8}  {when(q['quarantined_at'])}  "
            f"{shown(q['topic'].rpartition('.')[2])}  {shown(q['error'])}"
        )


def _rebuild(args: argparse.Namespace, service: LedgerService) -> None:
    with progress(args, "rebuilding") as bar:
        task = bar.add_task("rebuild", total=None)
        projected = service.rebuild_read_model(lambda done, total: bar.update(task, completed=done, total=total))
    status = service.read_model_status()
    if args.json:
        print_json({"events_projected": projected, **status.to_dict()})
    else:
        out.print(f"rebuilt the read model from {count(projected, 'event')}; position {status.position}")


def _follow(args: argparse.Namespace, service: LedgerService) -> None:
    stop = threading.Event()
    # SIGTERM (a supervisor stopping us) ends the loop cleanly, like Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if not args.json:
        err.print("following the event log; Ctrl-C to stop")

    def batch(projected: int) -> None:
        if args.json:
            print_json({"events_projected": projected})
        else:
            out.print(f"projected {count(projected, 'event')}")

    try:
        service.follow(stop, poll_interval=args.poll_interval, on_batch=batch)
    except KeyboardInterrupt:
        stop.set()


ACTIONS = {"rebuild": _rebuild, "status": _status, "follow": _follow, "quarantine": _quarantine}


def cmd_projection(args: argparse.Namespace) -> int:
    """Look after the read model: where it stands, what it refused, rebuild it or keep it up to date."""
    # Only following projects new vectors; the others work whatever embedder built the read model.
    with opened(args, check_embedder=args.action == "follow") as service:
        ACTIONS[args.action](args, service)
    return 0


def poll_interval(value: str) -> float:
    """``--poll-interval``: a finite number of seconds, at least MIN_POLL_INTERVAL."""
    # The projector (psycopg) only when the option is given: ``--help`` stays light.
    from factledger.projections.projector import MIN_POLL_INTERVAL

    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not seconds >= MIN_POLL_INTERVAL or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be at least {MIN_POLL_INTERVAL} seconds, got {value}")
    return seconds


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``projection``."""
    p = sub.add_parser(
        "projection",
        parents=[common],
        help="the read model: rebuild, status, follow, quarantine",
        description="rebuild: build the read model again from the events, in new tables swapped in "
        "when done; status: its position against the head; follow: keep it up to date "
        "(Ctrl-C stops); quarantine: events the read model could not store.",
    )
    p.add_argument("action", choices=list(ACTIONS))
    p.add_argument(
        "--poll-interval",
        type=poll_interval,
        default=1.0,
        # The projector's MIN_POLL_INTERVAL, written out: importing it would cost ``--help`` psycopg
        # (tests/test_fast_start.py checks the two agree).
        help="follow: seconds between polls (default 1, at least 0.1)",
    )
    p.set_defaults(func=cmd_projection)
