"""``ingest-file --processes N``: a file's lines ingested by N worker processes (ADR 0034).

The parent reads and checks the lines (bad ones are reported by number as
before), gives each user to one worker by a stable hash of the user id, and
sends each worker its lines in batches, in file order. A worker opens its own
ledger (its own connections) on the server the parent opened, the embedded one
included, and ingests its batches with ``ingest_many``: a user's messages stay
in order, in one process, on that user's memory, so the memories are those of
one process. Reports come back on a pipe per worker: lines done (one progress
bar), the counts and the lines that failed.

The first error a worker meets (one that stops ``ingest_many`` itself, not a
bad line) stops the import: "first" is the first report the parent receives,
in time; the other workers end after the batch they are ingesting (its groups
are saved whole or not at all), and the error is raised naming its line and
worker. A worker that dies (kill -9) stops the import the same way; a parent
that dies makes its workers end after their batch. Whatever was stopped, the
lines saved keep their ids (``SOURCE:LINE:HASH``), so running the same command
again records every other line once.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing
import os
import pickle
import queue
import signal
import threading
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

import attrs

from factledger.application.errors import FactledgerError
from factledger.application.shares import share_of

# The CLI's parser imports this module: what ingests is imported when a worker runs (fast start).
if TYPE_CHECKING:
    from factledger.application.ingestion import Incoming
    from factledger.application.results import IngestResult

logger = logging.getLogger("factledger.cli")

Line = tuple[int, "Incoming"]  # (line number, message)
TALLIED = ("ingested", "already_recorded", "extraction_pending", "facts_extracted", "preferences_extracted")
#: batches waiting for a worker: enough to keep it busy, few enough to bound memory (and what a kill drops)
QUEUED_BATCHES = 2
# What every worker imports to open its ledger and read messages (the package, the database's
# clients, the offline rules: ~0.4 s of CPU each). Imported by the parent before it forks, once,
# the workers share it (copy-on-write) instead of importing it each; the parent needs it anyway.
PRELOADED = (
    "factledger.infrastructure.bootstrap",
    "factledger.infrastructure.offline.extractor",
    "factledger.infrastructure.offline.judge",
    "factledger.infrastructure.offline.embedder",
)
POLL_S = 0.2


class ImportInterrupted(FactledgerError):
    """A worker of ``ingest-file --processes`` died: what was saved stays, a re-run records the rest."""


def default_processes() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: lines of the file the parent reads through the offline rules before it forks (``warm_up``)
WARM_UP_LINES = 32


def warm_up(samples: Sequence[str], offline: bool) -> None:
    """Before the workers fork: import what a worker runs and, with the offline rules, run them
    on ``samples`` (the file's first messages), so that the rules these texts need are compiled
    here, once, and every forked worker starts with them (ADR 0045). Nothing here opens a
    connection or starts a thread; the rules are pure functions of their texts, so what a
    worker decides does not change. A failure here costs speed only: the worker compiles
    what it needs itself."""
    from factledger.application import service  # noqa: F401  (what a worker's ledger runs)
    from factledger.infrastructure import bootstrap

    if not offline:
        return
    from factledger.infrastructure.config import Settings

    try:
        extractor, judge, _ = bootstrap.offline_parts(Settings())
        facts: list[str] = []
        for text in samples:
            extraction = extractor.extract(text, (), tuple(facts[-4:]))
            for fact in extraction.facts:
                for known in facts[-4:]:
                    judge.judge(known, fact.text)
                facts.append(fact.text)
    except Exception:  # a warm-up only: the workers do the real work, and meet any error there
        logger.debug("warming the offline rules up failed", exc_info=True)


def first_messages(path: Any, most: int = WARM_UP_LINES) -> list[str]:
    """The ``message`` of the first ``most`` lines of the JSONL file ``path`` that have one (none
    from standard input: it is read once)."""
    import json

    if str(path) == "-":
        return []
    found: list[str] = []
    try:
        with open(path, "rb") as lines:
            for _, raw in zip(range(most), lines, strict=False):
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("message"), str):
                    found.append(record["message"])
    except OSError:
        return []
    return found


def line_failure(number: int, exc: Exception) -> dict[str, Any]:
    """A failed line as the summary lists it."""
    message = str(exc) if str(exc).startswith("line ") else f"line {number}: {exc}"
    return {"line": number, "error": message}


def count_outcomes(
    batch: Sequence[Line], outcomes: Sequence[IngestResult | FactledgerError]
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """What ``ingest_many`` made of a batch: the counts, and the lines that failed."""
    tally = dict.fromkeys(TALLIED, 0)
    failures = []
    for (number, _), outcome in zip(batch, outcomes, strict=True):
        if isinstance(outcome, FactledgerError):
            failures.append(line_failure(number, outcome))
        elif outcome.status == "duplicate":
            tally["already_recorded"] += 1
        else:
            tally["ingested"] += 1
            tally["extraction_pending"] += outcome.status == "extraction_failed"
            tally["facts_extracted"] += outcome.facts_extracted
            tally["preferences_extracted"] += outcome.preferences_extracted
    return tally, failures


@attrs.frozen
class WorkerSetup:
    """What a worker needs to open the parent's ledger: settings overrides (the server's URI
    among them) and the ledger's name; the rest comes from the environment it inherits."""

    overrides: dict[str, Any]
    ledger: str | None
    log_level: int


def run_worker(index: int, inbox: Any, reports: Connection, stop: Any) -> None:
    """A worker's life: take its ``WorkerSetup`` (the first item of its inbox), open the ledger,
    ingest batches until None (or ``stop``, or the parent's death), report each; the first error
    ends it, reported."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent decides (it stops us)
    batch: Sequence[Line] | None = None
    try:
        setup = next_batch(inbox, stop)
        if not isinstance(setup, WorkerSetup):
            return  # stopped before the parent opened the ledger
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # spawned: nothing configured yet
        logging.getLogger().setLevel(setup.log_level)
        from factledger.infrastructure.bootstrap import open_ledger
        from factledger.infrastructure.config import Settings

        service = open_ledger(Settings.load(**setup.overrides), ledger=setup.ledger, warn_if_offline=False)
        try:
            while (batch := next_batch(inbox, stop)) is not None:
                tally, failures = count_outcomes(batch, service.ingest_many([m for _, m in batch]))
                reports.send(("done", index, len(batch), tally, failures))
        finally:
            service.close()
    except FactledgerError as exc:
        kind = type(exc) if importable(type(exc)) else FactledgerError
        reports.send(("error", index, batch[0][0] if batch else None, kind, str(exc)))
        return
    except Exception:
        reports.send(("crash", index, batch[0][0] if batch else None, None, traceback.format_exc()))
        return
    reports.send(("finished", index))


def importable(kind: type) -> bool:
    """Whether the parent can name this class (it is sent by reference)."""
    try:
        pickle.dumps(kind)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def next_batch(inbox: Any, stop: Any) -> Any:
    """The next batch; None at the end, when told to stop, or when the parent is gone."""
    parent = multiprocessing.parent_process()
    while not stop.is_set():
        if parent is not None and not parent.is_alive():
            logger.warning("the import's parent process is gone: this worker stops")
            return None
        try:
            return inbox.get(timeout=POLL_S * 5)
        except queue.Empty:
            continue
    return None


@attrs.define
class _Worker:
    process: BaseProcess
    inbox: Any
    reports: Connection
    waiting: list[Line] = attrs.field(factory=list)  # lines read for it, not sent yet
    finished: bool = False


@attrs.define
class WorkerPool:
    """The parent's side: routes lines to workers, collects their reports, stops them.

    ``on_done(lines, tally, failures)`` is called for every batch a worker reports.
    ``gated``: send one line alone first and the rest only once it is done (with an LLM, a
    wrong key is then met by one call, not one per worker).
    """

    processes: int
    on_done: Any = None
    #: work for the parent while it waits for reports (it projects what the workers saved)
    idle: Any = None
    gated: bool = False
    batch_lines: int = 256
    #: what a worker runs: ``(index, inbox, reports, stop)``; ``replay --processes`` gives its own
    work: Any = run_worker
    #: the job's name in what the pool raises, and where an error met before any line happened
    job: str = "the import"
    unlocated: str = "opening the ledger"
    workers: list[_Worker] = attrs.field(factory=list)
    stop: Any = None
    first_error: FactledgerError | None = None
    _first_sent: bool = False

    def start(self) -> None:
        """Start the workers; they wait for ``open``. Forked when this process holds no other
        thread (and, called before the ledger is opened, no connection), after importing
        ``PRELOADED``: a worker then starts without importing anything again; otherwise a fresh
        interpreter (spawn)."""
        alone = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
        if alone:
            for name in PRELOADED:
                importlib.import_module(name)
            alone = threading.active_count() == 1  # should an import ever start a thread: spawn
        context: Any = multiprocessing.get_context("fork" if alone else "spawn")
        self.stop = context.Event()
        for index in range(self.processes):
            inbox = context.Queue(QUEUED_BATCHES)
            inbox.cancel_join_thread()  # a dead worker's queue must not hold the parent at exit
            ours, theirs = context.Pipe(duplex=False)
            process = context.Process(
                target=self.work, args=(index, inbox, theirs, self.stop), name=f"fl-worker-{index}", daemon=True
            )
            process.start()
            theirs.close()
            self.workers.append(_Worker(process, inbox, ours))

    def open(self, setup: Any) -> None:
        """Tell every worker which ledger to open (a ``WorkerSetup``, or what ``work`` takes): the
        parent has opened it, so the server runs."""
        for worker in self.workers:
            self._put(worker, setup)

    def put(self, line: Line) -> None:
        """Queue a line for its user's worker; send the worker a batch when it has one."""
        worker = self.workers[share_of(line[1].user_id, self.processes)]
        worker.waiting.append(line)
        if (not self._first_sent and self.gated) or len(worker.waiting) >= self.batch_lines:
            self._send(worker)
        self.poll(0)

    def finish(self) -> None:
        """Send what is left and the end; wait until every worker has reported its last batch."""
        for worker in self.workers:
            if worker.waiting:
                self._send(worker)
        for worker in self.workers:
            self._put(worker, None)
        while not all(w.finished for w in self.workers):
            self.poll(0 if self.idle and self.idle() else POLL_S)

    def _send(self, worker: _Worker) -> None:
        if self._first_sent:
            while self.gated:  # the first line is in flight: the others wait for its answer
                self.poll(POLL_S)
        self._first_sent = True
        batch, worker.waiting = worker.waiting, []
        self._put(worker, batch)

    def _put(self, worker: _Worker, batch: Any) -> None:
        while True:
            try:
                worker.inbox.put(batch, timeout=POLL_S)
                return
            except queue.Full:
                self.poll(0 if self.idle and self.idle() else POLL_S / 10)

    def poll(self, timeout: float) -> None:
        """Take the reports that have come (waiting up to ``timeout`` for one); raise the first
        error a worker reported, or ``ImportInterrupted`` when one died."""
        reports: dict[Any, _Worker] = {w.reports: w for w in self.workers if not w.finished}
        ended: dict[Any, _Worker] = {w.process.sentinel: w for w in self.workers if not w.finished}
        for ready in wait([*reports, *ended], timeout):
            worker = reports.get(ready) or ended[ready]
            while not worker.finished and worker.reports.poll():
                self._take(worker)
            if ready in ended and not worker.finished:
                self._died(worker)

    def _take(self, worker: _Worker) -> None:
        try:
            report = worker.reports.recv()
        except (EOFError, OSError):
            self._died(worker)
            return
        if report[0] == "done":
            self.gated = False
            self.on_done(*report[2:])
        elif report[0] == "finished":
            worker.finished = True
        else:
            worker.finished = True
            self._failed(*report)

    def _failed(self, kind: str, index: int, line: int | None, error_type: Any, message: str) -> None:
        at = f"line {line}" if line is not None else self.unlocated
        if kind == "crash":
            raise ImportInterrupted(f"worker {index} failed at {at} ({self._stopped()}):\n{message}")
        error = error_type.__new__(error_type)  # its own kind (the exit status), whatever its __init__ takes
        Exception.__init__(error, f"{at} (worker {index}): {message} ({self._stopped()})")
        raise error

    def _died(self, worker: _Worker) -> None:
        worker.finished = True
        worker.process.join()
        code = worker.process.exitcode or 0
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        raise ImportInterrupted(f"worker {self.workers.index(worker)} ended ({how}) ({self._stopped()})")

    def _stopped(self) -> str:
        self.stop.set()
        return f"{self.job} stopped; what was saved stays saved: run the same command again to record the rest once"

    def close(self) -> None:
        """Stop the workers (after the batch each is ingesting) and wait for them to end."""
        self.stop.set()
        for worker in self.workers:
            try:
                while worker.process.is_alive():
                    worker.process.join(POLL_S)
            except KeyboardInterrupt:
                worker.process.terminate()
                worker.process.join()
            worker.inbox.close()
            worker.reports.close()
