"""``factledger serve`` (the HTTP API) and ``factledger keys`` (the API keys of its tenants)."""

from __future__ import annotations

import argparse
import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from factledger.application.access import KeyStore, Scope
from factledger.application.errors import ConfigError
from factledger.entrypoints.cli.present import err, out, print_json, shown, styled, table, when


@contextmanager
def key_store() -> Iterator[KeyStore]:
    """The installation's key store, closed afterwards."""
    # Imported when a command runs: the parser is built without psycopg (tests/test_fast_start.py).
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.tenants import open_key_store

    keys = open_key_store(Settings.load())
    try:
        yield keys
    finally:
        keys.close()


def cmd_keys_create(args: argparse.Namespace) -> int:
    """Create a key; its secret is printed once, here, and stored only as a hash."""
    with key_store() as keys:
        issued = keys.create(args.tenant, Scope.parse(args.scope), args.label or "")
    if args.json:
        print_json(issued.to_dict())
        return 0
    out.print(issued.token, soft_wrap=True, highlight=False)
    if not args.quiet:
        err.print(
            f"key {issued.key.key_id} for tenant {shown(issued.key.tenant)}, scope {issued.key.scope.label}: "
            "the line above is its only copy (send it as `Authorization: Bearer <key>`)",
            style="dim",
        )
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    """List keys (never their secrets)."""
    with key_store() as keys:
        listed = keys.list(args.tenant)
    if args.json:
        print_json([k.to_dict() for k in listed])
        return 0
    if not listed:
        out.print("no API keys" + (f" for tenant {shown(args.tenant)}" if args.tenant else ""))
        return 0
    rows = [
        (
            k.key_id,
            shown(k.tenant),
            k.scope.label,
            shown(k.label) or "—",
            when(k.created_at),
            styled(("revoked " + when(k.revoked_at), "red")) if k.revoked_at else styled(("active", "green")),
            when(k.last_used_at),
        )
        for k in listed
    ]
    out.print(table("API keys", ("id", "tenant", "scope", "label", "created", "state", "last used"), rows))
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    """Revoke a key for good: every request with it is refused (401) from now on."""
    with key_store() as keys:
        key = keys.revoke(args.key_id)
    if args.json:
        print_json(key.to_dict())
    else:
        out.print(styled(("revoked", "red"), f" key {key.key_id} of tenant {shown(key.tenant)}"))
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the HTTP API on uvicorn until interrupted: in this process, or in ``--workers N``."""
    try:
        import uvicorn

        from factledger.entrypoints.http import create_app
    except ImportError as exc:
        missing = exc.name
        raise ConfigError(
            f"serve needs the server extra: pip install 'factledger[server]' ({missing} is missing)"
        ) from None
    from factledger.infrastructure.config import Settings

    overrides: dict[str, Any] = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = Settings.load(**overrides)
    workers = args.workers
    if workers < 1:
        raise ConfigError(f"--workers must be 1 or more, not {workers}")
    if workers > 1 and settings.backend == "memory":
        raise ConfigError(
            "--workers needs PostgreSQL: the in-memory backend keeps its data in one process (use --workers 1)"
        )
    if not args.quiet:
        where = "DATABASE_URL" if settings.database_url else f"embedded PostgreSQL in {settings.home}"
        processes = f", {workers} worker processes" if workers > 1 else ""
        err.print(
            f"factledger serve on http://{settings.host}:{settings.port} ({where}{processes}); docs at /docs",
            style="dim",
        )
    level = "debug" if args.verbose >= 2 else "info" if args.verbose else "warning"
    # uvicorn re-raises SIGTERM after its graceful shutdown; with the default handler that kills
    # the process before its exit hooks run (and an embedded server would keep running).
    signal.signal(signal.SIGTERM, lambda *_: None)
    where_to = {"host": settings.host, "port": settings.port, "log_level": level, "access_log": args.verbose >= 1}
    if workers == 1:
        uvicorn.run(create_app(settings), **where_to)
        return 0
    _serve_on_workers(uvicorn, settings, overrides, workers, where_to)
    return 0


def _serve_on_workers(
    uvicorn: Any, settings: Any, overrides: dict[str, Any], workers: int, where_to: dict[str, Any]
) -> None:
    """uvicorn's supervisor: this process binds the socket and starts ``workers`` processes that
    accept on it, and starts a new one when one dies (ADR 0039). The database is started here,
    once, before them (the embedded server included: they attach to it and never stop it; it
    stops when this process, its last client, exits after them)."""
    from factledger.entrypoints.http.app import SERVED_SETTINGS
    from factledger.infrastructure.bootstrap import database_uri
    from factledger.infrastructure.server_state import open_server_state
    from factledger.infrastructure.tenants import open_key_store

    overrides["database_url"] = database_uri(settings)
    open_key_store(settings).close()  # the shared tables, created once before the workers race for them
    state = open_server_state(settings)
    if state is not None:
        state.close()
    os.environ[SERVED_SETTINGS] = json.dumps(overrides)
    uvicorn.run("factledger.entrypoints.http.app:served_app", factory=True, workers=workers, **where_to)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "serve",
        parents=[common],
        help="run the HTTP API (tenants, API keys, OpenAPI at /docs)",
        description="Serves the memory over HTTP: every request carries an API key "
        "(`factledger keys create --tenant T`) and acts on that tenant's users only. "
        "OpenAPI at /docs, health at /healthz and /readyz, Prometheus metrics at /metrics. "
        "Settings: FACTLEDGER_HOST, FACTLEDGER_PORT, FACTLEDGER_RATE_LIMIT, FACTLEDGER_MAX_BODY_BYTES, "
        "FACTLEDGER_READY_MAX_LAG (see docs/configuration.md).",
    )
    p.add_argument("--host", help="address to listen on (FACTLEDGER_HOST; default 127.0.0.1)")
    p.add_argument("--port", type=int, help="port to listen on (FACTLEDGER_PORT; default 8000)")
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes answering on the one port (default 1; N > 1 needs PostgreSQL: they share "
        "keys, rate limits, replays and console sessions through it; a dead one is replaced)",
    )
    p.set_defaults(func=cmd_serve)

    keys = sub.add_parser(
        "keys",
        parents=[common],
        help="create, list and revoke the API keys of the HTTP and MCP servers",
        description="An API key belongs to one tenant and has a scope: read (profile, recall, context, "
        "history, why, export, usage), write (also ingest, invalidate, restate, forget a user) or admin "
        "(also replay, diff of all users, promote). Keys are stored hashed; the secret is shown once.",
    )
    actions = keys.add_subparsers(dest="keys_command", required=True, metavar="ACTION")
    p = actions.add_parser("create", parents=[common], help="create a key (printed once)")
    p.add_argument("--tenant", required=True, help="the tenant the key acts for (lower-case, ≤ 20 characters)")
    p.add_argument("--scope", default="write", choices=["read", "write", "admin"], help="default: write")
    p.add_argument("--label", help="a note for operators (who has the key)")
    p.set_defaults(func=cmd_keys_create)
    p = actions.add_parser("list", parents=[common], help="list keys (never their secrets)")
    p.add_argument("--tenant", help="only this tenant's keys")
    p.set_defaults(func=cmd_keys_list)
    p = actions.add_parser("revoke", parents=[common], help="revoke a key for good")
    p.add_argument("key_id", help="the key's id (the part after flk_, before the next _)")
    p.set_defaults(func=cmd_keys_revoke)
