"""``factledger mcp``: the memory as Model Context Protocol tools (stdio, or streamable HTTP)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from functools import partial
from typing import TYPE_CHECKING

from factledger.application.access import check_tenant
from factledger.application.errors import ConfigError, InvalidInput
from factledger.entrypoints.cli.present import err

# The settings, the tenants' ledgers and the MCP server are imported when the command runs: the
# parser is built without them (fast start, tests/test_fast_start.py).
if TYPE_CHECKING:
    from factledger.entrypoints.mcp_tools import Caller
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.tenants import Tenants

API_KEY_ENV = "FACTLEDGER_API_KEY"


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """While starting a stdio server, anything written to fd 1 (by us or a child) goes to stderr:
    stdout carries the protocol, and one stray line would break the client's session."""
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _stdio_caller(args: argparse.Namespace, settings: Settings, stack: ExitStack) -> tuple[str, Callable[[], Caller]]:
    """The tenant served, and who calls: the operator, or a key (checked again at every call)."""
    from factledger.entrypoints.mcp_tools import Caller
    from factledger.infrastructure.tenants import open_key_store

    token = args.key or os.environ.get(API_KEY_ENV)
    if args.tenant and token:
        raise InvalidInput(f"give --tenant or an API key (--key, {API_KEY_ENV}), not both")
    if args.tenant:
        tenant = check_tenant(args.tenant)
        return tenant, partial(Caller.operator, tenant)
    if not token:
        raise InvalidInput(f"name the tenant (--tenant T) or give an API key (--key flk_..., {API_KEY_ENV})")
    keys = open_key_store(settings)
    stack.callback(keys.close)

    def caller() -> Caller:  # a key revoked while serving stops working at its next call
        return Caller.of_key(keys.authenticate(token))

    return caller().tenant, caller  # a wrong or revoked key stops here, with its reason


def _stdio(args: argparse.Namespace, settings: Settings, tenants: Tenants) -> int:
    from factledger.entrypoints.mcp_server import serve_stdio

    with ExitStack() as stack:
        with _stdout_to_stderr():
            tenant, caller = _stdio_caller(args, settings, stack)
            tenants.service(tenant)  # open (and create) the tenant's ledger now: errors show before serving
        if not args.quiet:
            err.print(f"factledger mcp: serving tenant {tenant!r} on stdio", style="dim")
        serve_stdio(tenants, caller)
    return 0


def _http(args: argparse.Namespace, settings: Settings, tenants: Tenants) -> int:
    from factledger.entrypoints.mcp_server import STANDALONE_PATH, serve_http
    from factledger.infrastructure.tenants import open_key_store

    if args.tenant or args.key:
        raise InvalidInput("over HTTP every request's API key names its tenant: drop --tenant / --key")
    if settings.backend == "memory":
        raise ConfigError(
            "mcp --http needs API keys another process can create: the memory backend keeps them in one "
            "process only; use PostgreSQL (unset FACTLEDGER_BACKEND)"
        )
    keys = open_key_store(settings)
    url = f"http://{settings.host}:{settings.port}{STANDALONE_PATH}"

    def ready() -> None:
        if not args.quiet:
            err.print(f"factledger mcp: listening on {url} (Authorization: Bearer flk_...)", style="dim")

    try:
        serve_http(tenants, keys, settings.host, settings.port, ready=ready)
    finally:
        keys.close()
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory tools until the client (stdio) or an interrupt (HTTP) ends it."""
    try:
        import mcp.server  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        missing = exc.name
        raise ConfigError(
            f"mcp needs the server extra: pip install 'factledger[server]' ({missing} is missing)"
        ) from None
    if getattr(args, "ledger", None):
        raise InvalidInput("mcp serves each tenant's live ledger; --ledger does not apply")
    from factledger.infrastructure.config import Settings
    from factledger.infrastructure.tenants import Tenants

    settings = Settings.load(prompts=getattr(args, "prompts", None), host=args.host, port=args.port)
    tenants = Tenants(settings)
    try:
        return _http(args, settings, tenants) if args.http else _stdio(args, settings, tenants)
    finally:
        tenants.close()


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the memory as Model Context Protocol tools (stdio, or --http)",
        description="Serves remember, recall, get_profile, memory_context, explain and forget_item as MCP "
        "tools. On stdio (the default, for a local agent such as Claude Desktop) the operator names the "
        f"tenant with --tenant, or gives an API key (--key, {API_KEY_ENV}) whose tenant and scope apply. "
        "With --http it serves streamable HTTP on http://HOST:PORT/mcp behind the API keys of "
        "`factledger serve`: each request sends Authorization: Bearer flk_...; a read key may call "
        "recall, get_profile, memory_context and explain, a write or admin key every tool.",
    )
    p.add_argument("--tenant", help="stdio: serve this tenant's memory (the local operator: every tool)")
    p.add_argument("--key", metavar="flk_...", help=f"stdio: act as this API key (default: ${API_KEY_ENV})")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument("--host", help="--http: address to listen on (FACTLEDGER_HOST, default 127.0.0.1)")
    p.add_argument("--port", type=int, help="--http: port to listen on (FACTLEDGER_PORT, default 8000)")
    p.set_defaults(func=cmd_mcp)
