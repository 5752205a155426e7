"""``replay --processes N``: a replay whose users are split into N shares, each replayed by its own
worker process (ADR 0041).

Every worker opens the source ledger itself (its own connections, on the server the command
opened, the embedded one included), reads the source's history from its share's position and
replays the messages of its share's users (``shares.share_of``, the hash ``ingest-file
--processes`` uses), in order, into the target; each share saves its own position after every
group, and the ledger's position is the lowest of the shares' (a watermark). A worker killed
with -9, or the command, loses at most the group in flight, which a re-run replays again and the
target refuses as already recorded (by message id): every decision is recorded once.

The workers report progress (source messages looked at) on the pipe ``WorkerPool`` reads; the
first error one reports, or a worker's death, stops the others after the group they are in.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import attrs

from factledger.application.errors import FactledgerError
from factledger.entrypoints.cli.import_processes import WorkerPool, importable, next_batch

#: every this many source messages a worker reports progress and checks that it should go on
CHECK_EVERY = 64


@attrs.frozen
class ReplaySetup:
    """What a worker needs: settings overrides (the server's URI among them), the source ledger's
    name, ``replay``'s arguments, and the log level."""

    overrides: dict[str, Any]
    ledger: str | None
    replay: dict[str, Any]
    processes: int
    log_level: int


class _Stopped(Exception):
    """Told to stop (another worker failed, or the command is gone): end after the saved group."""


def run_replay_worker(index: int, inbox: Any, reports: Connection, stop: Any) -> None:
    """A worker's life: take its ``ReplaySetup``, replay its share of the users, report progress
    and its ``ReplayReport``; the first error ends it, reported."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the command decides (it stops us)
    try:
        setup = next_batch(inbox, stop)
        if not isinstance(setup, ReplaySetup):
            return  # stopped before the command opened the ledger
        report = _replay_share(index, setup, reports, stop)
    except _Stopped:
        return
    except FactledgerError as exc:
        kind = type(exc) if importable(type(exc)) else FactledgerError
        reports.send(("error", index, None, kind, str(exc)))
        return
    except Exception:
        reports.send(("crash", index, None, None, traceback.format_exc()))
        return
    reports.send(("done", index, index, "report", report.to_dict()))
    reports.send(("finished", index))


def _replay_share(index: int, setup: ReplaySetup, reports: Connection, stop: Any) -> Any:
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")  # spawned: nothing configured yet
    logging.getLogger().setLevel(setup.log_level)
    from factledger.infrastructure.bootstrap import open_ledger
    from factledger.infrastructure.config import Settings

    parent = multiprocessing.parent_process()
    # like the command, the source is opened whatever embedder built its read model (replay never reads it)
    service = open_ledger(
        Settings.load(**setup.overrides), ledger=setup.ledger, check_embedder=False, warn_if_offline=False
    )
    try:
        return service.replay(
            **setup.replay, share=(index, setup.processes), progress=_reporter(index, reports, stop, parent)
        )
    finally:
        service.close()


def _reporter(index: int, reports: Connection, stop: Any, parent: Any) -> Callable[[int, int], None]:
    """The progress callback of a worker: every ``CHECK_EVERY`` messages, report and check that
    neither a stop nor the command's death says to end (the position saved is kept)."""

    def progress(done: int, total: int) -> None:
        if done % CHECK_EVERY and done != total:
            return
        if stop.is_set() or (parent is not None and not parent.is_alive()):
            raise _Stopped
        reports.send(("done", index, index, "progress", done, total))

    return progress


def replay_pool(processes: int, on_progress: Callable[[int, int, int], None]) -> tuple[WorkerPool, list[Any]]:
    """The workers of a replay on ``processes`` (started; they wait for their ``ReplaySetup``), and
    the list their ``ReplayReport``s arrive in. ``on_progress(worker, done, total)``."""
    finished: list[Any] = []

    def done(worker: int, kind: str, *what: Any) -> None:
        if kind == "progress":
            on_progress(worker, *what)
        else:
            finished.append(what[0])

    pool = WorkerPool(processes, on_done=done, work=run_replay_worker, job="the replay", unlocated="replaying")
    pool.start()
    return pool, finished
