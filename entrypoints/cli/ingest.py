"""Recording messages: ``ingest`` (one), ``ingest-file`` (a JSONL file) and ``demo`` (a bundled conversation)."""

from __future__ import annotations

import argparse
import json
import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from factledger.application.errors import InvalidInput
from factledger.application.validation import require_id
from factledger.entrypoints.cli.import_processes import (
    TALLIED,
    Line,
    WorkerPool,
    WorkerSetup,
    count_outcomes,
    default_processes,
    first_messages,
    line_failure,
    warm_up,
)
from factledger.entrypoints.cli.lines import file_source, line_message_id, numbered_lines, open_lines, parse_message
from factledger.entrypoints.cli.present import (
    Reading,
    count,
    describe_event,
    err,
    message_line,
    out,
    outcome_line,
    print_json,
    profile_table,
    progress,
    shown,
    styled,
)
from factledger.entrypoints.cli.session import opened, parse_time

# The commands import the application and the settings when they run: the parser is built without
# them (fast start, tests/test_fast_start.py).
if TYPE_CHECKING:
    from factledger.application.results import HistoryEntry, IngestResult
    from factledger.application.service import LedgerService
    from factledger.infrastructure.secret import InstallationSecret

logger = logging.getLogger("factledger.cli")

# Lines read before they are ingested together (``LedgerService.ingest_many`` saves them in groups).
LINES_AT_ONCE = 256
# Events this process projects at a time while its workers ingest (it must not keep them waiting).
PROJECTED_AT_ONCE = 500


def _items_extracted(result: IngestResult) -> str:
    return f"{count(result.facts_extracted, 'fact')}, {count(result.preferences_extracted, 'preference')}"


def cmd_ingest(args: argparse.Namespace) -> int:
    """Record one message and say what became of each item it held."""
    context = None
    if args.context:
        try:
            context = json.loads(args.context)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--context is not valid JSON: {exc}") from None
    timestamp = parse_time(args.timestamp, "--timestamp") if args.timestamp else None
    with opened(args) as service:
        result = service.ingest(
            args.user,
            args.text,
            session_id=args.session,
            context=context,
            message_id=args.message_id,
            timestamp=timestamp,
        )
    if args.json:
        print_json(result.to_dict())
        return 0
    if result.status != "recorded":
        out.print(f"message {shown(result.message_id)}: {result.status}")
    out.print(_items_extracted(result))
    if result.redacted:
        out.print("redacted before recording: " + ", ".join(f"{kind} {n}" for kind, n in result.redacted.items()))
    for item in result.items:
        out.print(outcome_line(item))
    return 0


@attrs.define
class _FileImport:
    """What ``ingest-file`` has done so far: counts and failed lines."""

    source: str
    secret: InstallationSecret
    lines: int = 0
    blank: int = 0
    tally: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(TALLIED, 0))
    failures: list[dict[str, Any]] = attrs.field(factory=list)

    def read(self, number: int, raw: bytes | None) -> Line | None:
        """Line ``number`` as a message to ingest; None for a blank line (counted) or a bad one
        (reported)."""
        self.lines = number
        try:
            record = parse_message(raw, number)
        except InvalidInput as exc:
            self.failed(number, exc)
            return None
        if record is None:
            self.blank += 1
            logger.info("line %d: blank, skipped", number)
            return None
        message_id = record.get("message_id")
        if message_id is None:
            message_id = line_message_id(self.source, number, raw or b"", self.secret)
        from factledger.application.ingestion import Incoming

        incoming = Incoming(
            record["user_id"],
            record["message"],
            session_id=record.get("session_id"),
            context=record.get("context"),
            message_id=message_id,
            timestamp=record["timestamp"],
        )
        return number, incoming

    def failed(self, number: int, exc: Exception) -> None:
        self.add({}, [line_failure(number, exc)])

    def add(self, tally: dict[str, int], failures: list[dict[str, Any]]) -> None:
        """Count what a batch became (here, or in a worker process)."""
        for key, value in tally.items():
            self.tally[key] += value
        for failure in failures:
            self.failures.append(failure)
            logger.info("%s", shown(failure["error"]))  # all are listed at the end; -v shows them as they come

    def summary(self, projected: int) -> dict[str, Any]:
        self.failures.sort(key=lambda failure: int(failure["line"]))
        return {
            "lines": self.lines,
            "blank_lines": self.blank,
            "ingested": self.tally["ingested"],
            "already_recorded": self.tally["already_recorded"],
            "extraction_pending": self.tally["extraction_pending"],
            "failed": len(self.failures),
            "facts_extracted": self.tally["facts_extracted"],
            "preferences_extracted": self.tally["preferences_extracted"],
            "events_projected": projected,
            "errors": self.failures,
        }


def cmd_ingest_file(args: argparse.Namespace) -> int:
    """Record every line of a JSONL file; bad lines are reported by number and the rest recorded (exit 1)."""
    path = Path(args.file)
    stream, total = open_lines(path)
    from factledger.infrastructure.config import Settings

    settings = Settings.load(prompts=getattr(args, "prompts", None))
    secret = settings.installation_secret()
    source = _source(args.source) if args.source is not None else file_source(path, secret)
    workers = args.workers or settings.bulk_workers
    processes = 1 if settings.backend == "memory" else (args.processes or default_processes())
    if settings.openai_api_key:  # --workers bounds the LLM calls in flight: each process runs its share
        processes = min(processes, workers)
    overrides: dict[str, Any] = {"bulk_workers": max(1, workers // processes)}
    run = _FileImport(source, secret)
    with (
        # first: before this process opens a connection or a thread (ADR 0034), after the warm-up (ADR 0045)
        _workers(processes, lambda: warm_up(first_messages(path), not settings.openai_api_key)) as pool,
        opened(args, inline_projection=False, **overrides) as service,
        progress(args, "ingesting") as bar,
        stream,
    ):
        task = bar.add_task("ingest", total=total)
        projecting = bar.add_task("projecting", total=None, visible=False)
        projected = 0

        def project(most: int | None = None) -> int:
            nonlocal projected
            done = service.catch_up(lambda done, total: bar.update(projecting, completed=done, total=total), most)
            projected += done
            return done

        if pool is None:
            _ingest_here(service, run, numbered_lines(stream), lambda done: bar.advance(task, done))
        else:
            pool.gated, pool.idle = not service.offline, lambda: project(most=PROJECTED_AT_ONCE)
            setup = WorkerSetup(
                {
                    **overrides,
                    "inline_projection": False,  # this process projects what they save, while they work
                    "prompts": getattr(args, "prompts", None),
                    "database_url": _database_uri(settings),
                },
                getattr(args, "ledger", None),
                logging.getLogger().level,
            )
            _ingest_in_processes(pool, setup, run, numbered_lines(stream), lambda done: bar.advance(task, done))
        bar.update(projecting, visible=True)
        project()
    summary = run.summary(projected)
    if args.json:
        print_json(summary)
    else:
        _print_file_summary(summary)
    return 1 if summary["failed"] else 0


@contextmanager
def _workers(processes: int, warm: Callable[[], None]) -> Iterator[WorkerPool | None]:
    """The worker processes of an import on several (None for one), started after ``warm`` (what
    this process does once for every worker it forks), stopped at the end."""
    if processes == 1:
        yield None
        return
    warm()
    pool = WorkerPool(processes, batch_lines=LINES_AT_ONCE)
    pool.start()
    try:
        yield pool
    finally:
        pool.close()


def _ingest_here(
    service: LedgerService, run: _FileImport, lines: Iterator[tuple[int, bytes | None]], advance: Callable[[int], None]
) -> None:
    """The import in this process: ``LINES_AT_ONCE`` lines to each ``ingest_many``."""
    pending: list[Line] = []

    def ingest_pending() -> None:
        run.add(*count_outcomes(pending, service.ingest_many([m for _, m in pending])))
        advance(len(pending))
        pending.clear()

    for number, raw in lines:
        line = run.read(number, raw)
        if line is None:  # blank or bad: nothing to wait for
            advance(1)
            continue
        pending.append(line)
        if len(pending) == LINES_AT_ONCE:
            ingest_pending()
    ingest_pending()


def _ingest_in_processes(
    pool: WorkerPool,
    setup: WorkerSetup,
    run: _FileImport,
    lines: Iterator[tuple[int, bytes | None]],
    advance: Callable[[int], None],
) -> None:
    """The import in worker processes (ADR 0034): lines are read and checked here, ingested there."""

    def done(count: int, tally: dict[str, int], failures: list[dict[str, Any]]) -> None:
        run.add(tally, failures)
        advance(count)

    pool.on_done = done
    pool.open(setup)
    for number, raw in lines:
        line = run.read(number, raw)
        if line is None:
            advance(1)
        else:
            pool.put(line)
    pool.finish()


def _print_file_summary(summary: dict[str, Any]) -> None:
    blank = f"{summary['blank_lines']} blank, " if summary["blank_lines"] else ""
    out.print(
        f"ingested {summary['ingested']} of {count(summary['lines'], 'line')} ({blank}"
        f"{summary['already_recorded']} already recorded, {summary['extraction_pending']} waiting for "
        f"retry-failed): {count(summary['facts_extracted'], 'fact')}, "
        f"{count(summary['preferences_extracted'], 'preference')}"
    )
    for failure in summary["errors"]:
        err.print(shown(failure["error"]), style="red")


# Room left in a message id (256 characters) for the line number and hash after a --source.
MAX_SOURCE_CHARS = 200


def _source(name: str) -> str:
    """``--source NAME``: what stands for the file in its lines' ids, checked as an id is."""
    source = require_id("--source", name)
    if len(source) > MAX_SOURCE_CHARS:
        raise InvalidInput(f"--source is {len(source)} characters long; the limit is {MAX_SOURCE_CHARS}")
    return source


def cmd_demo(args: argparse.Namespace) -> int:
    """Ingest the bundled conversation, then show the profile and why a fact was replaced."""
    text = resources.files("factledger.entrypoints").joinpath("demo.jsonl").read_text(encoding="utf-8")
    user = args.user or f"demo-{uuid.uuid4().hex[:6]}"
    turns = [json.loads(line) for line in text.splitlines() if line.strip()]
    results = []
    with opened(args) as service:
        for turn in turns:
            result = service.ingest(user, turn["message"], session_id=turn["session_id"], context=turn["context"])
            results.append({"message": turn["message"], **result.to_dict()})
            if not args.json:
                out.print(styled(("用户: ", "bold"), shown(turn["message"])))
                for item in result.items:
                    out.print(outcome_line(item))
        profile = service.profile(user).to_dict()
        history = list(service.history(user))
    messages = {e.fields["message_id"]: e.fields for e in history if e.event == "MessageIngested"}
    invalidations = [(e, messages.get(e.fields["message_id"])) for e in history if e.event == "FactInvalidated"]
    if args.json:
        print_json(
            {
                "user_id": user,
                "messages": results,
                "profile": profile,
                "invalidations": [
                    {**entry.to_dict(), "triggering_message": message and message["text"]}
                    for entry, message in invalidations
                ],
            }
        )
        return 0
    out.print()
    out.print(profile_table(profile))
    reading = Reading.of(history)
    for entry, message in invalidations:
        out.print(_invalidation(entry, message, reading))
    out.print(
        f"\ntry: factledger history {user}   |   factledger why {user} ID   |   factledger recall {user} 住在哪里"
    )
    return 0


def _invalidation(entry: HistoryEntry, message: dict[str, Any] | None, reading: Reading) -> str:
    return f"{describe_event(entry, reading)}\n    triggered by {message_line(message)}"


def at_least_one(text: str) -> int:
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def register(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:  # type: ignore[type-arg]
    """Add ``ingest``, ``ingest-file`` and ``demo``."""
    p = sub.add_parser(
        "ingest",
        parents=[common],
        help="record one user message",
        description="Extract facts and preferences from one message and record them as events.",
    )
    p.add_argument("--user", required=True, help="the user's id")
    p.add_argument("--session", help="the session id")
    p.add_argument("--context", help='earlier turns as JSON: [{"role": "assistant", "content": "..."}]')
    p.add_argument(
        "--message-id",
        help="the message's id: sending it again with the same text records nothing (idempotent retries); "
        "with another text it is refused (exit 2)",
    )
    p.add_argument("--timestamp", metavar="TIME", help="when the message was sent (ISO 8601; default now)")
    p.add_argument("text", help="the message text")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "ingest-file",
        parents=[common],
        help="record every message of a JSONL file",
        description='Lines: {"user_id", "message", "session_id"?, "context"?, "timestamp"?, '
        '"message_id"?}. A line without message_id gets SOURCE:LINE:HASH, SOURCE being the '
        "file's name and a hash of its full path, so running the same file again (after a crash, "
        "or after lines were appended) records each line once, while a file of the same name "
        "in another folder is another file. Blank lines are counted and skipped; bad lines are "
        "reported by number; the rest is ingested. Exit 1 if any line failed.",
    )
    p.add_argument("file", help="JSONL file, or - for standard input")
    p.add_argument(
        "--source",
        metavar="NAME",
        help="name the file in its lines' ids instead of its path: the same NAME is the same file "
        "wherever it lies (a file moved since an interrupted run; standard input); the file's bare "
        "name continues an import an earlier version began, whose ids were NAME:LINE:HASH (ADR 0026)",
    )
    p.add_argument(
        "--workers",
        type=at_least_one,
        metavar="N",
        help="with an LLM: users extracted at once, each user's lines in order "
        "(default FACTLEDGER_BULK_WORKERS, 8; the offline extractor uses one)",
    )
    p.add_argument(
        "--processes",
        type=at_least_one,
        metavar="N",
        help="worker processes ingesting at once, each user's lines in one of them, in order "
        "(default: the number of cores; with an LLM at most --workers, which they share; "
        "1 ingests in this process; ADR 0034)",
    )
    p.set_defaults(func=cmd_ingest_file)

    p = sub.add_parser("demo", parents=[common], help="ingest a short bundled Chinese conversation and show the result")
    p.add_argument("--user", help="user id to use (default: a fresh demo-XXXXXX)")
    p.set_defaults(func=cmd_demo)


def _database_uri(settings: Any) -> str:
    from factledger.infrastructure.bootstrap import database_uri

    return database_uri(settings)
